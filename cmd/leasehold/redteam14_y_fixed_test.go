//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// Red team 14's findings on periods and holds, fixed: each test failed on
// the code before its fix.

// TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand (rule 13; the help:
// "LEASEHOLD_PERIOD  with --period or --every: the period key it runs
// for"): supervisor.task set LEASEHOLD_PERIOD from the term's record,
// whatever this run's flags: a run without --period, on a lease whose
// record names the period a scheduled run finished, started its command
// with LEASEHOLD_PERIOD set to that finished period, and a job that reads
// the variable to know which tick to process processed it again. It is
// now the run's own period, and unset without one.
func TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand(t *testing.T) {
	const period = "2026-12-06T11:00:00Z"
	dir := t.TempDir()
	name := "mem://" + memName("rt14-period-leak")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "cron", "--period", period, "--", "true"); code != 0 {
		t.Fatalf("the scheduled run exited %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "period")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "manual", "--",
		"sh", "-c", `printf %s "${LEASEHOLD_PERIOD-unset}" > "$0"`, out); code != 0 {
		t.Fatalf("the manual run exited %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "unset" {
		t.Errorf("a run without --period started its command with LEASEHOLD_PERIOD=%q, the period another run finished", b)
	}
	// A run with a period of its own gets it.
	const next = "2026-12-06T12:00:00Z"
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "cron", "--period", next, "--",
		"sh", "-c", `printf %s "${LEASEHOLD_PERIOD-unset}" > "$0"`, out); code != 0 {
		t.Fatalf("the next scheduled run exited %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != next {
		t.Errorf("a run with --period %s started its command with LEASEHOLD_PERIOD=%q", next, b)
	}
}

// TestRedTeam14SucceededPeriodRunsAgain (rule 13): a --once --period run
// with --retry-failed whose command exits 0 by itself, then leasehold gets
// SIGTERM while it still copies the command's output (its stdout is a pipe
// leasehold copies, and the copy is slow: waitOutputs waits up to
// outputDrain, 1s, before the command counts as exited). supervise's
// select saw the context end before c.exited, "stopped" a command that had
// already exited, and reported it stopped; runTask counted a task whose
// context had ended as not run to its end: no done mark, leasehold exited
// 143, and the next trigger of the same period ran the command again,
// although its first run succeeded. supervise now tells a command reaped
// before it was signalled from one it stopped, and says so to the runner
// (runner.Completed).
func TestRedTeam14SucceededPeriodRunsAgain(t *testing.T) {
	const period = "2026-12-06T12:00:00Z"
	dir := t.TempDir()
	pidFile, ran := filepath.Join(dir, "pid"), filepath.Join(dir, "ran")
	name := memName("rt14-period-done")
	env, _, buf := testEnv(nil)
	out := &heldWriter{w: buf, held: make(chan struct{})}
	env.stdout = out
	defer out.release()
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, nil, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
			"--period", period, "--retry-failed", "--", "sh", "-c", `echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; echo "work done"; echo 1 >> "$1"`, pidFile, ran}, env)
	}()
	pid := pidIn(t, pidFile)
	eventually(t, 10*time.Second, "the command exited 0 by itself", func() bool { return !alive(pid) && fileExists(ran) })
	cancel(&signalCause{sig: 15}) // SIGTERM, after the command has exited
	code := <-exited
	if code != 0 {
		t.Errorf("the command exited 0 before SIGTERM; leasehold exited %d, want 0", code)
	}
	rec := observe(t, name)
	if s := runner.ScheduleOf(rec.Annotations); !s.Done {
		t.Errorf("the command exited 0 before SIGTERM; leasehold exited %d and left the record %+v without the done mark for period %s", code, s, period)
	}
	// The next trigger of the period, with --retry-failed.
	env2, _, _ := testEnv(nil)
	code2 := mainWith(context.Background(), nil, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "second", "--ttl", "2s",
		"--period", period, "--retry-failed", "--", "sh", "-c", `echo 2 >> "$0"`, ran}, env2)
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "\n") > 1 {
		t.Errorf("period %s ran twice (second trigger exited %d), although its first run succeeded: %q", period, code2, b)
	}
}

// heldWriter holds every write to w until release: a pipe whose reader
// stalled.
type heldWriter struct {
	w    *syncBuffer
	held chan struct{}
	once sync.Once
}

func (h *heldWriter) Write(p []byte) (int, error) {
	<-h.held
	return h.w.Write(p)
}

func (h *heldWriter) release() { h.once.Do(func() { close(h.held) }) }

// TestRedTeam14SigtermEndsTheMinimumHold (rule 13: "a record left held by
// a minimum hold is nobody's to take before it lapses, its writer's
// included"; the help: leasehold "keeps renewing it ... until D has
// passed, releases it and exits", and the docs: "it exits then, not
// before"): leasehold run --once --min-hold, its command done and the hold
// written, got SIGTERM (the orchestrator stops a task whose command has
// finished): runOnce handed RunOnce the context the signal ends, holdUntil
// stopped at once and the lease was released, minutes before the hold was
// over, and a duplicate trigger ran the job a second time inside the
// window. Now a first signal after the command exited leaves the hold
// going (a duplicate still exits 75); a second one ends it without
// releasing: the record lapses a TTL after its last write.
func TestRedTeam14SigtermEndsTheMinimumHold(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	name := memName("rt14-minhold")
	job := []string{"sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran}
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	exited := make(chan int, 1)
	env, _, stderr := testEnv(nil)
	go func() {
		exited <- mainWith(ctx, hurry, append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s", "--min-hold", "10m", "--"}, job...), env)
	}()
	eventually(t, 10*time.Second, "the hold is written", func() bool {
		b, ok := memlease.Default.Bytes(name)
		return ok && runner.ScheduleOf(observe(t, name).Annotations).Hold && len(b) > 0
	})
	cancel(&signalCause{sig: 15})
	eventually(t, 10*time.Second, "leasehold says the hold goes on, or exits", func() bool {
		return strings.Contains(stderr.String(), "the minimum hold goes on") || len(exited) > 0
	})
	select {
	case code := <-exited:
		t.Fatalf("leasehold exited %d on a first SIGTERM during its minimum hold; stderr:\n%s", code, stderr)
	default:
	}
	code, _ := leasehold(t, context.Background(), append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "duplicate", "--ttl", "2s", "--"}, job...)...)
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "\n") > 1 || code != exitNotElected {
		t.Errorf("a duplicate fired within the 10m hold, after a SIGTERM to the holder, exited %d (want %d); the job ran: %q", code, exitNotElected, b)
	}
	close(hurry) // the second signal: leave the hold without releasing
	select {
	case code := <-exited:
		if code != exitSignal+15 {
			t.Errorf("leasehold exited %d on a second SIGTERM during its hold, want %d", code, exitSignal+15)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("leasehold did not exit on a second SIGTERM during its minimum hold")
	}
	if rec := observe(t, name); rec.Released || !runner.ScheduleOf(rec.Annotations).Hold {
		t.Errorf("after a second SIGTERM the record is %+v, want it held (the hold's), to lapse a TTL after its last write", rec)
	}
}
