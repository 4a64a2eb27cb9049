package runner_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// watched is a lease that notes when its Acquire calls begin and when its
// successful renewals were sent; crash makes its renewals hang forever, as
// if its process had died; late delays each renewal by up to lag.
type watched struct {
	lease.Lease
	reads    shared[[]time.Time]
	sent     shared[time.Time]
	acquired shared[time.Time]
	crashed  shared[bool]
	lag      time.Duration
}

func (w *watched) Acquire(ctx context.Context) (lease.Term, error) {
	if w.crashed.get() {
		<-ctx.Done()
		return lease.Term{}, ctx.Err()
	}
	w.reads.update(func(r *[]time.Time) { *r = append(*r, time.Now()) })
	t, err := w.Lease.Acquire(ctx)
	if err == nil {
		w.acquired.set(time.Now())
		w.sent.set(t.Sent)
	}
	return t, err
}

func (w *watched) Release(ctx context.Context, t lease.Term) error {
	if w.crashed.get() {
		<-ctx.Done()
		return ctx.Err()
	}
	return w.Lease.Release(ctx, t)
}

func (w *watched) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if w.crashed.get() {
		<-ctx.Done()
		return lease.Term{}, ctx.Err()
	}
	if w.lag > 0 {
		advance(rand.N(w.lag))
	}
	nt, err := w.Lease.Renew(ctx, t)
	if err == nil {
		w.sent.set(nt.Sent)
	}
	return nt, err
}

func watch(t *testing.T, store *memlease.Store, id string) *watched {
	return &watched{Lease: openLease(t, store, id)}
}

// readsSince counts w's reads at or after since.
func (w *watched) readsSince(since time.Time) int {
	n := 0
	for _, r := range w.reads.get() {
		if !r.Before(since) {
			n++
		}
	}
	return n
}

// followerBudget is the most reads per hour a follower may make: two per
// renew interval, one just after each renewal and one between, so that its
// reads follow each other within the holder's renew interval and count
// towards expiry (lease.Acquire).
const followerBudget = 2 * float64(time.Hour) / float64(renewInterval)

// TestFollowerReadsJustAfterRenewals: a follower started at a random
// moment learns when the holder renews and reads just after, so that when
// the holder crashes, it takes over within a few hundredths of a TTL after
// the TTL that follows the holder's last renewal (never before it), and it
// reads no more than twice per renewal.
func TestFollowerReadsJustAfterRenewals(t *testing.T) {
	for trial := range 10 {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			j := newJournal()
			holder := watch(t, store, "a")
			start(t, runner.Config{Lease: holder, Task: j.task("a")})
			advance(rand.N(ttl))
			follower := watch(t, store, "b")
			start(t, runner.Config{Lease: follower, Task: j.task("b")})
			advance(10 * ttl) // learning
			counted := time.Now()
			advance(time.Hour + rand.N(ttl))
			rate := float64(follower.readsSince(counted)) * float64(time.Hour) / float64(time.Since(counted))
			if rate > followerBudget*1.01 { // a read or two at the window's ends
				t.Errorf("trial %d: the follower read %.0f times an hour, more than %.0f", trial, rate, followerBudget)
			}
			holder.crashed.set(true)
			advance(2 * ttl)
			last, took := holder.sent.get(), follower.acquired.get().Sub(holder.sent.get())
			switch {
			case follower.acquired.get().IsZero():
				t.Fatalf("trial %d: no takeover 2 TTLs after the holder crashed (last renewal sent at %v)", trial, last)
			case took < ttl || took > ttl*104/100:
				t.Errorf("trial %d: takeover %v after the holder's last renewal, want from the TTL (%v) to 1.04 TTL", trial, took, ttl)
			}
			j.checkSafety(t)
		})
	}
}

// TestFollowerOfALateLeader: a holder whose renewals come late, by up to a
// quarter of its renew interval at random, is never taken over while it
// renews; its follower, missing renewals where it expected them, looks
// again and keeps within one and a half times its read budget; and when the
// holder crashes, the takeover still waits the TTL after its last renewal.
func TestFollowerOfALateLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		holder := watch(t, store, "a")
		holder.lag = renewInterval / 4
		start(t, runner.Config{Lease: holder, Task: j.task("a"), OnDemoted: j.demoted("a")})
		advance(rand.N(ttl))
		follower := watch(t, store, "b")
		start(t, runner.Config{Lease: follower, Task: j.task("b")})
		began := time.Now()
		advance(time.Hour)
		if d := j.demotionsOf("a"); len(d) > 0 {
			t.Fatalf("the late holder was demoted while it renewed: %v", d)
		}
		if rate := float64(follower.readsSince(began)); rate > 1.5*followerBudget {
			t.Errorf("the follower of a late holder read %.0f times in an hour, more than 1.5 times %.0f", rate, followerBudget)
		}
		holder.crashed.set(true)
		advance(3 * ttl)
		if took := follower.acquired.get().Sub(holder.sent.get()); took < ttl || took > 2*ttl {
			t.Errorf("takeover %v after the late holder's last renewal, want from the TTL (%v) to twice it", took, ttl)
		}
		j.checkSafety(t)
	})
}

// TestFollowersStaySpread: several followers of one holder each read just
// after its renewals, but not at the same moment, and do not try to take a
// crashed holder's lease over at the same moment either.
func TestFollowersStaySpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		holder := watch(t, store, "a")
		start(t, runner.Config{Lease: holder, Task: j.task("a")})
		var followers []*watched
		for _, id := range []string{"b", "c", "d"} {
			advance(rand.N(ttl))
			f := watch(t, store, id)
			start(t, runner.Config{Lease: f, Task: j.task(id)})
			followers = append(followers, f)
		}
		advance(10 * ttl)
		lastReads := func() map[time.Time]int {
			at := map[time.Time]int{}
			for _, f := range followers {
				r := f.reads.get()
				at[r[len(r)-1]]++
			}
			return at
		}
		if at := lastReads(); len(at) != len(followers) {
			t.Errorf("the followers' latest reads came at %v: %d moments for %d followers, want each its own", at, len(at), len(followers))
		}
		holder.crashed.set(true)
		advance(2 * ttl)
		if at := lastReads(); len(at) != len(followers) {
			t.Errorf("the followers' takeover attempts came at %v: %d moments for %d followers, want each its own", at, len(at), len(followers))
		}
		j.checkSafety(t)
	})
}
