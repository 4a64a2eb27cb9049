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

// overrunIdler is a lease whose Idle ignores both until and ctx: it
// returns only when over is closed.
type overrunIdler struct {
	lease.Lease
	over <-chan struct{}
}

func (o overrunIdler) Idle(context.Context, time.Time) { <-o.over }

// TestRedTeam19IdleThatOverrunsStillStepsDown: a lease.Idler whose Idle
// overruns until, and ignores ctx, keeps the runner from renewing, but
// not from stepping down: the step-down timer fires at the renew deadline
// while Idle runs, and a contender that takes the lease over once it has
// lapsed never leads beside it (rules 1 and 3). The renewals resume when
// Idle returns, and the runner stops.
func TestRedTeam19IdleThatOverrunsStillStepsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		over := make(chan struct{})
		stopA := start(t, runner.Config{Lease: overrunIdler{openLease(t, store, "a"), over}, Task: j.task("a"), OnDemoted: j.demoted("a")})
		advance(time.Second)
		if j.leader() != "a" {
			t.Fatalf("leader %q, want a", j.leader())
		}
		start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(3 * ttl)
		close(over)
		advance(ttl)
		if err := stopA(); err != nil {
			t.Errorf("a's Run after its Idle returned: %v", err)
		}
		terms := j.recorded()
		if len(terms) == 0 || terms[0].who != "a" || terms[0].end.Sub(terms[0].start) > renewDeadline {
			t.Errorf("terms %+v: want a's first, ended by its renew deadline (%v) while Idle ran", terms, renewDeadline)
		}
		if d := j.demotionsOf("a"); len(d) == 0 || d[0].Reason != runner.DeadlinePassed {
			t.Errorf("a's demotions %+v, want the renew deadline passed first", d)
		}
		if j.leader() != "b" {
			t.Errorf("leader %q after a stepped down, want b", j.leader())
		}
		j.checkSafety(t)
	})
}
