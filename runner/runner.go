package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Runner runs a task while, and only while, it holds a lease.
type Runner struct {
	cfg Config

	mu     sync.Mutex
	leader string // the leader last observed, for OnLeaderChanged
}

// New validates cfg and returns a Runner. Invalid settings are reported as
// errors wrapping lease.ErrInvalid that name the field and its value.
func New(cfg Config) (*Runner, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg}, nil
}

// Run campaigns for the lease, runs the task while leader, and campaigns
// again after each term ends, until ctx ends; then it returns nil. It
// returns an error when the lease cannot be campaigned for without a
// person's help (see lease.Retryable), and, with StopWhenTaskEnds, the
// task's error once the task has returned.
func (r *Runner) Run(ctx context.Context) error {
	failures := 0 // tasks in a row that failed quickly (see restartDelay)
	for {
		t, err := r.campaign(ctx, false)
		if err != nil || ctx.Err() != nil {
			return err
		}
		elected := time.Now()
		d := r.lead(ctx, t)
		switch {
		case ctx.Err() != nil:
			return nil
		case d.Reason == TaskEnded && r.cfg.StopWhenTaskEnds:
			return d.Err
		case d.Reason == TaskEnded:
			var wait time.Duration
			wait, failures = r.restartDelay(d.Err, time.Since(elected), failures)
			r.cfg.Logger.Info("task ended; campaigning again after a wait", "err", d.Err, "wait", wait, "failures_in_a_row", failures)
			sleep(ctx, wait)
		case d.Reason == Unhealthy:
			r.cfg.Logger.Info("cooling down before campaigning again", "cool_down", r.cfg.CoolDown)
			sleep(ctx, r.cfg.CoolDown)
		}
	}
}

// RunOnce is the one-shot mode for scheduled and serverless jobs: it tries
// to become leader, runs the task if elected, releases the lease, and
// reports whether the task ran. It waits for a held lease only as long as it
// takes to tell a live leader from a dead one: until the holder's record
// changes (someone is renewing it: not elected), or until it has lapsed and
// been taken over, at most the holder's TTL plus two CampaignIntervals. err
// is the task's error, a Demotion if leadership ended otherwise, or the
// error that kept it from campaigning.
func (r *Runner) RunOnce(ctx context.Context) (ran bool, err error) {
	t, err := r.campaign(ctx, true)
	if err != nil || t.Token == 0 {
		return false, err
	}
	d := r.lead(ctx, t)
	if d.Reason == TaskEnded {
		return true, d.Err
	}
	return true, d
}

// campaign tries to acquire the lease until it wins. once bounds the wait
// as RunOnce describes; it then returns a zero Term when not elected. It
// returns a nil error and a zero Term when ctx ends.
func (r *Runner) campaign(ctx context.Context, once bool) (lease.Term, error) {
	var watch holderWatch
	for {
		t, err := r.cfg.Lease.Acquire(ctx)
		if err == nil {
			return t, nil
		}
		wait := r.jittered(r.cfg.CampaignInterval)
		var held *lease.HeldError
		switch {
		case ctx.Err() != nil:
			return lease.Term{}, nil
		case !lease.Retryable(err):
			return lease.Term{}, fmt.Errorf("runner: campaign: %w", err)
		case errors.As(err, &held):
			r.observeLeader(held.Record.Holder)
			if held.Wait > 0 {
				wait = min(wait, held.Wait)
			}
		default:
			r.cfg.Logger.Warn("campaign: acquire failed; will retry", "err", err, "retry_in", wait)
		}
		if once && watch.gaveUp(held, r.cfg.CampaignInterval) {
			r.cfg.Logger.Info("not elected: the lease is held", "holder", watch.first.Record.Holder)
			return lease.Term{}, nil
		}
		sleep(ctx, wait)
	}
}

// holderWatch is how RunOnce tells a live holder from a dead one.
type holderWatch struct {
	first *lease.HeldError // the holder's record as first refused
	since time.Time
}

