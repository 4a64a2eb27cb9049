//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/internal/stopwait"
	"github.com/leasehold/leasehold/runner"
)

// supervisor runs the command as the runner's task: it starts the command
// when elected, and makes sure it is dead before the lease can be anyone
// else's. With --shards it runs one command per shard the same way, each
// dead before its shard can be anyone else's.
type supervisor struct {
	argv     []string
	env      []string // the command's environment, before the LEASEHOLD_ variables of the term
	leaseURL string
	identity string
	// period is the run's own period key (--period, or derived from
	// --every), "" if it has none: the command's LEASEHOLD_PERIOD.
	period string
	// grace is how long the command has between SIGTERM and SIGKILL on a
	// voluntary step-down; margin is how long before the lease's expiry
	// it is killed at the latest.
	grace, margin time.Duration
	// progressFile and progressOnStdout feed runner.Progress.
	progressFile     string
	progressOnStdout bool
	stdout, stderr   io.Writer
	log              *slog.Logger
	// hurry is closed when leasehold is asked to stop a second time: the
	// grace period ends at once.
	hurry <-chan struct{}
	// leading, if set, is told when the command starts leading and when
	// it stops.
	leading func(on bool, token uint64)

	// mu is held while a command is started and registered, and while
	// leasehold is suspended by job control (see suspend).
	mu      sync.Mutex
	started bool                  // a command was started at least once
	running map[*running]struct{} // the commands running: the term's, or one per shard
}

// running is a running command, and its job's context.
type running struct {
	c   *child
	ctx context.Context
}

// job is one run of the command: for a term of the lease, or for a start
// of a shard.
type job struct {
	// token is LEASEHOLD_TOKEN: the term's token, or the shard's epoch.
	token uint64
	// vars are the job's other LEASEHOLD_ variables.
	vars []string
	log  *slog.Logger
	// completed, if not nil, is set when the command exited by itself,
	// before supervise returns (as runner.Completed is told).
	completed *atomic.Bool
}

// ran reports whether the command was started at least once.
func (s *supervisor) ran() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// task is the runner's Task: it runs the command for one term (see
// supervise). LEASEHOLD_PERIOD is the run's own period, never the one the
// term's record names: without --period or --every that is another run's.
func (s *supervisor) task(ctx context.Context) error { return s.termTask(ctx, nil) }

// termTask is task, which also sets completed, if not nil, when the
// command exited by itself (see supervise).
func (s *supervisor) termTask(ctx context.Context, completed *atomic.Bool) error {
	t, _ := runner.Term(ctx)
	var vars []string
	if s.period != "" {
		vars = append(vars, "LEASEHOLD_PERIOD="+s.period)
	}
	return s.supervise(ctx, job{token: t.Token, vars: vars, log: s.log, completed: completed})
}

// supervise runs the command for job j until it exits or ctx ends; ctx
// is a runner's task context, or a shard's, whose deadlines (runner.Expiry)
// the kill follows. It returns the command's own end (nil or a
// *childExit) when the command exited by itself, an *exitError when it
// could not be started, and nil when it was stopped because ctx ended.
// A command that had exited before leasehold signalled it (reaped or
// not) exited by itself, even if ctx ended while its output was still
// being copied: supervise tells the runner so (runner.Completed), and
// RunOnce counts its run as ended (its period done, for a status 0).
func (s *supervisor) supervise(ctx context.Context, j job) error {
	if ctx.Err() != nil { // elected, but already stepping down
		return nil
	}
	// Started and registered under mu, so that a job-control stop either
	// comes before (and the job's end is seen) or stops this command.
	s.mu.Lock()
	if ctx.Err() != nil { // the job ended while leasehold was suspended
		s.mu.Unlock()
		return nil
	}
	c, err := s.start(ctx, j)
	if err != nil {
		s.mu.Unlock()
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		return &exitError{code: code, err: fmt.Errorf("cannot start %s: %w", s.argv[0], err)}
	}
	s.started = true
	r := &running{c: c, ctx: ctx}
	if s.running == nil {
		s.running = map[*running]struct{}{}
	}
	s.running[r] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.running, r)
		s.mu.Unlock()
	}()
	j.log.Info("command started", "token", j.token, "pid", c.pid, "command", s.argv[0])
	s.lead(true, j.token)
	select {
	case <-c.exited:
	case <-ctx.Done():
		if !c.exitedYet() {
			s.lead(false, j.token)
			s.stop(ctx, c, j.log)
			j.log.Info("command stopped", "token", j.token, "status", statusText(childExitOf(c.status)))
			return nil
		}
		<-c.exited // it exited by itself before any signal; its output drains
	}
	s.lead(false, j.token)
	runner.Completed(ctx)
	if j.completed != nil {
		j.completed.Store(true)
	}
	end := childExitOf(c.status)
	j.log.Info("command exited by itself", "token", j.token, "status", statusText(end))
	return end
}

