//go:build redteam14open && linux

package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// Red team 14: holes found in the CLI, each reproduced by a test that
// fails on the code as it stands. Run with -tags redteam14open.

// TestRedTeam14GroupStartHangsPastStartTimeout: a store that stops
// answering (every call hangs) at start keeps leasehold status --shards
// and leasehold run --shards waiting for ever: openGroup's listing (and
// status's shard.ReadStatus) runs under the process's context alone, with
// neither --start-timeout nor the call timeout bounding it, so the promised
// "cannot reach the store ... within --start-timeout" never comes. A lease
// (status, run without --shards) is bounded by its call timeout and gives
// up at --start-timeout.
func TestRedTeam14GroupStartHangsPastStartTimeout(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--shards", "2"},
		{"run", "--shards", "2", "--", "true"},
	} {
		t.Run(args[0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				id := memName("rt14-hang-" + args[0])
				memlease.Default.Hang(id)
				defer memlease.Default.Heal(id)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan int, 1)
				go func() {
					env, _, _ := testEnv(nil)
					full := append([]string{args[0], "--lease", "mem://" + id, "--identity", id, "--start-timeout", "1s"}, args[1:]...)
					done <- mainWith(ctx, nil, full, env)
				}()
				time.Sleep(time.Hour) // fake time: an hour past --start-timeout
				select {
				case code := <-done:
					if code != exitUnavailable {
						t.Errorf("exit %d, want %d (cannot reach the store within --start-timeout)", code, exitUnavailable)
					}
				default:
					t.Errorf("leasehold %s with a store that hangs still waits an hour after --start-timeout (1s)", args[0])
				}
				cancel()
				<-done
			})
		})
	}
}

// stallingWriter passes writes to w until stall is called; from then on
// every write blocks until unstall is called, as a write to a pipe whose
// reader stopped reading (a log collector that stalls, a full pipe
// buffer) blocks leasehold's stderr.
type stallingWriter struct {
	w       *syncBuffer
	mu      sync.Mutex
	stalled chan struct{} // nil: not stalled; closed by unstall
}

func (s *stallingWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	ch := s.stalled
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return s.w.Write(p)
}

func (s *stallingWriter) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = make(chan struct{})
}

func (s *stallingWriter) unstall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stalled != nil {
		close(s.stalled)
	}
}

