package quorumlease_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam17BrokenTermNotTakenBack: a Break that freed a majority of a
// holder's members ends its term: its next Renew returns lease.ErrLost
// (lease.Breaker). The holder's Renew also takes back, with Acquire, each
// member whose term it had lost, and a member that an operator's Break
// had just freed was free for it to take: a holder cut off from member 3
// for a TTL, whose renewal of member 2 failed while Break read them, kept
// member 1 (renewed after Break's read, so Break could not break it),
// took member 3 back, and renewed on for ever a term that leasehold break
// --force had reported broken, with the next contender refused meanwhile
// (red team 17).
func TestRedTeam17BrokenTermNotTakenBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		x, op := open(t, h, "x"), open(t, h, "op")
		tx := acquire(t, x)
		interval := x.Options().RenewInterval

		// x is cut off from member 3 for longer than a TTL: its term of
		// member 3 lapses, and x keeps its majority on members 1 and 2.
		h.stores[2].Partition("x")
		for start := time.Now(); time.Since(start) < ttl+interval; {
			time.Sleep(interval)
			nt, err := x.Renew(ctx, tx)
			if err != nil {
				t.Fatalf("x's renewal with member 3 cut off: %v", err)
			}
			tx = nt
		}

		// The operator reads the lease; x's next renewal reaches member 1
		// alone (member 2 fails), and the break then frees members 2
		// and 3: a majority, reported broken.
		rec, err := op.Observe(ctx)
		if err != nil || rec.Holder != "x" {
			t.Fatalf("the operator's Observe: %+v, %v; want x's record", rec, err)
		}
		h.stores[1].Partition("x")
		if _, err := x.Renew(ctx, tx); !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("x's renewal that reached member 1 alone: %v, want lease.ErrUnavailable", err)
		}
		got, err := op.(lease.Breaker).Break(ctx, rec)
		if err != nil || got.Held() {
			t.Fatalf("Break of x's term with members 2 and 3 unchanged: %+v, %v; want it broken", got, err)
		}

		// x reaches every member again: its term was broken, and its next
		// renewal must say so, not take member 3 back and lead on.
		h.stores[1].Heal("x")
		h.stores[2].Heal("x")
		time.Sleep(interval)
		if nt, err := x.Renew(ctx, tx); !errors.Is(err, lease.ErrLost) {
			t.Errorf("x's renewal after its term was broken on a majority: %+v, %v; want lease.ErrLost", nt, err)
			for range 5 {
				time.Sleep(interval)
				if nt, err = x.Renew(ctx, nt); err != nil {
					break
				}
			}
			t.Errorf("x renewed on after the break: its last renewal %+v, %v", nt, err)
		}
	})
}
