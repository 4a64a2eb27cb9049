package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Runner runs a task while, and only while, it holds a lease.
type Runner struct {
	cfg  Config
	rand *rand.Rand // draws from cfg.Rand

	mu     sync.Mutex
	leader string // the leader last observed, for OnLeaderChanged

	cands *candidacy // with Config.Prefer: this contender's announcement
}

// New validates cfg and returns a Runner. Invalid settings are reported as
// errors wrapping lease.ErrInvalid that name the field and its value.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Lease == nil:
		return nil, invalid("Lease", nil, "is required")
	case cfg.Task == nil:
		return nil, invalid("Task", nil, "is required")
	}
	res, err := cfg.Resolve(cfg.Lease.Options())
	if err != nil {
		return nil, err
	}
	if err := checkPrefer(cfg); err != nil {
		return nil, err
	}
	res.Logger = res.Logger.With("identity", res.LeaseOptions.Identity)
	r := &Runner{cfg: res.Config, rand: rand.New(res.Rand)}
	if cfg.Prefer != "" {
		r.cands = &candidacy{r: r}
	}
	return r, nil
}

// Run campaigns for the lease, runs the task while leader, and campaigns
// again after each term ends, until ctx ends; then it returns nil. It
// returns an error when the lease cannot be campaigned for without a
// person's help (see lease.Retryable), and, with StopWhenTaskEnds, the
// task's error once the task has returned.
func (r *Runner) Run(ctx context.Context) error {
	switch {
	case r.cfg.Period != "":
		return invalid("Period", r.cfg.Period, "is for RunOnce: Run does not run once per period")
	case r.cfg.MinHold != 0:
		return invalid("MinHold", r.cfg.MinHold, "is for RunOnce: Run holds the lease while it runs")
	}
	if r.cands != nil {
		if err := r.distinctCandidates(ctx); err != nil {
			return err
		}
		defer r.cands.wait()
	}
	failures := 0 // tasks in a row that failed quickly (see restartDelay)
	for {
		t, err := r.campaign(ctx, nil)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
		elected := time.Now()
		d := r.lead(ctx, tenureOf(t), r.cfg.Task, nil)
		switch {
		case ctx.Err() != nil:
			return nil
		case d.Reason == TaskEnded && r.cfg.StopWhenTaskEnds:
			return d.Err
		case d.Reason == TaskEnded:
			var wait time.Duration
			wait, failures = r.restartDelay(d.Err, time.Since(elected), failures)
			r.cfg.Logger.Info("task ended; campaigning again after a wait", "err", d.Err, "wait", wait, "failures_in_a_row", failures)
			ctxtime.Sleep(ctx, wait)
		case d.Reason == HandedOff:
			r.cands.quietFor(r.cfg.CoolDown)
			if d.Successor == "" {
				r.cfg.Logger.Info("cooling down before campaigning again", "cool_down", r.cfg.CoolDown)
				ctxtime.Sleep(ctx, r.cfg.CoolDown)
			}
		case d.Reason == Unhealthy:
			r.cfg.Logger.Info("cooling down before campaigning again", "cool_down", r.cfg.CoolDown)
			ctxtime.Sleep(ctx, r.cfg.CoolDown)
		}
	}
}

