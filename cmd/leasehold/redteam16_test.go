//go:build linux

package main

// Red team 16: holes in red teams 14 and 15's fixes in cmd/leasehold,
// each fixed; each test failed on b163f74, before its fix.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam16StalledStderrKeepsTheExitLineFromExiting (the brief:
// nothing hangs forever; docs/cli.md: leasehold "waits at most 2s at exit
// for the log lines still queued"; red team 15 F3). Red team 15 bounded
// the log sink's close, but mainWith then prints leasehold's own error
// line ("leasehold: run: interrupted by terminated: ...") straight to
// stderr, without a bound: with stderr a pipe nobody reads, every run
// that ends with a line (--once stopped by a signal, a store that
// failed, a command not found) never exits, not on a second signal: its
// command is dead and the lease released, and the exit status a scheduler
// waits for never comes.
func TestRedTeam16StalledStderrKeepsTheExitLineFromExiting(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("rt16-stalled-exit-line")
	env, _, _ := testEnv(nil)
	errOut := &heldWriter{w: &syncBuffer{}, held: make(chan struct{})}
	env.stderr = errOut // nobody reads leasehold's stderr
	defer errOut.release()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	hurry := make(chan struct{})
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
			"--", "sh", "-c", `echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 60`, pidFile}, env)
	}()
	pid := pidIn(t, pidFile)
	cancel(&signalCause{sig: 15}) // SIGTERM: the command is stopped, leasehold exits 143 with a line
	close(hurry)                  // and a second signal
	select {
	case code := <-exited:
		if code != exitSignal+15 {
			t.Errorf("leasehold exited %d, want %d", code, exitSignal+15)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("leasehold run --once, its command (pid %d, alive %v) stopped on SIGTERM, did not exit within 10 s, nor on a second signal, with its stderr stalled: its exit line waits on stderr", pid, alive(pid))
	}
}

// TestRedTeam16RepeatedHangupCutsTheGraceAndKillsLeasehold (the help: a
// closed terminal or SSH session is a voluntary step-down: SIGTERM to the
// command, which gets --grace; rule 14: the command dies with its
// wrapper). A closed terminal delivers SIGHUP more than once: the shell
// forwards its SIGHUP to its jobs, and when the shell (the session leader)
// exits the kernel sends SIGHUP again to the terminal's last foreground
// process group. signalContext counted the second SIGHUP as an operator's
// second signal (the command SIGKILLed at once, its grace period skipped),
// and after it restored SIGHUP's default action: any further SIGHUP killed
// leasehold on the spot, with no SIGKILL for the command's group and no
// release; on macOS, without a parent-death signal, the command then runs
// on without the lease. A SIGHUP after the first signal is now dropped:
// only a second SIGINT or SIGTERM (a person, an orchestrator) hurries.
func TestRedTeam16RepeatedHangupCutsTheGraceAndKillsLeasehold(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
	}{
		{"terminal closed: SIGHUP three times", []syscall.Signal{syscall.SIGHUP, syscall.SIGHUP, syscall.SIGHUP}},
		{"systemd SendSIGHUP: SIGTERM then SIGHUP", []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGHUP}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile, marks := filepath.Join(dir, "pid"), filepath.Join(dir, "marks")
			// The command takes about a second to shut down on SIGTERM.
			script := `trap 'echo term >> "$1"; stop=1' TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"
while [ -z "$stop" ]; do sleep 0.05; done
sleep 1; echo graceful >> "$1"`
			cmd := exec.Command(bin, "run", "--lease", "mem://"+memName("rt16-hup"), "--identity", "h", "--ttl", "2s", "--grace", "30s", "--",
				"sh", "-c", script, pidFile, marks)
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() { _ = cmd.Process.Kill() }()
			pid := pidIn(t, pidFile)
			defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
			_ = cmd.Process.Signal(tc.sigs[0])
			eventually(t, 10*time.Second, "the command got SIGTERM", func() bool {
				b, _ := os.ReadFile(marks)
				return strings.Contains(string(b), "term")
			})
			for _, sig := range tc.sigs[1:] {
				_ = cmd.Process.Signal(sig)
				time.Sleep(200 * time.Millisecond) // each its own delivery
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(20 * time.Second):
				t.Fatal("leasehold did not exit")
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
					t.Errorf("leasehold was killed by %v, the default action of a repeated SIGHUP: its command's group got no SIGKILL, its lease no release", ws.Signal())
				}
			}
			if b, _ := os.ReadFile(marks); !strings.Contains(string(b), "graceful") {
				t.Errorf("the command, given --grace 30s, did not finish its 1 s shutdown (marks %q; leasehold: %v): a repeated SIGHUP was taken for an operator's second signal and it was killed", b, err)
			}
		})
	}
}