// gaveUp notes the latest refusal (nil after another error) and reports
// whether to stop waiting: the holder's record changed, so the holder is
// alive; or the store judges expiry itself and still says the holder's
// lease is live; or it has not lapsed within its TTL plus two polls.
func (w *holderWatch) gaveUp(held *lease.HeldError, poll time.Duration) bool {
	if w.first == nil {
		if held == nil {
			return false
		}
		w.first, w.since = held, time.Now()
		return false
	}
	changed := held != nil && held.Record.Version != w.first.Record.Version
	// A store that judges expiry itself (Azure's native blob lease) asks a
	// later refusal to wait a full TTL again, for as long as the holder's
	// lease is live, and its renewals need not change the version; on a
	// compare-and-swap store the wait shrinks while the version stays.
	live := held != nil && held.Wait >= held.Record.TTL && time.Since(w.since) > 0
	return changed || live || time.Since(w.since) > w.first.Record.TTL+2*poll
}

// lead runs one term: the task, the renew loop and the health watch share
// one context, and the first of them to end cancels the others. The
// renewals have a context of their own, which ends with the task's unless
// a voluntary step-down is drained (see drain). It returns once the task
// has returned and the lease has been released.
func (r *Runner) lead(ctx context.Context, lt lease.Term) Demotion {
	st := newTerm(lt)
	termCtx, end := context.WithCancelCause(ctx)
	defer end(nil)
	renewCtx, stopRenewing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRenewing()
	r.cfg.Logger.Info("elected", "token", lt.Token)
	r.observeLeader(lt.Holder)
	if r.cfg.OnElected != nil {
		r.cfg.OnElected(lt)
	}

	var wg sync.WaitGroup
	wg.Go(func() { r.keepRenewing(renewCtx, st, end) })
	wg.Go(func() { r.watchHealth(termCtx, st, end) })
	wg.Go(func() { r.drain(termCtx, renewCtx, stopRenewing) })
	taskErr := r.cfg.Task(context.WithValue(termCtx, termKey{}, st))
	end(&stepDown{reason: TaskEnded, err: taskErr})
	stopRenewing()
	wg.Wait()

	d := demotionOf(context.Cause(termCtx), lt.Token)
	if !st.lost() {
		d.Released = r.release(ctx, st.get())
	}
	r.cfg.Logger.Info("demoted", "token", d.Token, "reason", d.Reason.String(), "err", d.Err, "released", d.Released)
	if r.cfg.OnDemoted != nil {
		r.cfg.OnDemoted(d)
	}
	return d
}

// drain stops the renewals once the task's context has ended, except
// after a voluntary step-down (Stopped, Unhealthy) with DrainTimeout set:
// then the renewals go on until the task has returned (renewCtx ends) or
// DrainTimeout has passed. The renew loop's own step-downs (lease lost,
// renew deadline) end the renewals by themselves, drained or not.
func (r *Runner) drain(termCtx, renewCtx context.Context, stopRenewing context.CancelFunc) {
	select {
	case <-renewCtx.Done():
		return
	case <-termCtx.Done():
	}
	reason := demotionOf(context.Cause(termCtx), 0).Reason
	if r.cfg.DrainTimeout == 0 || reason != Stopped && reason != Unhealthy {
		stopRenewing()
		return
	}
	r.cfg.Logger.Info("draining: renewing the lease until the task returns", "reason", reason.String(), "drain_timeout", r.cfg.DrainTimeout)
	timer := time.NewTimer(r.cfg.DrainTimeout)
	defer timer.Stop()
	select {
	case <-renewCtx.Done():
	case <-timer.C:
		r.cfg.Logger.Warn("drain timed out: renewals stop while the task still runs; the lease will lapse", "drain_timeout", r.cfg.DrainTimeout)
		stopRenewing()
	}
}

// release gives the lease up with a context of its own, bounded by
// ReleaseTimeout, so that it runs even when ctx has ended.
func (r *Runner) release(ctx context.Context, t lease.Term) bool {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.cfg.ReleaseTimeout)
	defer cancel()
	if err := r.cfg.Lease.Release(rctx, t); err != nil {
		r.cfg.Logger.Warn("release failed; the lease will lapse after its TTL", "token", t.Token, "err", err)
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
	return d + time.Duration(rand.Float64()*r.cfg.Jitter*float64(d))
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
