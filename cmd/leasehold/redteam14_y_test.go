//go:build redteam14open && linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

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
