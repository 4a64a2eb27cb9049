//go:build linux

package main

// Red team 15: holes found in red team 14's fixes (the stop path's SIGTERM
// on its own goroutine, the minimum hold after a signal, the log sink, the
// lease wrapper of the hold), each fixed; each test failed before its fix.

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam15StopContinuesACommandJobControlStopped (rule 14: "under job
// control (Ctrl-Z ...) the command is stopped before the lease can be
// taken"; suspend: "A command never runs while leasehold is stopped").
// A term ends (here a voluntary step-down; a lost lease or the renew
// deadline the same) just as a Ctrl-Z comes in. suspend stops the
// command's group (SIGSTOP) and then leasehold itself; the stop path's
// SIGTERM, now sent by stopwait.Wait's begin on a goroutine of its own,
// sends SIGTERM and then SIGCONT to the group, the SIGCONT so that a
// command job control stopped gets its SIGTERM. Nothing orders the two:
// when the SIGCONT comes after suspend's SIGSTOP, the command runs again
// while leasehold is stopped: no renewal, no SIGKILL at the kill deadline,
// for as long as the user leaves leasehold stopped, and after a TTL
// another instance leads beside it. A command that handles SIGTERM (a
// graceful shutdown that takes long, or one that ignores it, as here) runs
// on. The test pins the interleaving by holding the child's mutex, which
// c.signal holds while it walks the process table, so that suspend's
// SIGSTOP is first in line and the stop's SIGTERM and SIGCONT after it;
// without the mutex the same order comes whenever the step-down's goroutine
// runs between suspend's SIGSTOP and the kernel stopping leasehold, or
// suspend's SIGSTOP waits on c.mu while the SIGTERM's walk holds it (a
// command with a member outside its group: signalFamily walks the process
// table twice, familyPause apart, under c.mu).
func TestRedTeam15StopContinuesACommandJobControlStopped(t *testing.T) {
	l, err := memlease.Default.Open(memName("rt15-jobcontrol"), lease.Options{Identity: "j", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := &supervisor{argv: []string{"sh", "-c", `trap "" TERM; while :; do sleep 0.05; done`}, env: os.Environ(),
		grace: 3 * time.Second, margin: time.Second,
		stdout: &syncBuffer{}, stderr: &syncBuffer{}, log: slog.New(slog.DiscardHandler)}
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler), Task: func(ctx context.Context) error {
		return s.supervise(ctx, job{token: 1, log: s.log})
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	var c *child
	eventually(t, 5*time.Second, "the command runs", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for r := range s.running {
			c = r.c
		}
		return c != nil
	})
	pid := c.pid

	c.mu.Lock() // a walk of the process table in progress
	var ranWhileStopped time.Duration
	seenStopped := false
	suspended := make(chan struct{})
	go func() {
		defer close(suspended)
		s.suspend(syscall.SIGTSTP, func() {
			// leasehold is stopped here, until this returns. The
			// command stops once it takes the SIGSTOP, which a loaded
			// machine may delay: from then on it must stay stopped.
			start := time.Now()
			for time.Since(start) < 2*time.Second {
				switch stopped := isStopped(pid); {
				case stopped:
					seenStopped = true
				case seenStopped && alive(pid):
					ranWhileStopped = time.Since(start)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}()
	time.Sleep(100 * time.Millisecond) // suspend waits for c.mu, to send SIGSTOP
	cancel()                           // the term ends: the step-down stops the command
	time.Sleep(100 * time.Millisecond) // supervise waits for c.mu too (exitedYet)
	c.mu.Unlock()
	<-suspended
	if !seenStopped {
		t.Errorf("the command (pid %d) was never seen stopped in the 2s leasehold was stopped: job control's SIGSTOP was undone at once", pid)
	}
	if ranWhileStopped > 0 {
		t.Errorf("the command (pid %d) ran again %v after job control stopped it, while leasehold was stopped: the step-down's SIGCONT came after suspend's SIGSTOP", pid, ranWhileStopped.Round(time.Millisecond))
	}
}

// TestRedTeam15SignalJustAfterTheCommandEndsTheMinimumHold (rule 13: "a
// record left held by a minimum hold is nobody's to take before it
// lapses"; run.go runOnce: "a signal ... that comes once the command has
// exited does not end the hold"). keepHold tells a signal after the
// command's exit from one before by session.exited, which session.task
// sets only once supervise has returned: after the command was reaped,
// after its leftovers were killed and after its output was copied, which
// takes up to outputDrain (1 s) when leasehold copies the output
// (--progress-on-stdout, or a stdout that is no file) and the reader is
// slow. A SIGTERM in that window, the command already gone, ends RunOnce's
// context as if the command still ran: supervise says the command
// completed (runner.Completed), holdUntil writes the hold once, sees its
// context ended and releases; leasehold exits minutes before the hold is
// over and a duplicate trigger runs the job again inside it - red team 14's
// F5, reopened for the second after every exit.
func TestRedTeam15SignalJustAfterTheCommandEndsTheMinimumHold(t *testing.T) {
	dir := t.TempDir()
	ran := dir + "/ran"
	name := memName("rt15-minhold-window")
	env, _, stderr := testEnv(nil)
	out := &heldWriter{w: &syncBuffer{}, held: make(chan struct{})}
	env.stdout = out // a slow reader of the command's stdout
	defer out.release()
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	defer close(hurry)
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
			"--min-hold", "10m", "--", "sh", "-c", `echo "work done"; echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the command ran", func() bool { return fileExists(ran) })
	time.Sleep(200 * time.Millisecond) // it has exited: leasehold still copies its output
	cancel(&signalCause{sig: 15})      // SIGTERM, after the command exited
	holdKept(t, name, ran, exited, stderr, 5*time.Second, "a first SIGTERM that came after its command exited")
}

// holdKept checks that a SIGTERM (what) left a run's 10m minimum hold in
// place: leasehold did not exit within wait, the record on the lease
// name is still held for the hold, and a duplicate fired then does not run
// the job (which appends its identity to the file ran) again.
func holdKept(t *testing.T, name, ran string, exited <-chan int, stderr fmt.Stringer, wait time.Duration, what string) {
	t.Helper()
	select {
	case code := <-exited:
		t.Errorf("leasehold exited %d on %s, within a 10m minimum hold; stderr:\n%s", code, what, stderr)
	case <-time.After(wait):
	}
	if rec := observe(t, name); rec.Released || !runner.ScheduleOf(rec.Annotations).Hold {
		t.Errorf("the record is %+v: the 10m minimum hold was ended by %s", rec, what)
	}
	code, _ := leasehold(t, context.Background(), "run", "--once", "--lease", "mem://"+name, "--identity", "duplicate", "--ttl", "2s", "--",
		"sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran)
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "\n") > 1 {
		t.Errorf("a duplicate fired within the 10m hold ran the job again (exited %d): %q", code, b)
	}
}

// TestRedTeam15StalledStderrKeepsLeaseholdFromExiting (logsink.go: "a
// writer that never blocks its caller"; docs/cli.md: a second signal
// "exits at once"). cmdRun's deferred closeLog waits until every queued
// line is written to stderr (logSink.close: <-s.done), without a bound:
// with stderr a pipe nobody reads (a stalled log collector, the very case
// the sink was made for), leasehold run, its command done and the lease
// released, never exits: not on its own, not on a first signal, not on a
// second. A --once job's exit status never comes; an orchestrator's stop
// waits for its timeout and SIGKILL.
func TestRedTeam15StalledStderrKeepsLeaseholdFromExiting(t *testing.T) {
	name := memName("rt15-stalled-stderr")
	env, _, _ := testEnv(nil)
	errOut := &heldWriter{w: &syncBuffer{}, held: make(chan struct{})}
	env.stderr = errOut // nobody reads leasehold's stderr
	defer errOut.release()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	hurry := make(chan struct{})
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s", "--", "true"}, env)
	}()
	eventually(t, 10*time.Second, "the run is over and the lease released", func() bool {
		b, ok := memlease.Default.Bytes(name)
		return ok && len(b) > 0 && observe(t, name).Released
	})
	select {
	case code := <-exited:
		t.Logf("exited %d", code)
		return
	case <-time.After(3 * time.Second):
	}
	cancel(&signalCause{sig: 15})
	var once sync.Once
	once.Do(func() { close(hurry) }) // and a second signal
	select {
	case code := <-exited:
		t.Logf("exited %d after two signals", code)
	case <-time.After(5 * time.Second):
		t.Errorf("leasehold run, its command done and the lease released, did not exit within 8 s, nor on two signals, with its stderr stalled")
	}
}

// manyReads is a lease whose store asks its followers for more reads per
// renewal than the runner's default, as Azure Blob's does
// (lease.FollowerReader).
type manyReads struct{ lease.Lease }

func (manyReads) FollowerReads() int { return 7 }

// TestRedTeam15MinHoldHidesTheStoresFollowerReads (docs: Azure Blob's TTL
// cannot go below 15 s, so its lease asks followers for more reads per
// renewal, lease.FollowerReader, the only way its handovers get quicker):
// run --once --min-hold wraps the lease in heldLease, which embeds
// lease.Lease and forwards RenewalsShow but not FollowerReads, so
// runner.Config.Resolve (lease.FollowerReads(c.Lease)) finds no
// FollowerReader and a --once --min-hold run on Azure follows at the
// default rate: slower handovers, only with --min-hold. Not a safety
// hole; every optional interface the runner looks for is lost the same way
// to the next one added.
func TestRedTeam15MinHoldHidesTheStoresFollowerReads(t *testing.T) {
	l, err := memlease.Default.Open(memName("rt15-follower-reads"), lease.Options{Identity: "a", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inner := manyReads{l}
	if got, want := lease.FollowerReads(&heldLease{Lease: inner}), lease.FollowerReads(inner); got != want {
		t.Errorf("lease.FollowerReads of the --min-hold wrapper is %d, of the lease it wraps %d", got, want)
	}
}