// campaign tries to acquire the lease until it wins, ctx ends, or giveUp
// (if not nil) says to stop after a refused or failed attempt. It returns
// the term won, or the error of the last attempt: ctx's error when ctx
// ended, an error wrapping the lease's when the lease cannot be campaigned
// for without a person's help (see lease.Retryable).
func (r *Runner) campaign(ctx context.Context, giveUp func(error) bool) (lease.Term, error) {
	var f *follow // when to read, on a store whose holder's renewals show
	if lease.RenewalsShow(r.cfg.Lease) {
		f = newFollow(r.cfg, r.cfg.Lease.Options().TTL, r.jittered, r.rand)
	}
	for {
		began := time.Now()
		t, err := r.cfg.Lease.Acquire(ctx)
		if err == nil {
			r.cands.want(ctx, false)
			// A minimum hold is the previous holder's alone: the
			// package's backends do not carry its mark over
			// (driver.CarriedOver), and a Lease that does never has this
			// term write it.
			return t.Annotate(lease.AnnotationHold, ""), nil
		}
		wait := r.jittered(r.cfg.CampaignInterval)
		var held *lease.HeldError
		switch {
		case ctx.Err() != nil:
			return lease.Term{}, ctx.Err()
		case !lease.Retryable(err):
			return lease.Term{}, fmt.Errorf("runner: campaign: %w", err)
		case errors.As(err, &held):
			r.observeLeader(held.Record.Holder)
			if f != nil {
				wait = time.Until(spread(began, f.saw(began, time.Now(), held.Record), readStep(r.countGap(held.Record), r.cfg.FollowerReads)))
			}
			if held.Wait > 0 {
				wait = min(wait, held.Wait)
			}
			if r.cands.follow(ctx, held.Record) {
				wait = min(wait, r.announceStep())
			}
		default:
			r.cfg.Logger.Warn("campaign: acquire failed; will retry", "err", err, "retry_in", wait)
			// A candidate that cannot take the lease withdraws, or every
			// leader would hand it the lease, to lapse a TTL later (red
			// team 28).
			r.cands.want(ctx, false)
		}
		if giveUp != nil && giveUp(err) {
			return lease.Term{}, err
		}
		ctxtime.Sleep(ctx, wait)
	}
}

// countGap is the longest a follower may leave between two reads of rec
// (from one's sending to the next one's return) for its count towards
// expiry to go on: the holder's renew interval, as the record gives it
// (see lease.Acquire), else this runner's. A follower reads again within
// readStep of it.
func (r *Runner) countGap(rec lease.Record) time.Duration {
	if d := rec.HolderRenewInterval(); d > 0 {
		return d
	}
	return r.cfg.RenewInterval
}

// spread returns when to read next after a read that began at began, so
// that reads follow each other within step, on the way to a read planned
// at next: the first of the fewest evenly spaced reads that get there.
func spread(began, next time.Time, step time.Duration) time.Time {
	d := next.Sub(began)
	if d <= step || step <= 0 {
		return next
	}
	k := (d + step - 1) / step
	return began.Add(d / k)
}

// lead runs one term: task (Config.Task, or RunOnce's runTask of it), the
// renew loop and the health watch share one context, and the first of
// them to end it (stopTerm) cancels the others. The renewals run under a
// context of their own, which one goroutine (renewUntil) ends. A term
// whose renew deadline has passed before its task starts (Acquire's
// answer came that late) ends there, the task not started. It returns
// once the task has returned and the lease has been released, or the term
// finished by finish (not nil: RunOnce's afterTask), which is given the
// term as it stands once the renewals have stopped.
func (r *Runner) lead(ctx context.Context, tn tenure, task func(context.Context) error, finish finishTerm) Demotion {
	lt := tn.term
	// Annotate is called only for a term whose task will start, and the
	// task starts only if the renew deadline has not passed once Annotate
	// and OnElected have returned, before any write of the term is sent:
	// so what Annotate said is written only by a term whose task ran (red
	// team 12: a shard worker's assigner term, its Acquire answered past
	// the renew deadline, released a record naming the worker's live
	// liveness term, and the next assigner freed that term's shards while
	// they ran), and a hook slower than the renew deadline never starts a
	// task under another leader (red team 13). A term whose task does not
	// start writes the annotations it took over.
	starts := time.Now().Before(tn.leadsUntil(r.cfg.RenewDeadline))
	if starts && r.cfg.Annotate != nil {
		tn.term.Annotations = r.cfg.Annotate(lt)
	}
	if p := cmp.Or(r.cfg.Prefer, r.cfg.announce); starts && tn.term.Annotations.Get(AnnotationPrefer) != p {
		// Its own, not one carried over from a leader with a Prefer:
		// followers announce themselves only to a leader that reads
		// Candidates (red team 29).
		tn.term.Annotations = tn.term.Annotations.With(AnnotationPrefer, p)
	}
	r.elected(lt)
	if !time.Now().Before(tn.leadsUntil(r.cfg.RenewDeadline)) {
		starts, tn.term.Annotations = false, lt.Annotations
	}
	st := newLeadership(tn, r.cfg.RenewInterval, r.cfg.RenewDeadline)
	st.annotated = tn.term.Annotations != lt.Annotations
	termCtx, stopTerm := context.WithCancelCause(ctx)
	defer stopTerm(nil)
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	taskDone := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { r.renewUntil(termCtx, st, taskDone, stopRenewing) })
	wg.Go(func() { r.keepRenewing(renewCtx, st, stopTerm) })
	wg.Go(func() { r.watchHealth(termCtx, st, stopTerm) })
	if r.cfg.Candidates != nil && starts {
		wg.Go(func() { r.watchCandidates(termCtx, lt.Token, stopTerm) })
	}
	var taskErr error
	if starts {
		taskErr = task(context.WithValue(termCtx, termKey{}, st))
	} else {
		st.fail(stopTerm, &stepDown{reason: DeadlinePassed})
	}
	stopTerm(&stepDown{reason: TaskEnded, err: taskErr})
	close(taskDone)
	wg.Wait()
	return r.demoted(ctx, st, demotionOf(context.Cause(termCtx), lt.Token), finish)
}

