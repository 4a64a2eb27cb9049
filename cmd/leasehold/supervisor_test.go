//go:build linux

package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// These tests run leasehold in this process on the in-memory backend, with
// real commands and real time (TTL 1s), and check the supervision of the
// command: who may run when, and that the command is dead in time.

// stubborn is a command that writes its PID to the file pidFile and then
// ignores SIGTERM, so that only SIGKILL stops it.
func stubborn(pidFile string) []string {
	return []string{"sh", "-c", `trap '' TERM; echo $$ > "$0"; while :; do sleep 0.05; done`, pidFile}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// pidIn waits for the command to write its PID to file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	var pid int
	eventually(t, 10*time.Second, "the command started", func() bool {
		b, err := os.ReadFile(file)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// started runs leasehold with args in the background and returns a
// function that waits for its exit status, and its stderr.
func started(t *testing.T, ctx context.Context, args ...string) (wait func() int, stderr *syncBuffer) {
	t.Helper()
	env, _, stderr := testEnv(nil)
	done := make(chan int, 1)
	go func() { done <- mainWith(ctx, nil, args, env) }()
	var once sync.Once
	var code int
	wait = func() int {
		once.Do(func() {
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("leasehold did not exit; stderr:\n%s", stderr)
			}
		})
		return code
	}
	t.Cleanup(func() { wait() })
	return wait, stderr
}

// TestStopKeepsTheLeaseUntilTheCommandHasExited: on SIGTERM the command
// gets its grace period, longer than the TTL here, the lease stays held and
// renewed meanwhile, and it is released only once the command is dead. The
// SIGTERM's log says the kill comes within the grace period (its kill_in
// said the lease's expiry as it stood, which the renewals pushed on).
func TestStopKeepsTheLeaseUntilTheCommandHasExited(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("graceful")
	ctx, cancel := context.WithCancelCause(context.Background())
	wait, stderr := started(t, ctx, append([]string{"run", "--lease", "mem://" + name, "--identity", "g", "--ttl", "2s", "--grace", "3s", "--"},
		stubborn(pidFile)...)...)
	pid := pidIn(t, pidFile)
	before := observe(t, name)
	cancel(&signalCause{sig: 15})
	stoppedAt := time.Now()

	var renewedWhileStopping bool
	for alive(pid) {
		rec := observe(t, name)
		if rec.Released || rec.Holder != "g" {
			t.Fatalf("record %+v while the command still runs, want held by g", rec)
		}
		renewedWhileStopping = renewedWhileStopping || rec.Version != before.Version && time.Since(stoppedAt) > 2*time.Second
		if time.Since(stoppedAt) > 20*time.Second {
			t.Fatal("the command was not killed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	killedAfter := time.Since(stoppedAt)
	if code := wait(); code != 0 {
		t.Fatalf("exit status %d after SIGTERM, want 0; stderr:\n%s", code, stderr)
	}
	if rec := observe(t, name); !rec.Released {
		t.Fatalf("record %+v after leasehold exited, want released", rec)
	}
	if !renewedWhileStopping {
		t.Error("the lease was not renewed during the grace period, past its TTL")
	}
	if killedAfter < 3*time.Second {
		t.Errorf("the command was killed %v after SIGTERM, before its grace period (3s) ended", killedAfter)
	}
	if !strings.Contains(stderr.String(), "SIGKILL") {
		t.Errorf("no log of the kill:\n%s", stderr)
	}
	// The SIGTERM's log line is written after the signal (nothing on the
	// way to the kill waits on a log line), so its kill_within is the
	// grace period less the time that took: up to 3s.
	m := regexp.MustCompile(` kill_within=(\S+) kill_in_unless_renewed=`).FindStringSubmatch(stderr.String())
	if within, err := time.ParseDuration(append(m, "", "")[1]); m == nil || err != nil || within <= 0 || within > 3*time.Second {
		t.Errorf("the SIGTERM's log does not say the kill comes within the grace period (3s), sooner unless renewed:\n%s", stderr)
	}
}

// TestLostLeaseKillsTheCommandAtOnce: when a renewal finds the lease taken,
// the command gets SIGKILL at once, whatever its grace period, and the
// lease is not released (it is not ours).
func TestLostLeaseKillsTheCommandAtOnce(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("lost")
	wait, stderr := started(t, context.Background(), append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "l", "--ttl", "1s", "--grace", "1m", "--"},
		stubborn(pidFile)...)...)
	pid := pidIn(t, pidFile)
	intruder := driver.EncodeJSON(lease.Record{Holder: "intruder", Token: 99, TTL: time.Minute, Nonce: "x"})
	memlease.Default.Put(name, intruder)
	eventually(t, 5*time.Second, "the command killed", func() bool { return !alive(pid) })
	if code := wait(); code != exitSteppedDown {
		t.Fatalf("exit status %d, want %d; stderr:\n%s", code, exitSteppedDown, stderr)
	}
	if got, _ := memlease.Default.Bytes(name); string(got) != string(intruder) {
		t.Fatalf("the intruder's record was overwritten: %s", got)
	}
}

// TestPartitionedLeaderIsDeadBeforeTakeover: a leader cut off from the
// store cannot renew; its command, which ignores SIGTERM, must be dead
// before another contender is elected.
func TestPartitionedLeaderIsDeadBeforeTakeover(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	name := memName("partition")
	wait, stderr := started(t, context.Background(), append([]string{"run", "--once", "--lease", "mem://" + name, "--identity", "p", "--ttl", "2s", "--grace", "1m", "--"},
		stubborn(pidFile)...)...)
	pid := pidIn(t, pidFile)

	l, err := memlease.Default.Open(name, lease.Options{Identity: "follower", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	type election struct {
		at              time.Time
		oldCommandAlive bool
	}
	elected := make(chan election, 1)
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler),
		OnElected: func(lease.Term) { elected <- election{time.Now(), alive(pid)} },
		Task:      func(ctx context.Context) error { <-ctx.Done(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(200 * time.Millisecond)

	memlease.Default.Partition("p")
	defer memlease.Default.Heal("p")
	cutAt := time.Now()
	select {
	case e := <-elected:
		if e.oldCommandAlive {
			t.Fatalf("the follower was elected %v after the cut while the old leader's command still ran", e.at.Sub(cutAt))
		}
		t.Logf("follower elected %v after the cut; the old command was dead", e.at.Sub(cutAt))
	case <-time.After(10 * time.Second):
		t.Fatal("the follower was not elected")
	}
	if code := wait(); code != exitSteppedDown {
		t.Fatalf("exit status %d, want %d; stderr:\n%s", code, exitSteppedDown, stderr)
	}
	// Renewals over, the lease's expiry is final: a SIGTERM's log (none
	// when the kill is due at once) says when the kill comes, kill_in,
	// not the end of the grace period.
	if s := stderr.String(); strings.Contains(s, "kill_within") {
		t.Errorf("the SIGTERM's log says kill_within after the renewals stopped:\n%s", s)
	}
}

func TestStallTimeout(t *testing.T) {
	dir := t.TempDir()
	progressFile := filepath.Join(dir, "progress")
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"stdout lines, then silence", []string{"--progress-on-stdout", "--", "sh", "-c", "for i in 1 2 3 4 5; do echo $i; sleep 0.1; done; sleep 30"}, exitSteppedDown},
		{"stdout lines until done", []string{"--progress-on-stdout", "--", "sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo $i; sleep 0.1; done"}, 0},
		{"file touched, then not", []string{"--progress-file", progressFile, "--", "sh", "-c",
			`for i in 1 2 3 4 5; do touch "$LEASEHOLD_PROGRESS_FILE"; sleep 0.1; done; sleep 30`}, exitSteppedDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--once", "--lease", "mem://" + memName("stall"),
				"--ttl", "3s", "--stall-timeout", "700ms", "--grace", "100ms"}, tc.args...)
			code, stderr := leasehold(t, context.Background(), args...)
			if code != tc.want {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			if tc.want == exitSteppedDown && !strings.Contains(stderr, "StallTimeout") {
				t.Fatalf("the error does not name the stall:\n%s", stderr)
			}
		})
	}
}

func TestRerunCampaignsAgain(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	ctx, cancel := context.WithCancel(context.Background())
	wait, stderr := started(t, ctx, "run", "--rerun", "--lease", "mem://"+memName("rerun"), "--ttl", "1s", "--",
		"sh", "-c", `echo "$LEASEHOLD_TOKEN" >> "$0"; sleep 0.1`, runs)
	eventually(t, 20*time.Second, "three runs", func() bool {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "\n") >= 3
	})
	cancel()
	if code := wait(); code != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	b, _ := os.ReadFile(runs)
	tokens := strings.Fields(string(b))
	for i := 1; i < len(tokens); i++ {
		a, _ := strconv.Atoi(tokens[i-1])
		b, _ := strconv.Atoi(tokens[i])
		if b <= a {
			t.Fatalf("tokens %v do not increase", tokens)
		}
	}
}

func TestCommandEnvironment(t *testing.T) {
	out := filepath.Join(t.TempDir(), "env")
	leaseURL := "mem://" + memName("env")
	code, stderr := leasehold(t, context.Background(), "run", "--lease", leaseURL, "--identity", "worker-9", "--",
		"sh", "-c", `echo "$LEASEHOLD_TOKEN $LEASEHOLD_LEASE $LEASEHOLD_IDENTITY" > "$0"`, out)
	if code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	if got := strings.TrimSpace(string(b)); got != "1 "+leaseURL+" worker-9" {
		t.Fatalf("the command saw %q, want token, lease and identity", got)
	}
}

// TestSecondSignalSkipsTheGracePeriod: a second SIGTERM or SIGINT kills the
// command at once.
func TestSecondSignalSkipsTheGracePeriod(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	env, _, stderr := testEnv(nil)
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, hurry, append([]string{"run", "--lease", "mem://" + memName("hurry"), "--grace", "1m", "--"}, stubborn(pidFile)...), env)
	}()
	pid := pidIn(t, pidFile)
	cancel(&signalCause{sig: 2})
	time.Sleep(200 * time.Millisecond)
	if !alive(pid) {
		t.Fatal("the command was killed before its grace period ended")
	}
	close(hurry)
	eventually(t, 5*time.Second, "the command killed after the second signal", func() bool { return !alive(pid) })
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("leasehold did not exit")
	}
}

