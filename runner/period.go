package runner

import (
	"cmp"
	"context"
	"strconv"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// PeriodKey returns the period key (Config.Period) of the scheduled tick
// nearest t, for triggers that do not say which tick they fire for: the
// ticks are offset + k·every since the Unix epoch, and the key is the
// tick's time in RFC 3339, UTC ("2026-11-23T10:00:00Z"). It rounds, where
// a floor would not do: a host whose trigger fires, or whose clock runs,
// up to every/2 early or less than every/2 late gives the same key as a
// host on time, while one a second early would floor to the tick before. It reads no clock itself: the caller passes time.Now(), the only
// wall-clock reading leasehold makes. every must be positive.
func PeriodKey(t time.Time, every, offset time.Duration) string {
	if every <= 0 {
		panic("runner: PeriodKey: every must be positive, not " + every.String())
	}
	since := t.Sub(time.Unix(0, 0).Add(offset)) + every/2
	k := since / every
	if since%every < 0 {
		k-- // a floor, for times before the epoch
	}
	return time.Unix(0, 0).Add(offset + k*every).UTC().Format(time.RFC3339Nano)
}

// comparePeriods compares two period keys: as times when both parse as
// RFC 3339, as numbers when both are decimal integers, byte by byte
// otherwise.
func comparePeriods(a, b string) int {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	if errA == nil && errB == nil {
		return ta.Compare(tb)
	}
	na, errA := strconv.ParseInt(a, 10, 64)
	nb, errB := strconv.ParseInt(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(na, nb)
	}
	return cmp.Compare(a, b)
}

// ranBy reports whether the schedule state of a record (period, done)
// covers this runner's period: a later period started, or this one
// started (at most once) or finished (RetryFailed).
func (r *Runner) ranBy(period string, done bool) bool {
	if r.cfg.Period == "" || period == "" {
		return false
	}
	c := comparePeriods(r.cfg.Period, period)
	return c < 0 || c == 0 && (done || !r.cfg.RetryFailed)
}

// markPeriod writes this runner's period into the record, under term t,
// before the task starts: a renewal of t with the period set.
func (r *Runner) markPeriod(ctx context.Context, t lease.Term) (lease.Term, error) {
	t.Period, t.PeriodDone = r.cfg.Period, false
	return r.cfg.Lease.Renew(ctx, t)
}

// schedule is one RunOnce's task as it ran: when it started, and its end.
type schedule struct {
	started time.Time
	ended   bool // the task returned by itself, before its context ended
	err     error
}

// wrap returns the task RunOnce runs: cfg.Task, followed, on a store that
// cannot keep a record held without its holder (not a lease.Keeper), by
// the rest of MinHold, during which the renewals go on.
func (r *Runner) wrap(s *schedule) func(context.Context) error {
	_, keeper := r.cfg.Lease.(lease.Keeper)
	return func(ctx context.Context) error {
		s.started = time.Now()
		s.err = r.cfg.Task(ctx)
		s.ended = ctx.Err() == nil
		if hold := r.hold(s); hold > 0 && !keeper && ctx.Err() == nil {
			r.cfg.Logger.Info("task ended; holding the lease for the rest of MinHold", "min_hold", r.cfg.MinHold, "for", hold)
			sleep(ctx, hold)
		}
		return s.err
	}
}

// hold is how much of MinHold remains after the task of s started.
func (r *Runner) hold(s *schedule) time.Duration {
	return r.cfg.MinHold - time.Since(s.started)
}

// end ends RunOnce's term: it marks the period done if the task returned
// nil, and either leaves the lease held for the rest of MinHold
// (lease.Keeper) or releases it.
func (r *Runner) end(s *schedule) endTerm {
	return func(ctx context.Context, t lease.Term, d *Demotion) {
		if t.Period != "" && s.ended && s.err == nil {
			t.PeriodDone = true
		}
		k, keeper := r.cfg.Lease.(lease.Keeper)
		hold := (r.hold(s) + time.Millisecond - 1).Truncate(time.Millisecond)
		if !keeper || !s.ended || hold <= 0 {
			d.Released = r.release(ctx, t)
			return
		}
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ReleaseTimeout)
		defer cancel()
		if err := k.Keep(kctx, t, hold); err != nil {
			r.cfg.Logger.Warn("keeping the lease for the rest of MinHold failed; it lapses after its TTL", "token", t.Token, "err", err)
			return
		}
		d.Kept = hold
	}
}
