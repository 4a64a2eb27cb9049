//go:build linux

package main

// Red team 24: attacks on the --once --min-hold exit (runOnce, keepHold)
// as changed since 6a3af11; each test fails on c7c40b9.

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

// TestRedTeam24SecondSignalDuringTheReleaseSaysLeftButReleases (docs/cli.md,
// --min-hold: "a second SIGTERM or SIGINT exits at once without
// releasing ..., and the lease lapses a TTL after its last renewal";
// runOnce's exit line: "the minimum hold was left without releasing the
// lease; it lapses a TTL after its last write"). The sequence: the command
// exits, a first SIGTERM, the hold runs to its end and the runner sends
// its release (heldLease.Release passed its gone check), the store is slow
// to answer, and the second signal comes while the release is in flight.
// keepHold marks the lease left (too late: the release is past the
// check), closes left, and runOnce exits 143 at once saying the lease was
// left unreleased and lapses a TTL after its last write; the release then
// lands (the runner sends it on a context without cancel, and a store
// applies a request it received whatever became of its sender). An
// operator who reads the line waits a TTL for a record that is already
// released, and the exit says the hold was cut short when it was over.
func TestRedTeam24SecondSignalDuringTheReleaseSaysLeftButReleases(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	name := memName("rt24-release-in-flight")
	id := name + "-first" // memlease's faults are by identity, process-wide
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
	cancel(&signalCause{sig: 15}) // a first SIGTERM, after the command exited: the hold goes on
	eventually(t, 5*time.Second, "leasehold logged that the hold goes on", func() bool {
		return strings.Contains(stderr.String(), "the minimum hold goes on")
	})
	// The store now answers each of the holder's calls a second late; with
	// a 3 s renew interval, the hold's next write is its release.
	_, w0 := memlease.Default.Calls(id)
	memlease.Default.Delay(id, time.Second)
	eventually(t, 10*time.Second, "the release was sent", func() bool {
		_, w := memlease.Default.Calls(id)
		return w > w0
	})
	hurried.Do(func() { close(hurry) }) // the second signal, with the release in flight
	var code int
	select {
	case code = <-exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("leasehold did not exit on a second signal; stderr:\n%s", stderr)
	}
	time.Sleep(1500 * time.Millisecond) // the release, sent, reaches the store
	lines := strings.Join(errorLines(stderr.String()), "\n")
	if rec := observe(t, name); rec.Released && strings.Contains(lines, "without releasing") {
		t.Errorf("leasehold exited %d saying %q, and the record is released (%+v): the second signal came with the release in flight, which landed; the exit says the hold was left and lapses a TTL later", code, lines, rec)
	}
}
