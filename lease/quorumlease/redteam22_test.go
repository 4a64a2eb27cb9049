package quorumlease_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam22StaleSilenceSplitsTheAnchor: a member that hung for a
// contender once is waited for again once it is up, however long ago the
// hang was, so that contenders that start together agree on the first
// member (RT19-2). b took the lease while member 1 hung for it (its read
// had no answer within CallTimeout: silent), led for three TTLs, member 1
// answering again and taken back by its renewals, and released. No
// Acquire or Observe ran in between, so b still counted member 1 as
// silent: with member 3 down (a minority), b and c tried together, c
// anchored on member 1 and b, not waiting for it, on member 2, each held
// one member, neither a majority, and each kept its member for a TTL.
func TestRedTeam22StaleSilenceSplitsTheAnchor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		for _, s := range h.stores {
			s.Delay("b", 5*time.Millisecond)
			s.Delay("c", 5*time.Millisecond)
		}
		b, c := open(t, h, "b"), open(t, h, "c")
		h.stores[0].Hang("b")
		tb := acquire(t, b) // on members 2 and 3
		h.stores[0].Heal("b")
		h.stores[0].Delay("b", 5*time.Millisecond)
		ri := b.Options().RenewInterval
		for end := time.Now().Add(3 * ttl); time.Now().Before(end); {
			b.(lease.Idler).Idle(ctx, time.Now().Add(ri))
			var err error
			if tb, err = b.Renew(ctx, tb); err != nil {
				t.Fatalf("b's renewal: %v", err)
			}
		}
		if rec := h.holderOf(t, 0); rec.Holder != "b" || !rec.Held() {
			t.Fatalf("member 1 after b's renewals: %+v, want b's again", rec)
		}
		if err := b.Release(ctx, tb); err != nil {
			t.Fatal(err)
		}
		h.stores[2].Partition("b")
		h.stores[2].Partition("c")
		var wg sync.WaitGroup
		won := map[string]error{}
		var mu sync.Mutex
		for who, l := range map[string]lease.Lease{"b": b, "c": c} {
			wg.Go(func() {
				_, err := l.Acquire(ctx)
				mu.Lock()
				won[who] = err
				mu.Unlock()
			})
		}
		wg.Wait()
		holders := map[string][]int{}
		for i := range 2 {
			if rec := h.holderOf(t, i); rec.Held() {
				holders[rec.Holder] = append(holders[rec.Holder], i+1)
			}
		}
		if len(holders) != 1 || (won["b"] == nil) == (won["c"] == nil) {
			t.Errorf("b and c tried together, member 1 up for both, member 3 down: members held by %v, b's attempt %v, c's %v; want one of them to lead", holders, won["b"], won["c"])
		}
		time.Sleep(ttl) // the calls that outlive the attempts end
	})
}
