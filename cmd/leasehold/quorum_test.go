//go:build unix

package main

import (
	"context"
	"strings"
	"testing"
)

// TestRunOnAQuorum: leasehold run leads on a quorum of stores as on one,
// and --shards, not built over a quorum yet, is refused by name.
func TestRunOnAQuorum(t *testing.T) {
	q := "quorum:mem://" + memName("qa") + ",mem://" + memName("qb") + ",mem://" + memName("qc")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true"); code != 0 {
		t.Fatalf("run --once on a quorum: exit %d\n%s", code, stderr)
	}
	code, stderr := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", q, "--ttl", "2s", "--", "true")
	if code == 0 || !strings.Contains(stderr, "is a quorum: --shards works on one store's URL") {
		t.Errorf("run --shards on a quorum: exit %d, want a refusal that says so\n%s", code, stderr)
	}
}
