package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// OnceOutcome says how RunOnce ended.
type OnceOutcome int

const (
	// Ran: this instance was elected and the task returned by itself
	// (before its context ended, or having called Completed). Once.Err is
	// the task's error.
	Ran OnceOutcome = iota + 1
	// SteppedDown: this instance was elected, but leadership ended before
	// the task returned (the lease was lost, the renew deadline passed, the
	// leader was unhealthy, or ctx ended), and the task's context was
	// cancelled. Once.Demotion says why.
	SteppedDown
	// NotElected: another instance holds the lease and is alive: its record
	// changed while this one watched (it renews), the store vouches for its
	// lease (lease.JudgedByStore), or it did not lapse within OnceTimeout.
	// Once.Holder() names it; Once.Record is its record as last read.
	NotElected
	// Unreachable: no attempt settled the election within OnceTimeout: the
	// store did not answer, timed out, throttled, or would not yet let a
	// lapsed lease go (Azure may take up to a minute). Once.Err is the last
	// error, or says that no attempt ended in time.
	Unreachable
	// Interrupted: ctx ended before this instance was elected.
	Interrupted
	// AlreadyRan: Config.Period is at or before the period the lease
	// record names (see Config.Period and RetryFailed): the period ran, or
	// is running, on some instance, and the task did not run here. Once.Record
	// is the record that names it.
	AlreadyRan
)

var onceOutcomeNames = map[OnceOutcome]string{
	Ran:         "ran",
	SteppedDown: "stepped down",
	NotElected:  "not elected",
	Unreachable: "store unreachable",
	Interrupted: "interrupted",
	AlreadyRan:  "already ran",
}

// String names the outcome in words, for logs and messages: "not elected".
func (o OnceOutcome) String() string { return nameOf(onceOutcomeNames, o, "OnceOutcome") }

// Once is what RunOnce did.
type Once struct {
	// Outcome says how RunOnce ended; the fields below say more about it.
	Outcome OnceOutcome
	// Term is the term this instance was elected with (Ran, SteppedDown).
	Term lease.Term
	// Demotion says how that term ended (Ran, SteppedDown): Reason
	// TaskEnded for Ran (for a task that called Completed, what ended its
	// context, if that came first), and whether the lease was released.
	Demotion Demotion
	// Record is the lease's record as last read (NotElected, AlreadyRan;
	// for an AlreadyRan found after this instance was elected, the record
	// as this instance left it, released at once). Holder names who holds
	// it.
	Record lease.Record
	// Err is the task's error (Ran) or the store's last error
	// (Unreachable); nil otherwise.
	Err error
}

// Holder is the identity of the instance that holds the lease (NotElected)
// or held it last (AlreadyRan): Record.Holder. It is "" for the other
// outcomes.
func (o Once) Holder() string { return o.Record.Holder }

// errOnceTimeout is the cause of RunOnce's campaign context when
// OnceTimeout passes.
var errOnceTimeout = errors.New("runner: no attempt settled the election within OnceTimeout")

// RunOnce is the one-shot mode for scheduled and serverless jobs: it tries
// to become leader, runs the task if elected, releases the lease, and says
// what happened. It campaigns for at most OnceTimeout, counted from its
// call whether or not the store answers, and waits for a held lease only as
// long as it takes to tell a live leader from a dead one: until the
// holder's record changes (someone renews it) or, on a store that judges
// expiry itself, until the store refuses a second time; a dead holder's
// lease lapses, and is taken over, within its TTL. Once elected, the task
// runs as under Run, with no bound but its own; it has run to its end (Ran)
// if it returned before its context ended, or called Completed to say its
// work had finished before then. Once it has returned, the
// done mark and the minimum hold (Config.Period, Config.MinHold) are
// written, each retried until it lands, the lease is found lost, or a TTL
// has passed since the term's latest write known to have landed, the
// earliest another instance could take the lease over. A write left
// unanswered by then may have landed: it is resolved by reading the
// record, until a TTL after it was sent, and the writes go on from it
// if it did; only when none did, or none is known to have in time, is a
// mark given up.
//
// It returns an error only when the lease cannot be campaigned for without
// a person's help (see lease.Retryable); every other end is an Outcome.
// An Acquire cut off by OnceTimeout may have written this instance in as
// holder unseen: it never acts as leader on it, and the lease lapses after
// its TTL.
func (r *Runner) RunOnce(ctx context.Context) (Once, error) {
	if r.cfg.Prefer != "" {
		return Once{}, invalid("Prefer", r.cfg.Prefer, "is for Run: RunOnce's runs are not handed over")
	}
	cctx, cancel := context.WithTimeoutCause(ctx, r.cfg.OnceTimeout, errOnceTimeout)
	defer cancel()
	w := holderWatch{judge: r.cfg.Lease.Judge(), periodCovered: r.periodCovered}
	t, err := r.campaign(cctx, w.gaveUp)
	var held *lease.HeldError
	switch {
	case ctx.Err() != nil:
		return Once{Outcome: Interrupted}, nil
	case err == nil && r.cfg.Period == "" && w.holdEnded():
		// Elected only because the holder whose minimum hold this call
		// came during released the lease at its end: a duplicate. A
		// trigger with a period is told by it (periodCovered): one of a
		// later period is no duplicate of the run that held.
		r.cfg.Logger.Info("not elected: the lease was released at the end of a minimum hold this trigger came during; giving it back", "holder", w.first.Record.Holder, "token", w.first.Record.Token)
		r.release(ctx, tenureOf(t))
		return Once{Outcome: NotElected, Record: w.first.Record}, nil
	case err == nil:
		return r.runElected(ctx, t)
	case !lease.Retryable(err):
		return Once{}, err
	case errors.As(w.last, &held) && r.periodCovered(ScheduleOf(held.Record.Annotations)):
		s := ScheduleOf(held.Record.Annotations)
		r.cfg.Logger.Info("not running: the period already ran", "period", r.cfg.Period, "record_period", s.Period, "done", s.Done, "holder", held.Record.Holder)
		return Once{Outcome: AlreadyRan, Record: held.Record}, nil
	case errors.As(w.last, &held) && ScheduleOf(held.Record.Annotations).Hold:
		r.cfg.Logger.Info("not elected: the lease is held after a run, for its minimum hold", "holder", held.Record.Holder, "token", held.Record.Token, "ends_within", held.Wait)
		return Once{Outcome: NotElected, Record: held.Record}, nil
	case errors.As(w.last, &held):
		r.cfg.Logger.Info("not elected: the lease is held", "holder", held.Record.Holder, "token", held.Record.Token)
		return Once{Outcome: NotElected, Record: held.Record}, nil
	case w.last == nil:
		w.last = context.Cause(cctx)
	}
	r.cfg.Logger.Warn("not elected: the store did not answer within OnceTimeout", "once_timeout", r.cfg.OnceTimeout, "err", w.last)
	return Once{Outcome: Unreachable, Err: w.last}, nil
}

