package quorumlease_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam23LeftRunningReadSplitsTheAnchor: a member that is back is
// not skipped for longer than "CallTimeout and a renew interval" (readAll's
// comment), and "a contender that holds a minority while another holds a
// member keeps it at most a TTL" (package doc, no livelock), so two
// contenders that start together with a minority down have a leader within
// a TTL. Sequence, CallTimeout 4/5 of the TTL (Options allow up to the
// TTL): member 1 hangs for b; b's Observe waits it out (silent) and its
// next Observe, within the silence, leaves a read running; member 1 heals
// and member 3 goes down for b and c. b and c try at a follower's pace
// from the same instant: b counts member 1 silent while that read runs
// (since a512314, even once its silence is over) and anchors on member 2, c
// anchors on member 1. When the read ends, each still holds its member,
// and each then finds its own campaign lapsed and its own record on its
// member held "by another" for a TTL more: no leader for two TTLs (4.085s
// at TTL 2s; 800ms before a512314, whose attempts waited for member 1 once
// its silence was over).
func TestRedTeam23LeftRunningReadSplitsTheAnchor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		callTimeout := ttl * 4 / 5
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
		h.stores[0].Hang("b")
		b.Observe(ctx) // waited for: no answer within CallTimeout, silent
		b.Observe(ctx) // within the silence: left running, until CallTimeout
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
			t.Errorf("b (a read of member 1 left running from its hang, member 1 back) and c tried together, member 3 down: leader %q after %v, want one within a TTL (%v)", leader, took, ttl)
		}
		time.Sleep(2 * ttl) // the calls that outlive the attempts end
	})
}
