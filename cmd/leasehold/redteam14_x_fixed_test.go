//go:build linux

package main

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

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