// commandExited reports whether a command was started and none of those
// running still runs (exited, reaped or not), as supervise judges a
// command that exited by itself.
func (s *supervisor) commandExited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.running {
		if !r.c.exitedYet() {
			return false
		}
	}
	return s.started
}

// lead tells leading, if set.
func (s *supervisor) lead(on bool, token uint64) {
	if s.leading != nil {
		s.leading(on, token)
	}
}

func statusText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// stop ends the command once the term's context is cancelled: SIGTERM to
// its process group, then SIGKILL when stopwait.Wait says, which follows
// the lease:
// while the runner drains a voluntary step-down, renewals push the expiry
// on and the grace period decides; after the lease was lost, or renewals
// stopped at the renew deadline, the expiry does. A shard's command
// follows every lease its shard rests on (runner.Expiry of a shard's
// context is the earliest of them): the worker's liveness, and the
// assigner lease while the worker is the group's assigner.
//
// The SIGTERM's log says when the SIGKILL comes: kill_in, when the lease
// no longer renews (its expiry is final) or the grace period ends first;
// otherwise kill_within, the end of the grace period, and
// kill_in_unless_renewed, the margin before the lease's expiry as it
// stands, which each renewal pushes on.
func (s *supervisor) stop(ctx context.Context, c *child, log *slog.Logger) {
	why := context.Cause(ctx)
	graceEnd := time.Now().Add(s.grace)
	// sigterm runs on a goroutine of its own beside stopwait.Wait's
	// timer, which is armed for the kill deadline: the time it takes (two
	// walks of the process table, its log line) does not delay the
	// SIGKILL. c.signal serializes the two.
	sigterm := func(kill time.Time) {
		in := func(at time.Time) time.Duration { return time.Until(at).Round(time.Millisecond) }
		when := []any{"kill_in", in(kill)}
		if kill.Before(graceEnd) && stopwait.Renewing(ctx) {
			when = []any{"kill_within", in(graceEnd), "kill_in_unless_renewed", in(kill)}
		}
		// Signalled first, logged after: nothing on the way to the
		// SIGKILL waits on a log line (see logSink). Under mu, which job
		// control's stop (suspend) holds while leasehold is stopped: a
		// SIGCONT sent while that stop is under way ran the command again
		// with leasehold stopped, unable to renew or kill (red team 15).
		// A command that job control stopped gets its SIGTERM once
		// continued, and is continued only before the kill deadline.
		s.mu.Lock()
		c.signal(syscall.SIGTERM)
		if time.Now().Before(kill) {
			c.signal(syscall.SIGCONT)
		}
		s.mu.Unlock()
		log.Info("stopping the command: SIGTERM to its process group",
			append([]any{"reason", why.Error(), "pid", c.pid}, when...)...)
	}
	if stopwait.Wait(ctx, graceEnd, s.margin, c.exited, s.hurry, sigterm) {
		return
	}
	reason := "grace period over"
	if !time.Now().Before(runner.Expiry(ctx).Add(-s.margin)) {
		reason = "the lease is about to expire or was lost"
	}
	c.signal(syscall.SIGKILL)
	log.Warn("killing the command: SIGKILL to its process group", "reason", reason, "pid", c.pid)
	for {
		select {
		case <-c.exited:
			return
		case <-time.After(5 * time.Second):
			log.Error("the command has not exited 5s after SIGKILL (uninterruptible sleep?)", "pid", c.pid)
		}
	}
}