// TestRedTeam16IgnoredLeaseVariableBlamedAsMissing (the brief: messages
// say what happened; the help: a leasehold the command runs does not read
// LEASEHOLD_LEASE, "give it its flags"). Inside a command leasehold runs
// (LEASEHOLD_TOKEN set), LEASEHOLD_LEASE is set and not read (red team
// 14's F7), and leasehold run, status, check and break without --lease
// said "--lease (or LEASEHOLD_LEASE) is required": a user looking at the
// variable, set, is told to set it.
func TestRedTeam16IgnoredLeaseVariableBlamedAsMissing(t *testing.T) {
	for _, args := range [][]string{{"status"}, {"check"}, {"break"}, {"run", "--", "true"}} {
		env, _, stderr := testEnv(map[string]string{"LEASEHOLD_TOKEN": "7", "LEASEHOLD_LEASE": "mem://" + memName("rt16-nested")})
		code := mainWith(context.Background(), nil, args, env)
		if code != exitUsage {
			t.Errorf("leasehold %s inside a command, without --lease, exited %d, want %d", args[0], code, exitUsage)
		}
		if line := strings.Join(errorLines(stderr.String()), "\n"); !strings.Contains(line, "not read") || !strings.Contains(line, "LEASEHOLD_TOKEN") {
			t.Errorf("leasehold %s inside a command (LEASEHOLD_TOKEN and LEASEHOLD_LEASE set), without --lease, said %q: it blames LEASEHOLD_LEASE as missing, not as left unread", args[0], line)
		}
	}
}

// TestRedTeam16SignalAsTheCommandExitsEndsTheMinimumHold (rule 13: "a
// record left held by a minimum hold is nobody's to take before it
// lapses"; the help: a signal after the command exited does not end the
// hold). keepHold and supervise each judge whether the command exited
// before the signal, at two instants: keepHold when the signal comes,
// supervise when the context keepHold then ends reaches it. A command that
// exits between the two (it finishes as the SIGTERM comes in) is judged
// running by keepHold, which ends RunOnce's context, and exited by itself
// by supervise, which tells the runner it completed: the runner writes the
// hold once, finds its context ended and releases at once, and a duplicate
// fired within the hold runs the job again. holdChecked puts the exit in
// that window. keepHold now stops only the task's context, and the task's
// own end (supervise's judgement) decides: a command that exited by itself
// keeps the hold; one that was stopped ends the run as before.
func TestRedTeam16SignalAsTheCommandExitsEndsTheMinimumHold(t *testing.T) {
	dir := t.TempDir()
	ran, pidFile, finish := filepath.Join(dir, "ran"), filepath.Join(dir, "pid"), filepath.Join(dir, "finish")
	name := memName("rt16-minhold-race")
	env, _, stderr := testEnv(nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	var hurried sync.Once
	defer hurried.Do(func() { close(hurry) })
	var pid int
	defer func(old func()) { holdChecked = old }(holdChecked)
	holdChecked = func() { // the command finishes as the signal comes in
		_ = os.WriteFile(finish, nil, 0o644)
		deadline := time.Now().Add(5 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
			"--min-hold", "10m", "--", "sh", "-c", `echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; while [ ! -e "$1" ]; do sleep 0.02; done; echo "$LEASEHOLD_IDENTITY" >> "$2"`,
			pidFile, finish, ran}, env)
	}()
	pid = pidIn(t, pidFile)
	cancel(&signalCause{sig: 15}) // SIGTERM, as the command finishes
	holdKept(t, name, ran, exited, stderr, 3*time.Second, "a SIGTERM that came as its command exited by itself")
	if t.Failed() {
		return
	}
	hurried.Do(func() { close(hurry) }) // a second signal: leave the hold
	select {
	case code := <-exited:
		if code != exitSignal+15 {
			t.Errorf("leasehold exited %d on a second signal during its minimum hold, want %d", code, exitSignal+15)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("leasehold did not exit on a second signal during its minimum hold")
	}
}

// TestRedTeam16MinHoldSignalWhileRunningStops: the other side of
// TestRedTeam16SignalAsTheCommandExitsEndsTheMinimumHold, unchanged by its
// fix: with --min-hold, a signal while the command runs stops it as
// without (SIGTERM; a second signal SIGKILLs it at once), leasehold exits
// 128+N, and the lease is released, not held.
func TestRedTeam16MinHoldSignalWhileRunningStops(t *testing.T) {
	for _, second := range []bool{false, true} {
		pidFile := filepath.Join(t.TempDir(), "pid")
		name := memName("rt16-minhold-stop")
		env, _, stderr := testEnv(nil)
		ctx, cancel := context.WithCancelCause(context.Background())
		hurry := make(chan struct{})
		exited := make(chan int, 1)
		go func() {
			exited <- mainWith(ctx, hurry, append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
				"--min-hold", "10m", "--grace", "1m", "--"}, stubborn(pidFile)...), env)
		}()
		pid := pidIn(t, pidFile)
		cancel(&signalCause{sig: 15})
		if second {
			close(hurry)
		} else {
			// The stubborn command ignores SIGTERM: only the second
			// signal ends it before the grace period.
			time.Sleep(500 * time.Millisecond)
			if !alive(pid) {
				t.Fatalf("the command, which ignores SIGTERM, is gone 0.5s into a 1m grace period")
			}
			close(hurry)
		}
		select {
		case code := <-exited:
			if code != exitSignal+15 {
				t.Errorf("second=%v: leasehold exited %d, want %d; stderr:\n%s", second, code, exitSignal+15, stderr)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("second=%v: leasehold did not exit", second)
		}
		if alive(pid) {
			t.Errorf("second=%v: the command (pid %d) outlived leasehold", second, pid)
		}
		if rec := observe(t, name); !rec.Released || runner.ScheduleOf(rec.Annotations).Hold {
			t.Errorf("second=%v: the record is %+v, want it released: the command was stopped, not run to its end", second, rec)
		}
	}
}

