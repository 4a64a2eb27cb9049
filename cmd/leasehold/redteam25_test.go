//go:build linux

package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam25SecondSignalAfterAFailedReleaseSaysSent (docs/cli.md,
// --min-hold since af4f00c: "once the hold is over and its release sent,
// the release may land: leasehold says so"; rule 13). The sequence: the
// command exits, a first SIGTERM, the hold runs to its end, and the
// release fails before it reaches the store (memlease.FailNext: a refused
// connection); the driver reads the record back, slowly, and the second
// signal comes during that read. heldLease counted the release as sent
// when it passed the gone check, so leasehold exits saying the release was
// sent and may land; it never reached the store, and the record stays
// held until it lapses a TTL after its last write.
func TestRedTeam25SecondSignalAfterAFailedReleaseSaysSent(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	name := memName("rt25-release-failed")
	id := name + "-first"
	defer memlease.Default.Heal(id)
	env, _, stderr := testEnv(nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	hurry := make(chan struct{})
	var hurried sync.Once
	defer hurried.Do(func() { close(hurry) })
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", "mem://" + name, "--identity", id, "--ttl", "9s",
			"--min-hold", "2s", "--", "sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the record is held after the run", func() bool {
		b, ok := memlease.Default.Bytes(name)
		return ok && len(b) > 0 && runner.ScheduleOf(observe(t, name).Annotations).Hold
	})
	cancel(&signalCause{sig: 15})
	eventually(t, 5*time.Second, "leasehold logged that the hold goes on", func() bool {
		return strings.Contains(stderr.String(), "the minimum hold goes on")
	})
	// With a 3 s renew interval the hold's next write is its release: it
	// fails at once, and the read back is answered two seconds late.
	_, w0 := memlease.Default.Calls(id)
	memlease.Default.FailNext(id, 1)
	memlease.Default.Delay(id, 2*time.Second)
	eventually(t, 10*time.Second, "the release was tried", func() bool {
		_, w := memlease.Default.Calls(id)
		return w > w0
	})
	time.Sleep(200 * time.Millisecond) // the write has failed; its read back is under way
	hurried.Do(func() { close(hurry) })
	var code int
	select {
	case code = <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("leasehold did not exit on a second signal; stderr:\n%s", stderr)
	}
	time.Sleep(2500 * time.Millisecond) // the read back returns; nothing more is written
	lines := strings.Join(errorLines(stderr.String()), "\n")
	if rec := observe(t, name); !rec.Released && strings.Contains(lines, "release was sent") {
		t.Errorf("leasehold exited %d saying %q, and the record is held (%+v): the release failed before it reached the store, so it cannot land; the record lapses a TTL after its last write", code, lines, rec)
	}
}
