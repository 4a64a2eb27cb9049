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

// xLeadsOnTwo is the start of the partial breaks below: every member
// released by an earlier term, x, cut off from member 1, leads on members
// 2 and 3 (tx), and op, an operator's Lease, reads them all.
func xLeadsOnTwo(t *testing.T) (h memQuorum, x, op lease.Lease, tx lease.Term) {
	t.Helper()
	h = newMemQuorum(3)
	w := open(t, h, "w")
	x, op = open(t, h, "x"), open(t, h, "op")
	tw := acquire(t, w)
	if err := w.Release(context.Background(), tw); err != nil {
		t.Fatal(err)
	}
	h.stores[0].Partition("x")
	return h, x, op, acquire(t, x)
}

// TestRedTeam17BreakCountsOnlyWhatItBroke: Break reported the term broken
// when the quorum record it left showed no majority held, counting a
// member that was free already: a holder cut off from member 1 (free)
// leads on members 2 and 3; its renewal of member 3 lands between Break's
// read and its write, so Break frees member 2 alone, and reports success
// (members 1 and 2 free). The holder renews member 3, takes member 1
// back, and leads on, its term reported broken (lease.Breaker: the
// holder's next Renew returns ErrLost; red team 17). Break succeeds only
// when the members it broke, with those broken before in the same term,
// are a majority; else the holder may keep one it could not break.
func TestRedTeam17BreakCountsOnlyWhatItBroke(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h, x, op, tx := xLeadsOnTwo(t)
		interval := x.Options().RenewInterval

		rec, err := op.Observe(ctx)
		if err != nil || rec.Holder != "x" || !rec.Held() {
			t.Fatalf("the operator's Observe: %+v, %v; want x's record", rec, err)
		}
		// x's renewal reaches member 3 alone, after the operator's read.
		h.stores[1].Partition("x")
		time.Sleep(interval)
		if _, err := x.Renew(ctx, tx); !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("x's renewal that reached member 3 alone: %v, want lease.ErrUnavailable", err)
		}
		breakThenRenew(t, op, rec, x, tx, lease.ErrHeld, "could not break member 3, renewed meanwhile", func() {
			h.stores[0].Heal("x")
			h.stores[1].Heal("x")
			time.Sleep(interval)
		})
	})
}

// breakThenRenew has op Break rec, then, after between, x Renew tx: a
// Break that reports x's term broken must leave x's renewal lease.ErrLost;
// one that does not must fail with refused (what it could not do).
func breakThenRenew(t *testing.T, op lease.Lease, rec lease.Record, x lease.Lease, tx lease.Term, refused error, what string, between func()) {
	t.Helper()
	ctx := context.Background()
	got, err := op.(lease.Breaker).Break(ctx, rec)
	broken := err == nil && !got.Held()
	between()
	nt, rerr := x.Renew(ctx, tx)
	if broken && !errors.Is(rerr, lease.ErrLost) {
		t.Errorf("Break reported x's term broken (%+v), yet x's next renewal: %+v, %v; want lease.ErrLost", got, nt, rerr)
	}
	if !broken && !errors.Is(err, refused) {
		t.Errorf("Break that %s: %+v, %v; want %v", what, got, err, refused)
	}
}

// TestRedTeam17BreakUnreadMemberMayHoldTheTerm: the same with a member
// the operator cannot read: x leads on members 2 and 3, cut off from
// member 1 (free); the operator, cut off from member 3, breaks member 2,
// the one it sees x hold, and the record it is left with shows no
// majority held; x takes member 1 back and leads on with member 3, its
// term reported broken (red team 17).
func TestRedTeam17BreakUnreadMemberMayHoldTheTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h, x, op, tx := xLeadsOnTwo(t)
		h.stores[2].Partition("op")
		rec, err := op.Observe(ctx)
		if err != nil || rec.Holder != "x" || !rec.Held() {
			t.Fatalf("the operator's Observe, cut off from member 3: %+v, %v; want x's record", rec, err)
		}
		breakThenRenew(t, op, rec, x, tx, lease.ErrUnavailable, "could not read member 3", func() {
			h.stores[0].Heal("x")
			time.Sleep(x.Options().RenewInterval)
		})
	})
}

// TestRedTeam17RefusedBreakLeavesTermLive: a Break that freed a minority
// of a live holder's members (it renewed the others after Break's read)
// is refused, and the holder leads on: it does not take the broken
// member back while the member's record shows the break (it lapses
// unrenewed first), and its term does not end for it.
func TestRedTeam17RefusedBreakLeavesTermLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		x, op := open(t, h, "x"), open(t, h, "op")
		tx := acquire(t, x)
		interval := x.Options().RenewInterval
		rec, err := op.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h.stores[2].Partition("x")
		time.Sleep(interval)
		if tx, err = x.Renew(ctx, tx); err != nil {
			t.Fatalf("x's renewal of members 1 and 2: %v", err)
		}
		if _, err := op.(lease.Breaker).Break(ctx, rec); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("Break of a term renewed on members 1 and 2 since the read: %v, want lease.ErrHeld", err)
		}
		h.stores[2].Heal("x")
		for i := range 3 * ttl / interval {
			time.Sleep(interval)
			if tx, err = x.Renew(ctx, tx); err != nil {
				t.Fatalf("x's renewal %d after a refused break of member 3: %v, want its term live", i+1, err)
			}
		}
	})
}