// TestRedTeam16SigtermFamilyWalkHoldsBackTheKill (rule 14, rule 1;
// stopwait: "the SIGKILL comes at the kill deadline whatever SIGTERM
// takes", red team 14's F2). The SIGTERM goes on a goroutine of its own
// so that its walks of the process table do not delay the SIGKILL, but
// both are sent by child.signal under the child's mutex, and the
// SIGTERM's signalFamily walks again and again, familyPause apart, while
// each walk finds a new member of the family, up to familyRounds (200)
// walks: a command whose family has a member outside its group that
// starts processes (a setsid'd worker pool, a shell loop) holds the mutex
// for seconds, and the SIGKILL due at the kill deadline waits for it. Here
// the leader is cut off from the store, and its command (which ignores
// SIGTERM, as does the loop it started with setsid) still runs when a
// follower takes the lease over. A SIGKILL waiting now cuts short the
// walks of any other signal.
func TestRedTeam16SigtermFamilyWalkHoldsBackTheKill(t *testing.T) {
	dir := t.TempDir()
	pidFile, loopFile := filepath.Join(dir, "pid"), filepath.Join(dir, "loop")
	name := memName("rt16-family-walk")
	id := name + "-p" // memlease's faults are by identity, process-wide
	env, _, stderr := testEnv(nil)
	// Each walk is familyPause apart: stretched here, so that a loop that
	// starts a process every 10 ms (25 on this loaded machine) gives each
	// walk a new member, as a faster one (a pool of short tasks) does at
	// 5 ms.
	defer func(old time.Duration) { familyPause = old }(familyPause)
	familyPause = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan int, 1)
	script := `setsid sh -c 'trap "" TERM; echo $$ > "$0"; while :; do sleep 0.01; done' "$1" &
trap '' TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; while :; do sleep 0.05; done`
	go func() {
		exited <- mainWith(ctx, nil, []string{"run", "--lease", "mem://" + name, "--identity", id, "--ttl", "1s", "--grace", "1m", "--",
			"sh", "-c", script, pidFile, loopFile}, env)
	}()
	pid, loop := pidIn(t, pidFile), pidIn(t, loopFile)
	defer func() {
		memlease.Default.Heal(id)
		cancel()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("leasehold did not exit")
		}
		for _, p := range []int{pid, loop} {
			if alive(p) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}()

	l, err := memlease.Default.Open(name, lease.Options{Identity: name + "-follower", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	elected := make(chan bool, 1)
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler),
		OnElected: func(lease.Term) { elected <- alive(pid) || alive(loop) },
		Task:      func(ctx context.Context) error { <-ctx.Done(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithCancel(context.Background())
	fdone := make(chan struct{})
	go func() { defer close(fdone); _ = r.Run(fctx) }()
	defer func() { fcancel(); <-fdone }()

	memlease.Default.Partition(id)
	select {
	case oldAlive := <-elected:
		if oldAlive {
			t.Errorf("the follower was elected while the cut-off leader's command (pid %d, alive %v) or its setsid'd member (pid %d, alive %v) still ran: the SIGKILL waited for the SIGTERM's walks of the family; leasehold's log:\n%s",
				pid, alive(pid), loop, alive(loop), stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the follower was not elected")
	}
}

// TestRedTeam16NestedRunPassesItsParentsShardAndPeriod (the help: "The
// command gets: LEASEHOLD_TOKEN the fencing token of this term ...
// LEASEHOLD_PERIOD with --period or --every"; with --shards "LEASEHOLD_SHARD
// its shard ... LEASEHOLD_TOKEN the shard's epoch"; red team 14's F6: a
// run without a period starts its command with LEASEHOLD_PERIOD unset; rule
// 5: the token fences). Red team 14's F7 made a leasehold run by a command
// leave its parent's variables unread, but it still passed them on: its
// command got its own LEASEHOLD_TOKEN (this lease's) beside the parent
// shard's LEASEHOLD_SHARD and LEASEHOLD_SHARDS and the parent's
// LEASEHOLD_PERIOD. A shard consumer run so fences shard 3's writes with
// another lease's token (a higher one deposes the shard's real owner
// downstream, a lower one is refused), and a job that reads
// LEASEHOLD_PERIOD processes a period its run does not hold. A command now
// gets only its own run's variables.
func TestRedTeam16NestedRunPassesItsParentsShardAndPeriod(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vars")
	parent := map[string]string{ // what a shard's command, with a period, has
		"LEASEHOLD_TOKEN": "41", "LEASEHOLD_LEASE": "mem://parent-group", "LEASEHOLD_IDENTITY": "parent",
		"LEASEHOLD_SHARD": "3", "LEASEHOLD_SHARDS": "8", "LEASEHOLD_PERIOD": "2026-12-06T15:00:00Z",
		"LEASEHOLD_PROGRESS_FILE": "/tmp/parent-progress",
	}
	env, _, stderr := testEnv(parent)
	name := memName("rt16-nested-vars")
	code := mainWith(context.Background(), nil, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "nested", "--ttl", "2s", "--",
		"sh", "-c", `for v in TOKEN LEASE IDENTITY SHARD SHARDS PERIOD PROGRESS_FILE; do eval "echo $v=\${LEASEHOLD_$v-unset}"; done > "$0"`, out}, env)
	if code != 0 {
		t.Fatalf("the nested run exited %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	got := string(b)
	tok := observe(t, name).Token
	for _, want := range []string{fmt.Sprintf("TOKEN=%d", tok), "LEASE=mem://" + name, "IDENTITY=nested", "SHARD=unset", "SHARDS=unset", "PERIOD=unset", "PROGRESS_FILE=unset"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("the nested run's command lacks %s; it got:\n%s", want, got)
		}
	}
}

// TestRedTeam16MinHoldStopSaysTheSignal guards the fix of
// TestRedTeam16SignalAsTheCommandExitsEndsTheMinimumHold: with --min-hold a
// signal while the command runs stops it through the task's own context,
// and the runner, which does not see that stop until the task returns,
// still watches the command's progress meanwhile: a --stall-timeout shorter
// than the command's shutdown made the runner step down as unhealthy, and
// the runner stepped down as unhealthy and, its own context alive, held
// the lease for the 10m minimum hold after the stopped command: leasehold
// did not exit on the SIGTERM (b163f74 exited 143). The task now ends
// RunOnce's context whenever the signal stopped the command, and the exit
// is the signal's.
func TestRedTeam16MinHoldStopSaysTheSignal(t *testing.T) {
	dir := t.TempDir()
	pidFile, progress := filepath.Join(dir, "pid"), filepath.Join(dir, "progress")
	name := memName("rt16-minhold-stall")
	env, _, stderr := testEnv(nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	// Shows progress until SIGTERM, then takes 2 s to shut down.
	script := `trap 'stop=1' TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"
while [ -z "$stop" ]; do touch "$1"; sleep 0.05; done; sleep 2`
	go func() {
		exited <- mainWith(ctx, nil, []string{"run", "--once", "--lease", "mem://" + name, "--identity", "first", "--ttl", "2s",
			"--min-hold", "10m", "--grace", "1m", "--stall-timeout", "300ms", "--progress-file", progress, "--",
			"sh", "-c", script, pidFile, progress}, env)
	}()
	pidIn(t, pidFile)
	time.Sleep(300 * time.Millisecond)
	cancel(&signalCause{sig: 15})
	select {
	case code := <-exited:
		if code != exitSignal+15 {
			t.Errorf("leasehold, stopped by SIGTERM while its command ran, exited %d, want %d; its errors: %q", code, exitSignal+15, errorLines(stderr.String()))
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("leasehold did not exit; stderr:\n%s", stderr)
	}
}