// TestRedTeam14StalledStderrKeepsTheCommandPastTheLease (rule 14, rule 1):
// leasehold's stderr stops taking writes (a log pipe whose reader
// stalled: a full pipe blocks write(2) on fd 2), then the leader is cut off
// from the store. The runner's step-down timer cancels the task without
// logging, but supervisor.stop logs the SIGTERM line (and the SIGKILL
// line) before it signals: the log write blocks, and neither SIGTERM nor
// SIGKILL is ever sent. A follower takes the lease over a TTL later, with
// the old leader's command still running beside it.
func TestRedTeam14StalledStderrKeepsTheCommandPastTheLease(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("rt14-stalled-stderr")
	id := name + "-p" // memlease's faults are by identity, process-wide
	env, _, buf := testEnv(nil)
	errw := &stallingWriter{w: buf}
	env.stderr = errw
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, nil, append([]string{"run", "--lease", "mem://" + name, "--identity", id, "--ttl", "2s", "--grace", "1m", "--"}, stubborn(pidFile)...), env)
	}()
	pid := pidIn(t, pidFile)
	defer func() {
		memlease.Default.Heal(id)
		errw.unstall()
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("leasehold did not exit once its stderr took writes again")
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()

	l, err := memlease.Default.Open(name, lease.Options{Identity: name + "-follower", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	elected := make(chan bool, 1)
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler),
		OnElected: func(lease.Term) { elected <- alive(pid) },
		Task:      func(ctx context.Context) error { <-ctx.Done(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithCancel(context.Background())
	fdone := make(chan struct{})
	go func() { defer close(fdone); _ = r.Run(fctx) }()
	defer func() { fcancel(); <-fdone }()

	errw.stall()
	memlease.Default.Partition(id)
	select {
	case oldAlive := <-elected:
		if oldAlive {
			t.Errorf("the follower was elected while the cut-off leader's command (pid %d) still ran: its kill waited on a log write to a stalled stderr", pid)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follower was not elected")
	}
}

// TestRedTeam14SucceededPeriodRunsAgain (rule 13): a --once --period run
// with --retry-failed whose command exits 0 by itself, then leasehold gets
// SIGTERM while it still copies the command's output (its stdout is a pipe
// leasehold copies, as with --progress-on-stdout, and the copy is slow:
// waitOutputs waits up to outputDrain, 1s, before the command counts as
// exited). supervise's select sees the context end before c.exited, stops
// a command that had already exited, and reports it stopped: no done mark
// is written, leasehold exits 143 ("the command was stopped"), and the next
// trigger of the same period runs the command again, although its first
// run succeeded before any signal.
func TestRedTeam14SucceededPeriodRunsAgain(t *testing.T) {
	const period = "2026-12-06T12:00:00Z"
	dir := t.TempDir()
	pidFile, ran := filepath.Join(dir, "pid"), filepath.Join(dir, "ran")
	name := memName("rt14-period-done")
	env, _, buf := testEnv(nil)
	out := &stallingWriter{w: buf}
	env.stdout = out
	out.stall()
	defer out.unstall()
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

// TestRedTeam14CheckWaitsOutStartTimeoutOnAFreshLease (not a safety rule;
// the --start-timeout message): leasehold check of a lease never acquired
// yet retries its read until --start-timeout has passed, logging "cannot
// reach the store; retrying" for a store that answered at once, because
// checkStore retries lease.ErrNoRecord (which lease.Retryable counts as
// retryable) instead of taking it as the answer, as readLease does. With
// the default --start-timeout every check of a fresh lease takes 10s.
func TestRedTeam14CheckWaitsOutStartTimeoutOnAFreshLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName("rt14-check-fresh")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan int, 1)
		go func() {
			env, _, _ := testEnv(nil)
			done <- mainWith(ctx, nil, []string{"check", "--lease", "mem://" + name, "--start-timeout", "1h"}, env)
		}()
		time.Sleep(time.Minute) // fake time
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("check of a fresh lease exited %d, want 0", code)
			}
		default:
			t.Error("check of a lease never acquired, on a store that answers at once, still retries a minute later (until --start-timeout, 1h)")
			cancel()
			<-done
		}
	})
}

// TestRedTeam14WindowsVet: leasehold ships a windows binary (scripts/release,
// whose default targets include windows/amd64 and windows/arm64; status,
// break and version work there), but its package's tests do not even
// type-check for Windows: docs_test.go has no build constraint and calls
// testEnv, which helpers_test.go defines only under the unix constraint.
// GOOS=windows go vet ./cmd/leasehold fails, so no test of what ships for
// Windows can run there, and CI (go vet ./... on Linux) does not see it.
func TestRedTeam14WindowsVet(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	cmd := exec.Command(goTool, "vet", ".")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=windows go vet ./cmd/leasehold: %v\n%s", err, out)
	}
}

// TestRedTeam14HangupOrBrokenLogPipeAbandonsTheCommand (rule 14: the
// command dies with its wrapper, and only SIGKILL or a crash may keep
// leasehold from stopping it): leasehold handles SIGINT and SIGTERM, but
// neither SIGHUP (the terminal or SSH session it runs in closes) nor
// SIGPIPE (its stderr is a pipe whose reader went away: a log collector
// that exited, "leasehold run ... 2>&1 | tee log" whose tee died). Either
// kills it on the spot, by the default action: no SIGTERM or SIGKILL to the
// command's process group, no release. Pdeathsig (Linux only) kills the
// command's own process, and nothing else of its group: here the worker a
// shell started in the background runs on without the lease, as on macOS,
// which has no Pdeathsig, the command itself would. (A SIGTERM in the same
// setting stops the whole group: TestRedTeam14SigtermStopsTheWholeGroup.)
func TestRedTeam14HangupOrBrokenLogPipeAbandonsTheCommand(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	for _, how := range []string{"SIGHUP", "broken stderr pipe"} {
		t.Run(how, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "worker")
			cmd := exec.Command(bin, "run", "--lease", "mem://rt14-hup", "--identity", "h", "--ttl", "2s", "--",
				"sh", "-c", `sleep 1000 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; wait`, pidFile)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() {
				_, _ = io.Copy(io.Discard, stderr) // until closed below
			}()
			worker := pidIn(t, pidFile)
			defer func() { _ = syscall.Kill(worker, syscall.SIGKILL) }()
			go func() { exited <- cmd.Wait() }()
			switch how {
			case "SIGHUP":
				_ = cmd.Process.Signal(syscall.SIGHUP)
			default:
				stderr.Close()                          // the log's reader goes away
				_ = cmd.Process.Signal(syscall.SIGTERM) // the next log line is written into the broken pipe
			}
			select {
			case err := <-exited:
				t.Logf("leasehold exited: %v", err)
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("leasehold did not exit")
			}
			if alive(worker) {
				t.Errorf("%s: leasehold is gone, and the worker its command started (pid %d, in the command's process group) runs on without the lease", how, worker)
			}
		})
	}
}

// TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand (rule 13; the help:
// "LEASEHOLD_PERIOD  with --period or --every: the period key it runs
// for"): supervisor.task sets LEASEHOLD_PERIOD from the term's record,
// whatever this run's flags: a run without --period, on a lease whose
// record names the period a scheduled run finished, starts its command
// with LEASEHOLD_PERIOD set to that finished period. A job that reads the
// variable to know which tick to process (what it is for) processes the
// finished period again: a manual "leasehold run --once -- ./job.sh" beside
// the scheduled triggers redoes the last scheduled tick.
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
}

// TestRedTeam14ShardVariablesConfigureANestedRun (rule 1 as the user of a
// nested leasehold sees it): the variables leasehold gives a shard's
// command are also the environment variables of leasehold's own flags:
// LEASEHOLD_SHARDS is --shards, LEASEHOLD_IDENTITY --identity,
// LEASEHOLD_LEASE --lease (and LEASEHOLD_PERIOD --period). A shard's
// command that runs a step under a single lease of its own, "leasehold run
// --lease URL -- step", starts a shard group of N instead: one instance
// runs the step N times at once, which the user asked to run on one
// leader at a time. The variables given to commands should not double as
// configuration (or leasehold should drop its own LEASEHOLD_ flag variables
// from the command's environment).
func TestRedTeam14ShardVariablesConfigureANestedRun(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	// The variables a shard's command gets.
	if code, stderr := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", "mem://"+memName("rt14-outer"), "--identity", "outer", "--ttl", "2s", "--",
		"sh", "-c", `if [ "$LEASEHOLD_SHARD" = 0 ]; then env > "$0.tmp"; mv "$0.tmp" "$0"; exit 0; fi; while :; do sleep 0.05; done`, envFile); code != 0 {
		t.Fatalf("the outer run exited %d: %s", code, stderr)
	}
	vars := map[string]string{}
	b, _ := os.ReadFile(envFile)
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "LEASEHOLD_") {
			vars[k] = v
		}
	}
	if vars["LEASEHOLD_SHARDS"] != "2" {
		t.Fatalf("the shard's command got %v", vars)
	}
	// That command runs a step under a lease of its own.
	ran := filepath.Join(dir, "ran")
	env, _, stderr := testEnv(vars)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, nil, []string{"run", "--lease", "mem://" + memName("rt14-step"), "--",
			"sh", "-c", `echo "$$" >> "$0"; while :; do sleep 0.05; done`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the step runs", func() bool { return fileExists(ran) })
	time.Sleep(time.Second) // let every start of the step happen
	cancel()
	<-done
	b, _ = os.ReadFile(ran)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("leasehold run --lease URL -- step, run by a shard's command, ran the step %d times at once; stderr:\n%s", n, stderr)
	}
}

