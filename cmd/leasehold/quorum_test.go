//go:build unix

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
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

// TestStatusOfAQuorum: status shows the quorum's holder and each member's.
func TestStatusOfAQuorum(t *testing.T) {
	names := []string{memName("sa"), memName("sb"), memName("sc")}
	q := "quorum:mem://" + names[0] + ",mem://" + names[1] + ",mem://" + names[2]
	l, err := lease.Open(context.Background(), q, lease.Options{Identity: "leader-1", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	term, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", q}, env); code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	out := stdout.String()
	for _, want := range []string{"holder         leader-1", fmt.Sprintf("token          %d", term.Token), "member 1 (mem://" + names[0] + ") held by leader-1 (its token 1, quorum token 1)", "member 3 (mem://" + names[2] + ") held by leader-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of a quorum: want %q in\n%s", want, out)
		}
	}
}
