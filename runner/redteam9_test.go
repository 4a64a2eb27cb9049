package runner_test

import (
	"context"

	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedteam9StaleHoldOfADeadTermSwallowsATrigger: a dies during its
// minimum hold, leaving its record held with Schedule.Hold. b (no
// MinHold) takes the lapsed record over: Acquire carries every
// annotation over, so b's own acquired record shows Hold=1 although b
// holds no hold at all. c fires while b's short task runs (its first
// refusal is b's record, "held after a run"), b returns and releases
// before its first renewal, and c wins the released lease before b's
// record "could have lapsed". holdEnded takes c for a duplicate of a hold
// that ended long ago on a dead term: c gives the lease back, NotElected,
// and its task never runs. Without the stale mark (any record of b's
// that does not carry a's Hold) c runs: a trigger that is no duplicate
// of anything is swallowed.
func TestRedteam9StaleHoldOfADeadTermSwallowsATrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := openLease(t, store, "a")
		tm, err := a.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Renew(context.Background(), tm.Annotate(lease.AnnotationHold, "1")); err != nil {
			t.Fatal(err)
		}
		// a dies during its hold.
		bRunning := make(chan struct{})
		bDone := make(chan runner.Once, 1)
		rb, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Logger: quiet, OnceTimeout: 4 * ttl,
			Task: func(context.Context) error { close(bRunning); advance(2 * time.Second); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			res, err := rb.RunOnce(context.Background())
			if err != nil {
				t.Error(err)
			}
			bDone <- res
		}()
		<-bRunning
		advance(500 * time.Millisecond)
		rec := record(t, store)
		if rec.Holder != "b" || !rec.Held() {
			t.Fatalf("record while b runs: %+v, want held by b", rec)
		}
		staleHold := runner.ScheduleOf(rec.Annotations).Hold
		res, ranAt := duplicate(t, openLease(t, store, "c"))
		bres := <-bDone
		if bres.Outcome != runner.Ran {
			t.Fatalf("b: %v, want Ran", bres.Outcome)
		}
		if ranAt.IsZero() || res.Outcome != runner.Ran {
			t.Errorf("c, fired while b (no MinHold) ran, after b released: %v (holder %q), task ran: %v; want Ran. b's own record showed Hold=%v, carried over from a's dead term", res.Outcome, res.Holder(), !ranAt.IsZero(), staleHold)
		}
	})
}