// finishTerm finishes a term whose lease was not found lost, instead of a
// plain release, and fills in d's Released.
type finishTerm func(ctx context.Context, tn tenure, d *Demotion)

// renewUntil is the one place that decides when the renewals stop: it
// calls stopRenewing when the task has returned; when the renew loop itself
// ended the term (the lease was lost, or the renew deadline passed); and
// when the term ended otherwise, at once, except after a voluntary
// step-down (Stopped, Unhealthy) with DrainTimeout set, when the renewals
// go on until the task has returned or DrainTimeout has passed.
func (r *Runner) renewUntil(termCtx context.Context, st *leadership, taskDone <-chan struct{}, stopRenewing context.CancelFunc) {
	defer stopRenewing()
	select {
	case <-taskDone:
		return
	case <-st.failed:
		return
	case <-termCtx.Done():
	}
	reason := demotionOf(context.Cause(termCtx), 0).Reason
	if r.cfg.DrainTimeout == 0 || reason != Stopped && reason != Unhealthy && reason != HandedOff {
		return
	}
	timer := time.NewTimer(r.cfg.DrainTimeout)
	defer timer.Stop()
	// The drain's line is written beside the wait, not before it: a
	// Logger may block (a stalled stderr) for longer than the drain, and
	// the renewals must stop at DrainTimeout whatever it does.
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		r.cfg.Logger.Info("draining: renewing the lease until the task returns", "reason", reason.String(), "drain_timeout", r.cfg.DrainTimeout)
	}()
	timedOut := false
	select {
	case <-taskDone:
	case <-st.failed:
	case <-timer.C:
		timedOut = true
	}
	stopRenewing() // before the log lines, which may block
	<-logged
	if timedOut {
		r.cfg.Logger.Warn("drain timed out: renewals stop while the task still runs; the lease will lapse", "drain_timeout", r.cfg.DrainTimeout)
	}
}

// elected announces a new term.
func (r *Runner) elected(t lease.Term) {
	r.cfg.Logger.Info("elected", "token", t.Token)
	r.observeLeader(t.Holder)
	if r.cfg.OnElected != nil {
		r.cfg.OnElected(t)
	}
}

