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
	log, closeLog, err := newRunLogger(env.stderr, o.logFormat, o.logLevel)
	if err != nil {
		return usageError("run", err)
	}
	defer closeLog()
	v := currentVersion()
	log.Info("leasehold starting", "version", v.Version, "commit", v.commitText(), "go", v.Go,
		"lease", lease.RedactURL(o.lease), "identity", o.identity)
	if err := lookCommand(o.command[0]); err != nil {
		return err
	}
	if adoptOrphans {
		becomeSubreaper(log)
	}
	if o.shards > 0 {
		return runShards(ctx, hurry, o, env, log)
	}
	l, err := openLease(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	if err != nil {
		return stoppedEarly(ctx, o, err)
	}
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	s := newSession(o, env, hurry, log, stopRun)
	s.state.m.addQuorum(l)
	defer s.sup.followJobControl()()
	if o.once && o.minHold > 0 {
		s.hold = &heldLease{Lease: l}
		l = s.hold
	}
	cfg := s.config(l)
	if o.prefer != "" {
		if cfg.Candidates, err = openCandidates(ctx, "run: --prefer", &o.commonOptions); err != nil {
			return err
		}
		cfg.Prefer = o.prefer
	}
	r, err := runner.New(cfg)
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
	o     *runOptions
	log   *slog.Logger
	state *leaderState
	sup   *supervisor
	// stopRun ends the run when the command cannot be started (fatal).
	stopRun context.CancelCauseFunc
	fatal   atomic.Pointer[exitError]
	// ending, with --shards, is the shard whose command ends the run.
	ending atomic.Pointer[endingShard]
	// hold, with --once --min-hold, is the lease, which a second signal
	// during the hold leaves without a release (see runOnce).
	hold *heldLease
	// started is when the command's term began; exited is set once the
	// command has exited.
	started atomic.Pointer[time.Time]
	exited  atomic.Bool
	// With --min-hold (see keepHold): stopTask ends the task's own
	// context, set before started; completed says the command exited by
	// itself (supervise's judgement); taskEnded is closed when the task
	// returns; endOnce ends RunOnce's context.
	stopTask   context.CancelCauseFunc
	signalStop atomic.Bool // keepHold stopped the task on a signal
	completed  atomic.Bool
	taskEnded  chan struct{}
	endOnce    context.CancelCauseFunc
}

