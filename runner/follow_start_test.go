package runner_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// burstReads is the most reads a follower makes in its first renew
// interval: one every TTL/20 while it looks for the holder's first
// renewal, and the first read itself.
const burstReads = int(renewInterval/(ttl/20)) + 2

// crashAfterRenewal crashes w right after its next renewal.
func crashAfterRenewal(w *watched) {
	for last := w.sent.get(); w.sent.get().Equal(last); {
		advance(time.Millisecond)
	}
	w.crashed.set(true)
}

// TestJustStartedFollowerTakesOverSoon: a follower whose holder crashes
// right after a renewal that comes within one TTL of the follower's start
// (armed at a random moment), before it could
// watch a dozen renewals, learns the holder's phase from the first
// renewal after its start and takes over within 1.06 TTL of the holder's
// last renewal (never before the TTL), for at most burstReads reads in its
// first renew interval. Before the follower looked for its first renewal
// closely, it took over up to 1 + RenewInterval/TTL (1.375) after it.
func TestJustStartedFollowerTakesOverSoon(t *testing.T) {
	for trial := range 20 {
		synctest.Test(t, func(t *testing.T) {
			holder, follower, j := followAfter(t, func(b *watched) runner.Config { return runner.Config{Lease: b} })
			started := time.Now()
			crashAt := rand.N(ttl - renewInterval)
			advance(crashAt)
			crashAfterRenewal(holder)
			advance(renewInterval)
			if n := len(follower.reads.get()) - follower.readsSince(started.Add(renewInterval)); n > burstReads {
				t.Errorf("trial %d: the follower read %d times in its first renew interval, more than %d", trial, n, burstReads)
			}
			advance(2 * ttl)
			last, took := holder.sent.get(), follower.acquired.get().Sub(holder.sent.get())
			switch {
			case follower.acquired.get().IsZero():
				t.Fatalf("trial %d: no takeover 2 TTLs after the holder crashed (last renewal sent at %v)", trial, last)
			case took < ttl || took > ttl*106/100:
				t.Errorf("trial %d: crash armed %v after the follower's start: takeover %v after the holder's last renewal, want from the TTL (%v) to 1.06 TTL", trial, crashAt, took, ttl)
			}
			j.checkSafety(t)
		})
	}
}

// TestFollowerOfADeadHolderBurstsOnce: a follower started after its
// holder died sees no renewal in its burst, and then polls every campaign
// interval: its reads in the renew interval after the burst are at most
// two, and it takes over a TTL after its first read.
func TestFollowerOfADeadHolderBurstsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		holder := watch(t, store, "a")
		start(t, runner.Config{Lease: holder, Task: j.task("a")})
		advance(rand.N(ttl))
		holder.crashed.set(true)
		advance(rand.N(ttl / 2))
		follower := watch(t, store, "b")
		started := time.Now()
		start(t, runner.Config{Lease: follower, Task: j.task("b")})
		advance(renewInterval + ttl/20)
		after := time.Now()
		advance(renewInterval)
		if n := follower.readsSince(after); n > 2 {
			t.Errorf("the follower of a dead holder read %d times in the renew interval after its burst, want at most 2", n)
		}
		advance(2 * ttl)
		if took := follower.acquired.get().Sub(started); took < ttl || took > ttl*106/100 {
			t.Errorf("takeover %v after the follower's start, want from the TTL (%v) to 1.06 TTL", took, ttl)
		}
		j.checkSafety(t)
	})
}