// demoted releases the lease of a term that ended as d says (or finishes
// it with finish, if not nil), unless a renewal found it lost, and
// announces the demotion.
func (r *Runner) demoted(ctx context.Context, st *leadership, d Demotion, finish finishTerm) Demotion {
	switch {
	case st.lost():
	case finish != nil:
		finish(ctx, st.tenure(), &d)
	case d.Reason == HandedOff && d.Successor == "":
		d.Released = r.release(ctx, st.tenure())
	case d.Reason == HandedOff:
		d.Released = r.endTerm(ctx, st.tenure(), "handed over", func(ctx context.Context, t lease.Term) error {
			return r.cfg.Lease.(lease.Handoffer).ReleaseTo(ctx, t, d.Successor)
		})
	default:
		d.Released = r.release(ctx, st.tenure())
	}
	r.cfg.Logger.Info("demoted", "token", d.Token, "reason", d.Reason.String(), "err", d.Err, "released", d.Released, "successor", d.Successor)
	if r.cfg.OnDemoted != nil {
		r.cfg.OnDemoted(d)
	}
	return d
}

// release gives the lease up with a context of its own, bounded by
// ReleaseTimeout, so that it runs even when ctx has ended. It is a write of
// the term once nothing acts as leader, so it is sent only within
// tn.releasable's window: outside it the lease may be someone else's, and
// a restore may have put tn's record back under it, which a release would
// free for a third contender while the successor leads.
func (r *Runner) release(ctx context.Context, tn tenure) bool {
	return r.endTerm(ctx, tn, "released", r.cfg.Lease.Release)
}

// endTerm ends tn's term with end (a release, or a handoff), as release
// says; what names it in the log lines ("released").
func (r *Runner) endTerm(ctx context.Context, tn tenure, what string, end func(context.Context, lease.Term) error) bool {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ReleaseTimeout)
	defer cancel()
	from, until := tn.releasable(r.cfg.RenewDeadline)
	if time.Now().Before(from) {
		r.cfg.Logger.Warn("not "+what+": a write of the term landed too late to show that no successor took the lease over meanwhile; the lease lapses", "token", tn.term.Token)
		return false
	}
	rctx, cancelHeld, err := byDeadline(rctx, until)
	if err != nil {
		r.cfg.Logger.Warn("not "+what+": a TTL has passed since the term's write before its latest; the lease lapses", "token", tn.term.Token)
		return false
	}
	defer cancelHeld()
	if err := end(rctx, tn.term); err != nil {
		r.cfg.Logger.Warn("not "+what+": the write failed; the lease will lapse after its TTL", "token", tn.term.Token, "err", err)
		return false
	}
	return true
}

func (r *Runner) observeLeader(identity string) {
	r.mu.Lock()
	changed := identity != r.leader
	r.leader = identity
	r.mu.Unlock()
	if !changed {
		return
	}
	r.cfg.Logger.Info("leader changed", "leader", identity)
	if r.cfg.OnLeaderChanged != nil {
		r.cfg.OnLeaderChanged(identity)
	}
}

// maxRestartDoublings caps restartDelay at 2^4 = 16 CampaignIntervals
// (80s at the default TTL).
const maxRestartDoublings = 4

// restartDelay is how long Run waits before campaigning again after its task
// returned taskErr by itself, ran after the election, following failures
// quick failures in a row; it also returns the new count. The wait is one
// jittered CampaignInterval, so that followers get their turn at the lease,
// doubled for each quick failure in a row, so that a task that fails at
// once is not restarted, nor the store asked, in a tight loop. A task that
// returned nil, or failed after running longer than the longest wait, starts
// the count again.
func (r *Runner) restartDelay(taskErr error, ran time.Duration, failures int) (time.Duration, int) {
	longest := r.cfg.CampaignInterval << maxRestartDoublings
	switch {
	case taskErr == nil:
		failures = 0
	case ran > longest:
		failures = 1
	default:
		failures++
	}
	doublings := max(0, min(failures-1, maxRestartDoublings))
	return r.jittered(r.cfg.CampaignInterval << doublings), failures
}

func (r *Runner) jittered(d time.Duration) time.Duration {
	return d + time.Duration(r.rand.Float64()*r.cfg.Jitter*float64(d))
}
