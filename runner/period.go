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

// Schedule is the state RunOnce keeps in a lease's record, for the runs of
// other instances to read: the record's annotations lease.AnnotationPeriod,
// AnnotationPeriodDone and AnnotationHold.
type Schedule struct {
	// Period is the key of the latest scheduled period a holder started
	// its task for (Config.Period), or "" if none has. Every write carries
	// it over from the record it follows, so it survives takeovers,
	// renewals and releases; only a holder changes it.
	Period string
	// Done reports that the task of Period finished successfully.
	Done bool
	// Hold reports that the holder's task has ended and the lease is held
	// only to keep others out for the rest of a minimum hold
	// (Config.MinHold): a duplicate trigger that finds it knows at once
	// that it must not run, without waiting for the hold to end.
	Hold bool
}

// ScheduleOf returns the schedule state that a record's (or a term's)
// annotations hold.
func ScheduleOf(a lease.Annotations) Schedule {
	return Schedule{
		Period: a.Get(lease.AnnotationPeriod),
		Done:   a.Get(lease.AnnotationPeriodDone) == "1",
		Hold:   a.Get(lease.AnnotationHold) == "1",
	}
}

// annotate returns t with s as its schedule state, for its next write.
func (s Schedule) annotate(t lease.Term) lease.Term {
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return ""
	}
	return t.Annotate(lease.AnnotationPeriod, s.Period).
		Annotate(lease.AnnotationPeriodDone, flag(s.Done)).
		Annotate(lease.AnnotationHold, flag(s.Hold))
}

// periodCovered reports whether the schedule state s of a record covers this
// runner's period: a later period started, or this one started (at most
// once) or finished (RetryFailed).
func (r *Runner) periodCovered(s Schedule) bool {
	if r.cfg.Period == "" || s.Period == "" {
		return false
	}
	c := comparePeriods(r.cfg.Period, s.Period)
	return c < 0 || c == 0 && (s.Done || !r.cfg.RetryFailed)
}

// markPeriod writes this runner's period into the record, under the term
// tn, before the task starts: a write of the term with the period set,
// under the deadline of a term that leads, as the task starts on it.
func (r *Runner) markPeriod(ctx context.Context, tn tenure) (tenure, error) {
	s := ScheduleOf(tn.term.Annotations)
	s.Period, s.Done = r.cfg.Period, false
	return r.write(ctx, tn, s.annotate(tn.term), tn.leadsUntil(r.cfg.RenewDeadline))
}

// schedule is one RunOnce's task as it ran: when it started, and its end.
type schedule struct {
	started time.Time
	// ended: the task returned by itself, before its context ended, or
	// said that its work had finished before then (Completed).
	ended bool
	err   error
}

// runTask returns the task RunOnce runs: cfg.Task, noting in s how it ran.
func (r *Runner) runTask(s *schedule) func(context.Context) error {
	return func(ctx context.Context) error {
		s.started = time.Now()
		s.err = r.cfg.Task(ctx)
		s.ended = ctx.Err() == nil || completed(ctx)
		return s.err
	}
}

// holdLeft is how much of MinHold remains after the task of s started, in
// whole milliseconds (as a record stores it), or 0 if the task never
// started.
func (r *Runner) holdLeft(s *schedule) time.Duration {
	if s.started.IsZero() {
		return 0
	}
	return max(0, (r.cfg.MinHold - time.Since(s.started) + time.Millisecond - 1).Truncate(time.Millisecond))
}

