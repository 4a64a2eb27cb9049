//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// cmdRun is leasehold run: parse, reach the store, then campaign and lead
// until stopped (or once, with --once).
func cmdRun(ctx context.Context, hurry <-chan struct{}, args []string, env *environment) error {
	o, err := parseRun(args, env)
	if err != nil {
		return err
	}
	log, err := newLogger(env.stderr, o.logFormat, o.logLevel)
	if err != nil {
		return usageError("run", err)
	}
	if err := lookCommand(o.command[0]); err != nil {
		return err
	}
	l, err := openLease(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	if err != nil {
		return stoppedEarly(ctx, o, err)
	}
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	s := newSession(o, env, hurry, log, l, stopRun)
	r, err := runner.New(s.config())
	if err != nil {
		return usageError("run", err)
	}
	if _, err := readLease(ctx, l, o.lease, o.startTimeout, log); err != nil {
		return stoppedEarly(ctx, o, err)
	}
	if o.listen != "" {
		stop, err := s.state.serve(ctx, o.listen, log)
		if err != nil {
			return exitf(exitConfig, "run: --listen %s: %v", o.listen, err)
		}
		defer stop()
	}
	if o.once {
		return s.runOnce(ctx, runCtx, r)
	}
	err = r.Run(runCtx)
	if f := s.fatal.Load(); f != nil {
		return f
	}
	return err
}

// lookCommand checks that the command can be found, as a shell would.
func lookCommand(name string) error {
	_, err := exec.LookPath(name)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		return exitf(exitNotFound, "run: command %q: %v", name, errors.Unwrap(err))
	}
	return exitf(exitCannotRun, "run: command %q: %v", name, errors.Unwrap(err))
}

// stoppedEarly is the outcome of err at start: nil when a signal stopped
// leasehold before it campaigned (exit 0, as after any stop without --once).
func stoppedEarly(ctx context.Context, o *runOptions, err error) error {
	if ctx.Err() != nil && !o.once {
		return nil
	}
	return err
}

// session is one leasehold run: the runner's task and callbacks, and what
// they found out.
type session struct {
	o       *runOptions
	log     *slog.Logger
	watched *watchedLease
	state   *leaderState
	sup     *supervisor
	// stopRun ends the run: when the command cannot be started (fatal),
	// or when --once has campaigned long enough (giveUp).
	stopRun context.CancelCauseFunc
	fatal   atomic.Pointer[exitError]
	giveUp  atomic.Pointer[time.Timer]
}

func newSession(o *runOptions, env *environment, hurry <-chan struct{}, log *slog.Logger, l lease.Lease, stopRun context.CancelCauseFunc) *session {
	state := &leaderState{m: newMetrics()}
	return &session{
		o:       o,
		log:     log,
		watched: &watchedLease{Lease: l},
		state:   state,
		stopRun: stopRun,
		sup: &supervisor{
			argv:             o.command,
			env:              env.environ,
			leaseURL:         o.lease,
			identity:         o.identity,
			grace:            o.grace,
			margin:           o.killMargin,
			progressFile:     o.progressFile,
			progressOnStdout: o.progressOnStdout,
			stdout:           env.stdout,
			stderr:           env.stderr,
			log:              log.With("identity", o.identity),
			hurry:            hurry,
			leading:          state.setLeading,
		},
	}
}

// config is the runner's configuration for the flags.
func (s *session) config() runner.Config {
	o := s.o
	return runner.Config{
		Lease:            s.watched,
		Task:             s.task,
		RenewDeadline:    o.renewDeadline,
		RenewInterval:    o.renewInterval,
		CampaignInterval: o.campaignInterval,
		HealthCheck:      healthCheck(o.healthCmd, o.healthURL, s.sup.env),
		HealthInterval:   o.healthInterval,
		HealthTimeout:    o.healthTimeout,
		HealthThreshold:  o.healthThreshold,
		StallTimeout:     o.stallTimeout,
		CoolDown:         o.coolDown,
		// Renew through the grace period and the kill, and a TTL more as a
		// backstop for a command that does not die.
		DrainTimeout:     o.grace + o.ttl,
		StopWhenTaskEnds: !o.rerun,
		OnElected:        s.elected,
		OnDemoted:        s.state.demoted,
		OnLeaderChanged:  s.state.observed,
		OnRenew:          s.state.m.renewed,
		Logger:           s.log,
	}
}

// task runs the command for one term; a command that cannot be started
// ends the run.
func (s *session) task(ctx context.Context) error {
	err := s.sup.task(ctx)
	var ee *exitError
	if errors.As(err, &ee) {
		s.fatal.Store(ee)
		s.stopRun(ee)
	}
	return err
}

func (s *session) elected(t lease.Term) {
	if tm := s.giveUp.Load(); tm != nil {
		tm.Stop()
	}
	s.state.elected(t)
}

