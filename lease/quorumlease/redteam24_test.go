package quorumlease_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam24LeftRunningReadTimingsHold widens red team 23's RT23-1
// sequence (TestRedTeam23LeftRunningReadSplitsTheAnchor) over its timings:
// readAll's comment, "a member back from a hang is thus read again within
// CallTimeout and a renew interval, or two renew intervals, whichever is
// less", and the package doc's no-livelock bound, so two contenders that
// start together with a minority down have a leader within a TTL. Member
// 1 hangs for b, b waits it out, and leaves a read running at every tenth
// of the silence (up to its very end, the latest readFrom); member 1 heals
// at once or up to one and a half renew intervals later (the read left
// running still hangs); CallTimeout is a fifth, a half, four fifths or
// 99% of the TTL. Then member 3 goes down for b and c and both try at a
// follower's pace.
func TestRedTeam24LeftRunningReadTimingsHold(t *testing.T) {
	for _, ctPercent := range []time.Duration{20, 50, 80, 99} {
		for _, healTenths := range []time.Duration{0, 5, 10, 15} {
			for _, leftTenths := range []time.Duration{1, 3, 5, 7, 9, 10} {
				synctest.Test(t, func(t *testing.T) {
					leftRunningReadLeader(t, ttl*ctPercent/100, healTenths, leftTenths)
				})
			}
		}
	}
}

// leftRunningReadLeader is one timing of TestRedTeam24LeftRunningReadTimingsHold.
func leftRunningReadLeader(t *testing.T, callTimeout, healTenths, leftTenths time.Duration) {
	ctx := context.Background()
	h := newMemQuorum(3)
	var ls []lease.Lease
	for _, who := range []string{"b", "c"} {
		l, err := h.Open(ctx, "job", lease.Options{Identity: who, TTL: ttl, CallTimeout: callTimeout})
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		for _, s := range h.stores {
			s.Delay(who, 5*time.Millisecond)
		}
	}
	b := ls[0]
	ri := b.Options().RenewInterval
	h.stores[0].Hang("b")
	b.Observe(ctx) // waited for: no answer within CallTimeout, silent for a renew interval
	time.Sleep(ri * leftTenths / 10)
	b.Observe(ctx) // within the silence (or at its end): left running
	time.Sleep(ri * healTenths / 10)
	h.stores[0].Heal("b")
	h.stores[0].Delay("b", 5*time.Millisecond)
	h.stores[2].Partition("b")
	h.stores[2].Partition("c")
	start := time.Now()
	var (
		mu     sync.Mutex
		leader string
		took   time.Duration
		wg     sync.WaitGroup
	)
	for _, l := range ls {
		wg.Go(func() {
			for time.Since(start) < 3*ttl {
				_, err := l.Acquire(ctx)
				mu.Lock()
				if err == nil && leader == "" {
					leader, took = l.Options().Identity, time.Since(start)
				}
				done := leader != ""
				mu.Unlock()
				if done {
					return
				}
				time.Sleep(ttl / 8)
			}
		})
	}
	wg.Wait()
	if leader == "" || took > ttl {
		t.Errorf("CallTimeout %v, read left running %d/10 into the silence, member 1 healed %d/10 of a renew interval after: leader %q after %v, want one within a TTL (%v)",
			callTimeout, leftTenths, healTenths, leader, took, ttl)
	}
	time.Sleep(2 * ttl) // the calls that outlive the attempts end
}