// TestRedTeam14HugeTTLBlamesAFlagNotGiven (rule 8, and the runner's
// "messages that name the field and the values"): a --ttl above about
// 853,000h overflows the defaults derived from it (3/8, 9/16 of the TTL
// in nanoseconds), and run, status and check refuse it by blaming
// --renew-interval, which was not given, with a negative value: "--renew-
// interval (-265511h56m49.213693952s) must be at least 1ms and less than
// --ttl (1000000h0m0s)". (Just below, check's ttl verdict compares a
// renew interval of 300000h with a renew deadline of 129744h.)
func TestRedTeam14HugeTTLBlamesAFlagNotGiven(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--once", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--", "true"},
		{"status", "--lease", "mem://rt14-huge", "--ttl", "1000000h"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--start-timeout", "1ms"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "800000h", "--start-timeout", "1ms"},
	} {
		env, stdout, stderr := testEnv(nil)
		code := mainWith(context.Background(), nil, args, env)
		msg := stdout.String() + stderr.String()
		if code == 0 || strings.Contains(msg, "renew-interval") || strings.Contains(msg, "(-") {
			t.Errorf("leasehold %s: exit %d; the refusal blames a flag not given, or a negative value:\n%s", strings.Join(args, " "), code, msg)
		}
	}
}

// TestRedTeam14SigtermEndsTheMinimumHold (rule 13: "a record left held by
// a minimum hold is nobody's to take before it lapses, its writer's
// included"; the help: leasehold "keeps renewing it ... until D has
// passed, releases it and exits", and the docs: "it exits then, not
// before"): leasehold run --once --min-hold, its command done and the hold
// written, gets SIGTERM (the orchestrator stops a task whose command has
// finished): runOnce hands RunOnce the context the signal ends, holdUntil
// stops at once and the lease is released, minutes before the hold is
// over. A duplicate trigger that fires next takes the lease at once and
// runs the job a second time inside the window the hold was to keep it
// out of. (Had leasehold died instead, the record would at least have
// kept the duplicate out for a TTL.)
func TestRedTeam14SigtermEndsTheMinimumHold(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	name := memName("rt14-minhold")
	job := []string{"sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran}
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	go func() {
		env, _, _ := testEnv(nil)
		exited <- mainWith(ctx, nil, append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s", "--min-hold", "10m", "--"}, job...), env)
	}()
	eventually(t, 10*time.Second, "the hold is written", func() bool {
		b, ok := memlease.Default.Bytes(name)
		return ok && runner.ScheduleOf(observe(t, name).Annotations).Hold && len(b) > 0
	})
	cancel(&signalCause{sig: 15})
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("leasehold did not exit after SIGTERM")
	}
	code, _ := leasehold(t, context.Background(), append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "duplicate", "--ttl", "2s", "--"}, job...)...)
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "\n") > 1 {
		t.Errorf("a duplicate fired within the 10m hold, after a SIGTERM to the holder, ran the job again (exit %d): %q", code, b)
	}
}

// TestRedTeam14StalledStderrKeepsTheCommandAfterTheLeaseIsLost (rule 1):
// as TestRedTeam14StalledStderrKeepsTheCommandPastTheLease, but the lease
// is lost (an intruder's record, as after leasehold break --force or a
// restore): the runner's renew loop logs "renewal found the lease lost"
// before it ends the term (runner/renew.go keepRenewing), so with stderr
// stalled the term never ends, and the command runs on beside the
// lease's new holder for as long as stderr stays stalled.
func TestRedTeam14StalledStderrKeepsTheCommandAfterTheLeaseIsLost(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("rt14-stalled-lost")
	env, _, buf := testEnv(nil)
	errw := &stallingWriter{w: buf}
	env.stderr = errw
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, nil, append([]string{"run", "--lease", "mem://" + name, "--identity", name + "-l", "--ttl", "1s", "--grace", "1m", "--"}, stubborn(pidFile)...), env)
	}()
	pid := pidIn(t, pidFile)
	defer func() {
		errw.unstall()
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("leasehold did not exit once its stderr took writes again")
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	errw.stall()
	memlease.Default.Put(name, driver.EncodeJSON(lease.Record{Holder: "intruder", Token: 99, TTL: time.Minute, Nonce: "x"}))
	// The holder's next renewal, within its renew interval (375ms), finds
	// the lease lost; its command must be killed at once.
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("5s after the lease passed to another holder, the old holder's command (pid %d) still runs: the step-down waits on a log write to a stalled stderr", pid)
	}
}