// runElected is RunOnce once elected with term t: with a Period, it gives
// the lease back at once if the record it took over shows the period ran,
// and otherwise writes the period before the task starts.
func (r *Runner) runElected(ctx context.Context, t lease.Term) (Once, error) {
	tn := tenureOf(t)
	if r.cfg.Period != "" {
		if s := ScheduleOf(t.Annotations); r.periodCovered(s) {
			r.cfg.Logger.Info("not running: the period already ran", "period", r.cfg.Period, "record_period", s.Period, "done", s.Done)
			holder := t.Record()
			holder.Released = r.release(ctx, tn)
			return Once{Outcome: AlreadyRan, Term: t, Record: holder}, nil
		}
		marked, err := r.markPeriod(ctx, tn)
		if err != nil {
			if !errors.Is(err, lease.ErrLost) {
				r.release(ctx, tn) // writes the record back as it was
			}
			err = fmt.Errorf("runner: writing period %q into the lease record before the task: %w", r.cfg.Period, err)
			if ctx.Err() != nil {
				return Once{Outcome: Interrupted}, nil
			}
			if !lease.Retryable(err) {
				return Once{}, err
			}
			r.cfg.Logger.Warn("not running: the period could not be written", "period", r.cfg.Period, "err", err)
			return Once{Outcome: Unreachable, Err: err}, nil
		}
		tn = marked
	}
	s := &schedule{}
	d := r.lead(ctx, tn, r.runTask(s), r.afterTask(s))
	if s.ended {
		return Once{Outcome: Ran, Term: tn.term, Demotion: d, Err: s.err}, nil
	}
	return Once{Outcome: SteppedDown, Term: tn.term, Demotion: d}, nil
}

// holderWatch is how RunOnce tells a live holder from a dead one.
type holderWatch struct {
	judge         lease.Judge
	periodCovered func(Schedule) bool // the holder's record covers our period
	first         *lease.HeldError    // the holder's record as first refused
	last          error               // the latest failed attempt's error
	// lapseAt is the earliest instant at which the record last refused
	// could be taken over as lapsed, by this Lease's own count: the
	// latest refusal's time plus its HeldError.Wait.
	lapseAt time.Time
}

// holdEnded reports, once the campaign won, that it won a record the
// holder freed during the minimum hold this call first found
// (Schedule.Hold): the win came before the record first refused could
// have lapsed, and that record had not changed at any refusal in between
// (a change would have ended the campaign), so its holder, alive, wrote
// it last: it released the lease as its hold ended (or a person broke
// it). The call came during the hold, and is the duplicate the hold keeps
// out, however late its reads were to see a renewal.
func (w *holderWatch) holdEnded() bool {
	return w.first != nil && ScheduleOf(w.first.Record.Annotations).Hold && time.Now().Before(w.lapseAt)
}

// gaveUp notes a failed attempt's error and reports whether to stop
// campaigning: the holder's record shows that our period ran, or the
// holder is alive, because its record changed since the
// first refusal, or because the store, which judges expiry itself, still
// refuses. Only a *lease.HeldError is a refusal: a store slow to let a
// lapsed lease go (lease.ErrUnavailable) is waited out.
func (w *holderWatch) gaveUp(err error) bool {
	w.last = err
	var held *lease.HeldError
	if !errors.As(err, &held) {
		return false
	}
	w.lapseAt = time.Now().Add(held.Wait)
	if s := ScheduleOf(held.Record.Annotations); w.periodCovered(s) || s.Hold && w.judge == lease.JudgedByStore {
		return true // the period ran, or the store vouches for a run's hold
	}
	if w.first == nil {
		w.first = held
		return false
	}
	return held.Record.Version != w.first.Record.Version || w.judge == lease.JudgedByStore
}