func newSession(o *runOptions, env *environment, hurry <-chan struct{}, log *slog.Logger, stopRun context.CancelCauseFunc) *session {
	state := &leaderState{m: newMetrics(o.ttl)}
	return &session{
		o:       o,
		log:     log,
		state:   state,
		stopRun: stopRun,
		sup: &supervisor{
			argv:             o.command,
			env:              env.environ,
			leaseURL:         o.lease,
			identity:         o.identity,
			period:           o.period,
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

// config is the runner's configuration for the flags, on lease l.
func (s *session) config(l lease.Lease) runner.Config {
	o := s.o
	cfg := o.runnerConfig()
	cfg.Lease, cfg.Task, cfg.Logger = l, s.task, s.log
	cfg.HealthCheck = healthCheck(o.healthCmd, o.healthURL, s.sup.env)
	// --once waits for a live leader's renewal, or a dead one's lease to
	// lapse (the runner's OnceTimeout), and gives the store --start-timeout
	// more to answer.
	cfg.OnceTimeout = o.timing.OnceTimeout + o.startTimeout
	cfg.OnElected, cfg.OnDemoted, cfg.OnLeaderChanged, cfg.OnRenew = s.state.elected, s.state.demoted, s.state.observed, s.state.m.renewed
	return cfg
}

// task runs the command for one term; a command that cannot be started
// ends the run.
func (s *session) task(ctx context.Context) error {
	tctx := ctx
	if s.hold != nil {
		var stopTask context.CancelCauseFunc
		tctx, stopTask = context.WithCancelCause(ctx)
		defer stopTask(nil)
		s.stopTask = stopTask
		defer close(s.taskEnded) // --once: one term
	}
	now := time.Now()
	s.started.Store(&now)
	err := s.sup.termTask(tctx, &s.completed)
	if s.hold != nil && s.signalStop.Load() && !s.completed.Load() {
		// keepHold stopped the command on a signal, before it exited by
		// itself: the run ends as stopped, RunOnce's context ended before
		// the task returns (so that the runner does not count it as run,
		// nor hold the lease after it, whatever else ended its term
		// meanwhile).
		s.endOnce(context.Cause(tctx))
	}
	s.exited.Store(true)
	var ee *exitError
	if errors.As(err, &ee) {
		s.fatal.Store(ee)
		s.stopRun(ee)
	}
	return err
}

// runOnce is --once: the runner's result, as leasehold's exit.
//
// With --min-hold, a signal (ctx, runCtx) that comes once the command has
// exited does not end the hold (rule 13: a record held by a minimum hold
// is nobody's to take before it lapses): RunOnce goes on renewing until
// the hold is over, releases and returns. A second signal (hurry: a
// SIGINT or SIGTERM) ends the hold without a release: the record lapses a
// TTL after its last write, and leasehold exits at once. A signal that
// comes before the command has exited stops it as without --min-hold,
// unless the command exits by itself before the stop reaches it (as
// supervise judges): then its hold goes on.
func (s *session) runOnce(ctx, runCtx context.Context, r *runner.Runner) error {
	onceCtx, left := runCtx, make(chan struct{})
	if s.hold != nil {
		c, stop := context.WithCancelCause(context.WithoutCancel(runCtx))
		defer stop(nil)
		onceCtx = c
		s.endOnce, s.taskEnded = stop, make(chan struct{})
		go s.keepHold(runCtx, onceCtx, stop, left)
	}
	type result struct {
		res runner.Once
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := r.RunOnce(onceCtx)
		done <- result{res, err}
	}()
	var x result
	got := false
	select {
	case x = <-done:
		got = true
	case <-left:
	}
	select {
	case <-left: // closed before keepHold ends onceCtx, so seen here even when RunOnce returned first
		st := s.hold.leave() // how far the release has gone by now (a release under way may have returned)
		if st != releaseDone {
			return interrupted(ctx, st.leftLine())
		}
		if !got { // the hold was over and the lease released: RunOnce is returning its result
			x = <-done
		}
	default:
	}
	res, err := x.res, x.err
	if f := s.fatal.Load(); f != nil {
		return f
	}
	if err != nil {
		return exitf(storeExit(err), "run: %v", err)
	}
	if res.Outcome == runner.SteppedDown && s.signalStop.Load() && !s.completed.Load() {
		// Stopped by the signal, whatever else ended the term meanwhile
		// (the runner watched the command's health during the stop).
		return interrupted(ctx, "the command was stopped")
	}
	return onceExit(ctx, res, s.o.period)
}

// onceExit maps RunOnce's result for period (if any) to leasehold's exit:
// the command's own status when it ran to its end, and otherwise why not.
func onceExit(ctx context.Context, res runner.Once, period string) error {
	switch res.Outcome {
	case runner.Ran:
		return res.Err
	case runner.NotElected:
		return exitf(exitNotElected, "run: not elected: the lease is held by %q (token %d)", res.Holder(), res.Record.Token)
	case runner.AlreadyRan:
		sched, state := runner.ScheduleOf(res.Record.Annotations), "started"
		if sched.Done {
			state = "done"
		}
		return exitf(exitAlreadyRan, "run: not run: period %s already ran: the lease names period %s (%s)", period, sched.Period, state)
	case runner.Unreachable:
		return exitf(exitUnavailable, "run: not elected: the store did not answer: %v", res.Err)
	case runner.SteppedDown:
		if res.Demotion.Reason == runner.Stopped && ctx.Err() != nil {
			return interrupted(ctx, "the command was stopped")
		}
		return exitf(exitSteppedDown, "run: leadership ended before the command finished, and it was stopped: %v", res.Demotion)
	}
	return interrupted(ctx, "before the command ran")
}

// keepHold is runOnce's watch of the signals with --min-hold: once runCtx
// ends, it stops the command (the task's context; the task then ends
// onceCtx, RunOnce's) unless the command has exited, or exits by itself
// before the stop reaches it; if it has, the hold goes on, until a second
// signal: then the lease is left (heldLease.leave), onceCtx ended and
// left closed.
func (s *session) keepHold(runCtx, onceCtx context.Context, stop context.CancelCauseFunc, left chan<- struct{}) {
	select {
	case <-runCtx.Done():
	case <-onceCtx.Done():
		return
	}
	// Whether the command had exited is asked as supervise asks it (the
	// process, reaped or not), not from the task's return, which comes
	// only once its output is copied: a signal in between was taken for
	// one before the exit, and ended the hold (red team 15).
	started := s.started.Load()
	if s.fatal.Load() != nil || started == nil {
		stop(context.Cause(runCtx))
		return
	}
	if !(s.exited.Load() || s.sup.commandExited()) {
		holdChecked()
		// The command ran when the signal came, as far as could be seen;
		// it may yet exit by itself before the stop reaches it, which
		// supervise judges. So the task's own context ends, not
		// RunOnce's: a command stopped ends the run (the task ends
		// RunOnce's context before it returns), one that exited by itself
		// keeps its hold. Ending RunOnce's context here made the runner
		// release at once the hold of a command supervise then found
		// exited by itself (red team 16).
		s.signalStop.Store(true)
		s.stopTask(context.Cause(runCtx))
		select {
		case <-s.taskEnded:
		case <-onceCtx.Done():
			return
		}
		if !s.completed.Load() {
			stop(context.Cause(runCtx)) // the task ended it, unless it returned first
			return
		}
	}
	until := started.Add(s.o.minHold)
	s.log.Warn("signal received after the command exited: the minimum hold goes on until it is over, then the lease is released; a second SIGTERM or SIGINT ends the hold without releasing the lease (it then lapses a TTL after its last write)",
		"reason", context.Cause(runCtx).Error(), "hold_until", until.UTC().Format(time.RFC3339), "hold_left", time.Until(until).Round(time.Second))
	select {
	case <-s.sup.hurry:
	case <-onceCtx.Done():
		return
	}
	s.log.Warn("second signal: "+s.hold.leave().leftLine(), "hold_until", until.UTC().Format(time.RFC3339))
	close(left) // before onceCtx ends: RunOnce then returns Ran, and runOnce must not take that for the exit
	stop(context.Cause(runCtx))
}

// heldLease is the lease of a --once --min-hold run: once left, it writes
// no more (no renewal, no release), so that the record lapses a TTL after
// its last write. A release begun before it was left (the hold over) may
// still land: leave says how far it had gone.
type heldLease struct {
	lease.Lease
	mu      sync.Mutex
	gone    bool
	release releaseState
}

// releaseState is how far a heldLease's release had gone.
type releaseState int

const (
	releaseNone     releaseState = iota // not begun
	releaseUnderway                     // sent, or being resolved (a read-back), its answer not in
	releaseDone                         // it returned: released
	releaseFailed                       // it returned an error
)

// leftLine says what leaving the hold with the release at st did.
func (st releaseState) leftLine() string {
	switch st {
	case releaseUnderway:
		return "the minimum hold was over and its release under way; leasehold did not wait for it: the lease is released if it landed, and otherwise lapses a TTL after its last write"
	case releaseDone:
		return "the minimum hold was over and the lease released"
	case releaseFailed:
		return "the minimum hold was over and its release failed; the lease lapses a TTL after its last write"
	}
	return "the minimum hold was left without releasing the lease; it lapses a TTL after its last write"
}

// errLeft is what heldLease's writes return once it was left: the lease
// counts as lost, so that the runner gives up its writes at once.
var errLeft = fmt.Errorf("leasehold: the minimum hold was left on a second signal: %w", lease.ErrLost)

// leave marks the lease left, and returns how far its release had gone.
func (h *heldLease) leave() releaseState {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone = true
	return h.release
}

// left reports whether the lease was left.
func (h *heldLease) left() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone
}

func (h *heldLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if h.left() {
		return lease.Term{}, errLeft
	}
	return h.Lease.Renew(ctx, t)
}

func (h *heldLease) Release(ctx context.Context, t lease.Term) error {
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		return errLeft
	}
	h.release = releaseUnderway
	h.mu.Unlock()
	err := h.Lease.Release(ctx, t)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.release = releaseDone
	if err != nil {
		h.release = releaseFailed
	}
	return err
}

// RenewalsShow and FollowerReads pass those of the lease on: the runner
// asks for them (a wrapper that hid FollowerReads made an Azure run with
// --min-hold follow at the default rate: red team 15).
func (h *heldLease) RenewalsShow() bool { return lease.RenewalsShow(h.Lease) }

func (h *heldLease) FollowerReads() int { return lease.FollowerReads(h.Lease) }

// Idle passes the lease's on (lease.Idler), and returns at once for a
// lease that has none or once the hold was left (the runner sleeps the
// rest): a quorum reads the members its term does not hold between
// writes, without which a member back from an outage is never held again
// and a second member's outage ends the hold (red team 21).
func (h *heldLease) Idle(ctx context.Context, until time.Time) {
	if l, ok := h.Lease.(lease.Idler); ok && !h.left() {
		l.Idle(ctx, until)
	}
}

// holdChecked is called once keepHold has found the command still
// running on a signal, before it stops it: tests make the command exit
// there.
var holdChecked = func() {}
