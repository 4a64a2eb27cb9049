//go:build linux

package main

// Red team 16: holes in red teams 14 and 15's fixes in cmd/leasehold,
// each fixed; each test failed on b163f74, before its fix.

import (
	"context"
	"path/filepath"
	"testing"
	"time"
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
