package runner_test

import (
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// shownNative is a lease whose store judges expiry itself and whose
// holder's renewals change the record's version all the same, as Azure's
// do (lease.RenewalShower): its HeldError's Wait is how long until the
// lease can have lapsed, a TTL after this contender first saw the record
// as it is, which is what memlease's count reports.
type shownNative struct{ *watched }

func (shownNative) Judge() lease.Judge { return lease.JudgedByStore }

func (shownNative) RenewalsShow() bool { return true }

// askingReads is a shownNative lease whose store asks a follower for reads
// reads per renewal, as Azure's does (lease.FollowerReader).
type askingReads struct {
	shownNative
	reads int
}

func (a askingReads) FollowerReads() int { return a.reads }

// TestFollowerOfShownRenewals: on a store that judges expiry itself but
// shows each renewal (Azure), a follower reads just after the holder's
// renewals as on a compare-and-swap store, no more than twice per renewal,
// and takes a crashed holder's lease over within a few hundredths of a TTL
// after the TTL that follows its last renewal.
func TestFollowerOfShownRenewals(t *testing.T) {
	for trial := range 10 {
		synctest.Test(t, func(t *testing.T) {
			holder, follower, j := followAfter(t, func(b *watched) runner.Config {
				return runner.Config{Lease: shownNative{b}}
			})
			advance(10 * ttl) // learning
			counted := time.Now()
			advance(time.Hour + rand.N(ttl))
			rate := float64(follower.readsSince(counted)) * float64(time.Hour) / float64(time.Since(counted))
			if rate > followerBudget*1.01 {
				t.Errorf("trial %d: the follower read %.0f times an hour, more than %.0f", trial, rate, followerBudget)
			}
			holder.crashed.set(true)
			advance(2 * ttl)
			took := follower.acquired.get().Sub(holder.sent.get())
			switch {
			case follower.acquired.get().IsZero():
				t.Fatalf("trial %d: no takeover 2 TTLs after the holder crashed", trial)
			case took < ttl || took > ttl*104/100:
				t.Errorf("trial %d: takeover %v after the holder's last renewal, want from the TTL (%v) to 1.04 TTL", trial, took, ttl)
			}
			j.checkSafety(t)
		})
	}
}
