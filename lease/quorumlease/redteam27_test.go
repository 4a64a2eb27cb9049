package quorumlease_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam27QuorumHandoffSeenLandedThenReleased (RT27-1 through a
// quorum; fails before abfef19): a quorum handoff whose answers were lost
// and whose read-backs failed on every member (ReleaseTo: ErrUnavailable),
// an Observe of the holder's quorum, then its Release (the holder falls
// back to a plain release): Release must leave the handoff, and a third
// contender must not take the lease at once.
func TestRedTeam27QuorumHandoffSeenLandedThenReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a, b, c := open(t, h, "a"), open(t, h, "b"), open(t, h, "c")
		ta := acquire(t, a)
		for _, s := range h.stores {
			s.LoseResponses("a", 1)
			s.Delay("a", 100*time.Millisecond)
		}
		done := make(chan error, 1)
		go func() { done <- a.(lease.Handoffer).ReleaseTo(context.Background(), ta, "b") }()
		time.Sleep(50 * time.Millisecond)
		for _, s := range h.stores {
			s.FailNext("a", 1) // the read-backs
		}
		if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("ReleaseTo with every answer and read-back lost: %v, want ErrUnavailable", err)
		}
		for _, s := range h.stores {
			s.Heal("a")
		}
		for i := range h.stores {
			if r := h.holderOf(t, i); r.Successor() != "b" {
				t.Fatalf("member %d: %+v, want the handoff landed", i+1, r)
			}
		}
		if _, err := a.Observe(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Observe(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(context.Background(), ta); err != nil {
			t.Errorf("Release after the handoff: %v, want nil", err)
		}
		if tc, err := c.Acquire(context.Background()); err == nil {
			t.Errorf("c, a third contender, took the quorum handed to b at once (token %d)", tc.Token)
		}
		if tb, err := b.Acquire(context.Background()); err != nil || tb.Token <= ta.Token {
			t.Errorf("b's Acquire of the quorum handed to it: %+v, %v, want a term above %d at once", tb, err, ta.Token)
		}
	})
}

// TestRedTeam27QuorumHandoffOnAMinority (holds): a handoff that lands on
// one member of three (the others cannot be reached) ends the holder's
// term (ReleaseTo: ErrUnavailable, then Renew: ErrLost); the successor
// takes that member at once, and nobody leads before the others lapse, a
// TTL after the handoff (the third contender may then lead first).
func TestRedTeam27QuorumHandoffOnAMinority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a, b, c := open(t, h, "a"), open(t, h, "b"), open(t, h, "c")
		ta := acquire(t, a)
		h.stores[1].Partition("a")
		h.stores[2].Partition("a")
		if err := a.(lease.Handoffer).ReleaseTo(context.Background(), ta, "b"); !errors.Is(err, lease.ErrUnavailable) {
			t.Errorf("ReleaseTo landing on one member of three: %v, want ErrUnavailable", err)
		}
		if _, err := a.Renew(context.Background(), ta); !errors.Is(err, lease.ErrLost) {
			t.Errorf("a's Renew after its handoff: %v, want ErrLost", err)
		}
		began := time.Now()
		var lead time.Duration
		for lead == 0 && time.Since(began) < 3*ttl {
			for _, l := range []lease.Lease{c, b} {
				if tm, err := l.Acquire(context.Background()); err == nil {
					lead = time.Since(began)
					if tm.Token <= ta.Token {
						t.Errorf("%s's token %d after a's %d", tm.Holder, tm.Token, ta.Token)
					}
					break
				}
			}
			time.Sleep(ttl / 8)
		}
		if lead < ttl {
			t.Errorf("a contender led %v after a handoff that landed on a minority, want a TTL or more (0: never)", lead)
		}
	})
}

// handoffless hides a member's lease.Handoffer and lease.Keeper: a store
// that cannot hand off (Azure's native lease).
type handoffless struct{ lease.Lease }

func (h handoffless) Wait(r lease.Record) time.Duration { return h.Lease.(lease.Watcher).Wait(r) }

// TestRedTeam27QuorumHandoffMixedMembers (holds): with one member that
// cannot hand off, a handoff lands on the other two: the successor passes
// over the one still held and leads at once; a third contender is refused.
func TestRedTeam27QuorumHandoffMixedMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		wrap := func(l lease.Lease) lease.Lease { return handoffless{l} }
		a, b, c := openFirstAs(t, h, "a", wrap), openFirstAs(t, h, "b", wrap), openFirstAs(t, h, "c", wrap)
		if _, ok := a.(lease.Handoffer); !ok {
			t.Fatal("a quorum with two members of three that hand off is no Handoffer")
		}
		ta := acquire(t, a)
		if err := a.(lease.Handoffer).ReleaseTo(context.Background(), ta, "b"); err != nil {
			t.Fatalf("ReleaseTo: %v", err)
		}
		if r := h.holderOf(t, 0); r.Holder != "a" || !r.Held() || r.Successor() != "" {
			t.Fatalf("member 1, which cannot hand off: %+v, want a's term", r)
		}
		if _, err := c.Acquire(context.Background()); !errors.Is(err, lease.ErrHeld) {
			t.Errorf("c's Acquire: %v, want ErrHeld", err)
		}
		tb, err := b.Acquire(context.Background())
		if err != nil || tb.Token <= ta.Token {
			t.Errorf("b's Acquire: %+v, %v, want a term above %d at once", tb, err, ta.Token)
		}
	})
}
