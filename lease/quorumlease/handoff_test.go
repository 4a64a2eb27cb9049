package quorumlease_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestHandoffTakenAtOnceByTheSuccessorOnly: a quorum holder's ReleaseTo
// hands every member to the named contender, which takes a majority at
// its first Acquire with a greater token; a third contender, reading at
// the same moment, sees the quorum held by the holder.
func TestHandoffTakenAtOnceByTheSuccessorOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a, b, c := open(t, h, "a"), open(t, h, "b"), open(t, h, "c")
		ta := acquire(t, a)
		if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
			t.Fatalf("ReleaseTo b: %v", err)
		}
		r, err := c.Observe(t.Context())
		if err != nil || r.Holder != "a" || !r.Held() || r.Successor() != "b" {
			t.Fatalf("c's Observe after the handoff: %+v, %v, want held by a, successor b", r, err)
		}
		if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("c's Acquire of a quorum handed to b: %v, want lease.ErrHeld", err)
		}
		tb, err := b.Acquire(t.Context())
		if err != nil {
			t.Fatalf("b's first Acquire of a quorum handed to it: %v, want a term at once", err)
		}
		if tb.Token <= ta.Token {
			t.Errorf("b's token %d after a's %d, want more", tb.Token, ta.Token)
		}
	})
}

// TestHandoffMissedByOneMember: the holder's ReleaseTo lands on members 2
// and 3 and not on member 1 (cut off from the holder): a majority took
// it, and the successor passes over member 1, still held in the ended
// term, and takes members 2 and 3 at once, not a TTL later.
func TestHandoffMissedByOneMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a, b, c := open(t, h, "a"), open(t, h, "b"), open(t, h, "c")
		ta := acquire(t, a)
		if _, err := b.Observe(t.Context()); err != nil {
			t.Fatal(err)
		}
		h.stores[0].Partition("a")
		if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
			t.Fatalf("ReleaseTo b with member 1 cut off: %v, want nil (a majority took it)", err)
		}
		if got := h.holderOf(t, 0); got.Holder != "a" || got.Successor() != "" {
			t.Fatalf("member 1 after the handoff it missed: %+v, want a's renewal", got)
		}
		began := time.Now()
		tb, err := b.Acquire(t.Context())
		if err != nil {
			t.Fatalf("b's first Acquire of a quorum handed to it on two members of three: %v, want a term at once", err)
		}
		if d := time.Since(began); d > 0 {
			t.Errorf("b's Acquire took %v, want no wait", d)
		}
		if tb.Token <= ta.Token {
			t.Errorf("b's token %d after a's %d, want more", tb.Token, ta.Token)
		}
		if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
			t.Errorf("c's Acquire after b's: %v, want lease.ErrHeld", err)
		}
	})
}
