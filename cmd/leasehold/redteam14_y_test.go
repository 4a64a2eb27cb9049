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