// runOnce is --once. RunOnce waits for a live leader's renewal, or a dead
// one's lease to lapse, at most the TTL and two polls; giveUp also bounds
// the campaign when the store does not answer.
func (s *session) runOnce(ctx, runCtx context.Context, r *runner.Runner) error {
	bound := s.o.ttl + 3*s.o.campaignIntervalOrDefault() + s.o.startTimeout
	s.giveUp.Store(time.AfterFunc(bound, func() { s.stopRun(errGaveUp) }))
	ran, err := r.RunOnce(runCtx)
	s.giveUp.Load().Stop()
	if f := s.fatal.Load(); f != nil {
		return f
	}
	return onceOutcome(ctx, ran && s.sup.ran(), err, s.watched, s.state)
}

var errGaveUp = errors.New("campaign bound passed")

// onceOutcome maps RunOnce's result to leasehold's exit: the command's own
// status when it ran to its end, and otherwise why not.
func onceOutcome(ctx context.Context, ran bool, err error, watched *watchedLease, state *leaderState) error {
	if !ran {
		switch {
		case err != nil:
			return exitf(storeExit(err), "run: %v", err)
		case ctx.Err() != nil:
			return interrupted(ctx, "before the command ran")
		}
		if last := watched.lastAcquireErr(); last != nil && !errors.Is(last, lease.ErrHeld) {
			return exitf(exitUnavailable, "run: not elected: the store did not answer: %v", last)
		}
		return exitf(exitNotElected, "run: not elected: the lease is held by %q", state.lastLeader())
	}
	var d runner.Demotion
	if errors.As(err, &d) {
		if d.Reason == runner.Stopped && ctx.Err() != nil {
			return interrupted(ctx, "the command was stopped")
		}
		return exitf(exitSteppedDown, "run: leadership ended before the command finished, and it was stopped: %v", d)
	}
	return err
}

// interrupted is the exit after a signal: 128 + its number.
func interrupted(ctx context.Context, what string) error {
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return exitf(exitSignal+int(sc.sig), "run: interrupted by %v: %s", sc.sig, what)
	}
	return exitf(exitSignal+15, "run: interrupted: %s", what)
}

// openLease opens the lease, retrying what may pass until timeout (some
// backends reach the store when opening: DynamoDB describes its table).
func openLease(ctx context.Context, leaseURL string, opts lease.Options, timeout time.Duration, log *slog.Logger) (lease.Lease, error) {
	return atStart(ctx, leaseURL, timeout, log, func() (lease.Lease, error) { return lease.Open(ctx, leaseURL, opts) })
}

// readLease reads the lease's record, retrying what may pass until
// timeout. A lease never acquired yet reads as a zero Record.
func readLease(ctx context.Context, l lease.Lease, leaseURL string, timeout time.Duration, log *slog.Logger) (lease.Record, error) {
	return atStart(ctx, leaseURL, timeout, log, func() (lease.Record, error) {
		rec, err := l.Observe(ctx)
		if errors.Is(err, lease.ErrNoRecord) {
			return lease.Record{}, nil
		}
		return rec, err
	})
}

// atStart runs f, a first contact with the store, until it succeeds, fails
// for good, or timeout passes, so that a wrong URL, a missing bucket or an
// unreachable store is reported at start (exit 78 or 69) instead of being
// retried for ever.
func atStart[T any](ctx context.Context, leaseURL string, timeout time.Duration, log *slog.Logger, f func() (T, error)) (T, error) {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for {
		v, err := f()
		switch {
		case err == nil:
			return v, nil
		case ctx.Err() != nil:
			return v, interrupted(ctx, "while reaching the store")
		case errors.Is(err, lease.ErrInvalid): // the message names the URL or option
			return v, exitf(exitConfig, "%v", err)
		case !lease.Retryable(err):
			return v, exitf(exitConfig, "cannot use the lease %s: %v", lease.RedactURL(leaseURL), err)
		case time.Now().Add(wait).After(deadline):
			return v, exitf(exitUnavailable, "cannot reach the store of %s within --start-timeout (%v): %v", lease.RedactURL(leaseURL), timeout, err)
		}
		log.Debug("cannot reach the store; retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// watchedLease remembers the latest Acquire error, so that --once can tell
// "held by another" from "the store did not answer".
type watchedLease struct {
	lease.Lease
	mu      sync.Mutex
	lastErr error
}

func (w *watchedLease) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := w.Lease.Acquire(ctx)
	w.mu.Lock()
	w.lastErr = err
	w.mu.Unlock()
	return t, err
}

func (w *watchedLease) lastAcquireErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastErr
}

func (s *leaderState) lastLeader() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leader
}

// signalCause is the cause of the context main cancels on SIGINT or SIGTERM.
type signalCause struct{ sig syscall.Signal }

func (s *signalCause) Error() string { return fmt.Sprintf("received %v", s.sig) }