// start starts the command for job j, with the job in its environment,
// and a goroutine that reaps it (see child).
func (s *supervisor) start(ctx context.Context, j job) (*child, error) {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	base := withoutGiven(s.env)
	cmd.Env = append(base,
		"LEASEHOLD_TOKEN="+strconv.FormatUint(j.token, 10),
		"LEASEHOLD_LEASE="+s.leaseURL,
		"LEASEHOLD_IDENTITY="+s.identity,
	)
	if s.progressFile != "" {
		cmd.Env = append(cmd.Env, "LEASEHOLD_PROGRESS_FILE="+s.progressFile)
	}
	cmd.Env = append(cmd.Env, j.vars...)
	marks := cmd.Env[len(base):]
	cmd.SysProcAttr = sysProcAttr()
	// The command's stdout and stderr are files (or pipes leasehold
	// copies), never writers exec.Cmd would copy: the child reaps the
	// command itself, and exec.Cmd.Wait is never called.
	stdout, err := newOutput(s.stdout, s.progressOnStdout)
	if err != nil {
		return nil, err
	}
	stderr, err := newOutput(s.stderr, false)
	if err != nil {
		stdout.abort()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = stdout.child, stderr.child

	c := &child{exited: make(chan struct{}), outputs: []*output{stdout, stderr}, marks: marks}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the command ends,
		// not the process: keep this thread until the command has exited.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		wake := c.watchExits()
		if wake != nil {
			defer signal.Stop(wake)
		}
		if err := startOwn(cmd); err != nil {
			started <- err
			return
		}
		c.pid = cmd.Process.Pid
		started <- nil
		c.reap(wake)
		_ = cmd.Process.Release() // reaped already: this frees its handle
		c.waitOutputs(outputDrain)
		close(c.exited)
	}()
	err = <-started
	for _, o := range c.outputs {
		if err != nil {
			o.abort()
		} else {
			o.copy(ctx, s.progressOnStdout && o == stdout)
		}
	}
	if err != nil {
		return nil, err
	}
	if s.progressFile != "" {
		go s.watchProgressFile(ctx, c.exited)
	}
	return c, nil
}

// givenVars are the variables leasehold gives the command to say what its
// run is (start, and the shard's job).
var givenVars = []string{"LEASEHOLD_TOKEN", "LEASEHOLD_LEASE", "LEASEHOLD_IDENTITY", "LEASEHOLD_PROGRESS_FILE",
	"LEASEHOLD_PERIOD", "LEASEHOLD_SHARD", "LEASEHOLD_SHARDS", "LEASEHOLD_SLOT", "LEASEHOLD_SLOTS"}

// withoutGiven returns a copy of env without givenVars: the command gets
// only those of its own run, never those leasehold's own environment
// holds (a leasehold run by another's command: a shard's LEASEHOLD_SHARD
// beside this lease's token would pair the shard with a token of another
// counter, and the parent's LEASEHOLD_PERIOD name a period this run does
// not hold; red team 16).
func withoutGiven(env []string) []string {
	out := make([]string, 0, len(env)+len(givenVars))
	for _, kv := range env {
		key, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(givenVars, key) {
			out = append(out, kv)
		}
	}
	return out
}

// watchProgressFile counts each change of the progress file's modification
// time (or its appearance) as progress, until the command exits.
func (s *supervisor) watchProgressFile(ctx context.Context, exited <-chan struct{}) {
	mtime := func() time.Time {
		if fi, err := os.Stat(s.progressFile); err == nil {
			return fi.ModTime()
		}
		return time.Time{}
	}
	last := mtime()
	tick := time.NewTicker(progressPoll)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			if m := mtime(); !m.Equal(last) {
				last = m
				runner.Progress(ctx)
			}
		}
	}
}

// progressPoll is how often the progress file is looked at.
const progressPoll = 250 * time.Millisecond