// TestLeftoversDieWithTheCommand: what the command left running in its
// process group is killed when the command exits by itself: nothing it
// started outlives its term.
func TestLeftoversDieWithTheCommand(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	code, stderr := leasehold(t, context.Background(), "run", "--lease", "mem://"+memName("leftovers"), "--",
		"sh", "-c", `sleep 60 & echo $! > "$0"; exit 0`, pidFile)
	if code != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	pid := pidIn(t, pidFile)
	eventually(t, 2*time.Second, "the command's leftover sleep killed", func() bool { return !alive(pid) })
}

// TestCommandExitStatus: leasehold exits with the command's own status, or
// 128+N when a signal N killed it.
func TestCommandExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  string
		want int
	}{
		{"success", "exit 0", 0},
		{"failure", "exit 3", 3},
		{"killed", "kill -9 $$", exitSignal + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := leasehold(t, context.Background(), "run", "--lease", "mem://"+memName("status"), "--", "sh", "-c", tc.cmd)
			if code != tc.want {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
		})
	}
}

// TestPortablePath runs the supervision tests on the path that macOS and
// the other Unix systems take, which cannot wait for the command without
// reaping it (no waitid with WNOWAIT): on Linux, in every test run.
// (scripts/test also runs the whole package so, with -tags
// leasehold_portable, the end-to-end tests included.)
func TestPortablePath(t *testing.T) {
	if exitedUnreaped == nil {
		t.Skip("this build takes the portable path in every test")
	}
	portableOnly.Store(true)
	t.Cleanup(func() { portableOnly.Store(false) })
	for name, test := range map[string]func(*testing.T){
		"StopKeepsTheLeaseUntilTheCommandHasExited": TestStopKeepsTheLeaseUntilTheCommandHasExited,
		"LostLeaseKillsTheCommandAtOnce":            TestLostLeaseKillsTheCommandAtOnce,
		"PartitionedLeaderIsDeadBeforeTakeover":     TestPartitionedLeaderIsDeadBeforeTakeover,
		"SecondSignalSkipsTheGracePeriod":           TestSecondSignalSkipsTheGracePeriod,
		"LeftoversDieWithTheCommand":                TestLeftoversDieWithTheCommand,
		"CommandExitStatus":                         TestCommandExitStatus,
		"CommandEnvironment":                        TestCommandEnvironment,
		"StallTimeout":                              TestStallTimeout,
	} {
		t.Run(name, test)
	}
}