// afterTask ends RunOnce's term once its task has returned, with the lease
// still held (rule 13: neither the done mark nor the hold may be lost while
// the holder can still write). It writes at once what the run left: the
// period done, if the task returned nil, and, while MinHold lasts, that
// the lease is held after a run (Schedule.Hold). Then, for the rest of
// MinHold, it keeps the record held by renewing it, with the health watch
// off, as the task is over: a duplicate trigger sees the record change
// within a renew interval and gives up (NotElected), and a holder that
// dies meanwhile lets its lease lapse after the TTL rather than leave a
// hold nobody can end. Nothing acts as leader any more, so each write is
// retried until a TTL after the term's latest write was sent
// (tenure.heldUntil), not only until its renew deadline, and then, while
// one of the term's writes left unanswered may have landed and hold the
// record longer, until a read settles it (resolve); only when none did,
// or when the lease is found lost, are the mark and the hold given up.
// Last, it releases the lease.
func (r *Runner) afterTask(s *schedule) finishTerm {
	return func(ctx context.Context, tn tenure, d *Demotion) {
		sched := ScheduleOf(tn.term.Annotations)
		// The record carries the period of the run before this one: a
		// RunOnce with no period of its own leaves it as it found it, not
		// done for it (a failed run's RetryFailed retry would find it done).
		if r.cfg.Period != "" && s.ended && s.err == nil {
			sched.Done = true
		}
		sched.Hold = r.holdLeft(s) > 0
		if sched.Done || sched.Hold {
			held, err := r.holdUntil(ctx, tn, sched.annotate(tn.term), s.started.Add(r.cfg.MinHold))
			if err != nil {
				r.cfg.Logger.Warn("writing the end of the run, or holding the lease after it, failed until a TTL after the term's latest write; it lapses", "token", tn.term.Token, "err", err)
				return
			}
			tn = held
		}
		sched.Hold = false
		tn.term = sched.annotate(tn.term)
		d.Released = r.release(ctx, tn)
	}
}

// holdUntil writes t, tn's term with the schedule state that ends the run,
// at once, then renews it RenewInterval after each write returned (no
// later than RenewDeadline after it was sent), in the lease's Idle
// between them as between a leader's renewals (idle: a quorum takes back
// a member that returns from an outage during the hold, red team 19),
// until until has passed or ctx ends. The writes go on after ctx ends, each
// until tn.heldUntil. A write that did not land by then, while one of the
// term's writes left unanswered may have (rule 7), is resolved by reading
// (resolve): if one did, the writes go on at once from it. It returns the
// latest tenure, or the error that ended the writes (the lease lost, or
// none known to have landed by its deadline). No task runs: the writes
// only keep the record held.
func (r *Runner) holdUntil(ctx context.Context, tn tenure, t lease.Term, until time.Time) (tenure, error) {
	wctx := context.WithoutCancel(ctx)
	marked := false // t's schedule, the run's mark, is in the record
	for {
		next, err := r.write(wctx, tn, t, tn.heldUntil())
		if err != nil && !settled(err) {
			// A write of the term landed unanswered. If the record it
			// left does not carry t's schedule, it is an earlier one (a
			// renewal cut off as the task returned: seed 31356120), and
			// t, the run's mark, is written again from it at once,
			// whether or not the hold is over or ctx has ended; once the
			// mark is in, the hold goes on only while it lasts.
			if landed, rec, ok := r.resolve(wctx, next, t); ok {
				tn = landed
				marked = marked || ScheduleOf(rec.Annotations) == ScheduleOf(t.Annotations)
				if !marked || ctx.Err() == nil && time.Now().Before(until) {
					continue
				}
				return tn, nil
			}
		}
		if err != nil {
			return tn, err
		}
		tn, t, marked = next, next.term, true
		if !time.Now().Before(until) {
			return tn, nil
		}
		// Answered late, a write would leave too little of its TTL after
		// the next for a failure and its retries (sim seed 6000711947: a
		// write answered 1.03 s late of a 3 s TTL, the next failed a
		// renew interval after that answer, and no other could land in
		// time), so the next goes no later than the deadline a leader's
		// renewal would have had (tenure.leadsUntil). Nothing acts as
		// leader, so writing sooner than a renew interval after the
		// answer is safe; only the release's window may shrink
		// (tenure.next: base).
		r.idle(ctx, time.Now().Add(min(r.cfg.RenewInterval, time.Until(until), time.Until(tn.leadsUntil(r.cfg.RenewDeadline)))))
		if ctx.Err() != nil || !time.Now().Before(until) {
			return tn, nil
		}
	}
}
