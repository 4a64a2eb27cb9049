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

// TestDeadlineIsWhenTheLeaderStepsDown: Deadline(ctx) is RenewDeadline
// after the term's Sent, moves forward with each renewal, and is the
// instant the task's context is cancelled when renewals stop succeeding.
func TestDeadlineIsWhenTheLeaderStepsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if !runner.Deadline(context.Background()).IsZero() {
			t.Error("Deadline outside a task's context is not the zero time")
		}
		store := memlease.NewStore()
		type seen struct{ deadline, want time.Time }
		var first, renewed shared[seen]
		var last, cancelled shared[time.Time]
		start(t, runner.Config{
			Lease: openLease(t, store, "a"),
			Task: func(ctx context.Context) error {
				lt, _ := runner.Term(ctx)
				first.set(seen{runner.Deadline(ctx), lt.Sent.Add(renewDeadline)})
				for {
					select {
					case <-ctx.Done():
						cancelled.set(time.Now())
						return nil
					case <-time.After(time.Second):
						lt, _ := runner.Term(ctx)
						renewed.set(seen{runner.Deadline(ctx), lt.Sent.Add(renewDeadline)})
						last.set(runner.Deadline(ctx))
					}
				}
			},
		})
		advance(2 * renewInterval)
		store.FailNext("a", 1<<20) // every renewal from now on
		advance(2 * ttl)
		for _, s := range []seen{first.get(), renewed.get()} {
			if !s.deadline.Equal(s.want) {
				t.Errorf("Deadline %v, want Term's Sent plus RenewDeadline: %v", s.deadline, s.want)
			}
		}
		if !renewed.get().deadline.After(first.get().deadline) {
			t.Errorf("Deadline did not move with the renewals: %v, then %v", first.get().deadline, renewed.get().deadline)
		}
		if !cancelled.get().Equal(last.get()) {
			t.Errorf("the task's context was cancelled at %v, its last Deadline was %v", cancelled.get(), last.get())
		}
	})
}

// TestLeaderThroughLateAnswers: the limit the renewals' spacing sets. Each
// renewal is sent a renew interval after the previous was answered (so
// that two land at least that far apart, as lease/driver's argument
// against restores needs: red team 11), and counts from when it was due,
// a renew interval after the previous was sent; so answers late by L keep
// the leader only while RenewInterval + 3L <= RenewDeadline: 0.94 s at a
// TTL of 15 s (runner's doc: What it guarantees). Within it the leader
// keeps one term for ten minutes; past it (1 s) it steps down at its renew
// deadline every few renewals, and leads again, never two at once.
func TestLeaderThroughLateAnswers(t *testing.T) {
	for _, tc := range []struct {
		late      time.Duration
		moreTerms bool
	}{
		{900 * time.Millisecond, false},
		{time.Second, true},
	} {
		t.Run(tc.late.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				j := newJournal()
				stop := start(t, runner.Config{Lease: lateRenewals{openLease(t, store, "a"), tc.late}, Task: j.task("a")})
				advance(10 * time.Minute)
				if err := stop(); err != nil {
					t.Fatal(err)
				}
				j.checkSafety(t)
				if terms := len(j.recorded()); terms > 1 != tc.moreTerms {
					t.Errorf("renewals answered %v late: a led %d terms in 10 minutes; want %s", tc.late, terms, map[bool]string{false: "one", true: "more than one (the documented limit)"}[tc.moreTerms])
				}
			})
		})
	}
}
