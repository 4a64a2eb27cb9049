package runner_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestLateRenewalCountsFromWhenDue: a renewal that succeeds late (its
// first attempts failed) counts from when it was due, one RenewInterval
// after the previous renewal was sent, so that the holder still steps
// down by that + RenewDeadline (rule 3).
func TestLateRenewalCountsFromWhenDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		terms := make(chan time.Time, 16)
		start(t, runner.Config{
			Lease: openLease(t, store, "a"),
			Task: func(ctx context.Context) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(time.Second):
						if lt, ok := runner.Term(ctx); ok {
							select {
							case terms <- lt.Sent:
							default:
							}
						}
					}
				}
			},
		})
		advance(time.Millisecond)
		elected := time.Now().Add(-time.Millisecond)
		advance(renewInterval - time.Millisecond - time.Nanosecond)
		store.FailNext("a", 2) // the first renewal's first two attempts
		advance(renewInterval)
		var sent time.Time
		for len(terms) > 0 {
			sent = <-terms
		}
		if due := elected.Add(renewInterval); !sent.Equal(due) {
			t.Fatalf("the late renewal's term counts from %v after the election, want when it was due (%v)", sent.Sub(elected), renewInterval)
		}
	})
}
