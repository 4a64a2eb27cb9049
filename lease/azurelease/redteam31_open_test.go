//go:build redteam31open

package azurelease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestRedTeam31HandoffInfiniteLeaseSuccessorNeverComes (open finding):
// lease.Handoffer promises that a successor that never comes leaves the
// lease to the others a TTL after the handoff. On an InfiniteLease, the
// LeaseBlob change keeps the infinite duration: the lease handed to a
// successor that never comes (it crashed, or an operator's --to named
// nobody) is held by no one, for ever, until a person breaks it, although
// its holder stepped down on purpose.
func TestRedTeam31HandoffInfiniteLeaseSuccessorNeverComes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	name := leasetest.UniqueName("rt31-infinite")
	const ttl = 2 * time.Second
	open := func(identity string) lease.Lease {
		l, err := azurelease.Open(t.Context(), azurelease.Options{Container: e.Container, Blob: name, Client: e.Client, InfiniteLease: true}, lease.Options{Identity: identity, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, c := open("a"), open("c")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "gone"); err != nil {
		t.Fatalf("ReleaseTo: %v", err)
	}
	deadline := time.Now().Add(3 * ttl)
	for {
		_, err := c.Acquire(t.Context())
		if err == nil {
			return
		}
		if !errors.Is(err, lease.ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("c's Acquire %v after a handoff to a successor that never came: %v; want the lease a TTL after the handoff", 3*ttl, err)
		}
		time.Sleep(ttl / 4)
	}
}
