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

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestJointBoundsWorkByEveryTerm: work on a Joint context rests on every
// term that joined it: its Expiry and Deadline are the earliest of theirs,
// so a term that lapses (its renewals hang) bounds the work while the
// other renews on; RenewalsDone closes at each join and each end of a
// term's renewals, and, once every term's have ended, keeps returning one
// closed channel. Term is the first term's.
func TestJointBoundsWorkByEveryTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var work shared[context.Context]
		var join shared[func(context.Context)]
		var first shared[lease.Term]
		stopFirst := start(t, runner.Config{Lease: openLease(t, store, "a"), Task: func(ctx context.Context) error {
			jctx, j := runner.Joint(ctx)
			lt, _ := runner.Term(ctx)
			work.set(jctx)
			join.set(j)
			first.set(lt)
			<-ctx.Done()
			return nil
		}})
		advance(time.Second)
		jctx := work.get()
		if lt, ok := runner.Term(jctx); !ok || lt.Token != first.get().Token {
			t.Fatalf("Term of the joint context: %+v, %v; want the first term's (token %d)", lt, ok, first.get().Token)
		}
		alone := runner.RenewalsDone(jctx)

		second, err := store.Open("other", lease.Options{Identity: "b", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		var secondEnd shared[time.Time] // its Expiry once its renewals stopped
		start(t, runner.Config{Lease: second, Task: func(ctx context.Context) error {
			join.get()(ctx)
			<-runner.RenewalsDone(ctx)
			secondEnd.set(runner.Expiry(ctx))
			<-ctx.Done()
			return nil
		}})
		advance(time.Second)
		if !closed(alone) {
			t.Fatal("RenewalsDone did not close when a term joined")
		}
		both := runner.RenewalsDone(jctx)
		if closed(both) {
			t.Fatal("RenewalsDone is closed while both terms renew")
		}

		store.Hang("b") // the second term's renewals hang: it ends at its renew deadline
		advance(ttl)
		end := secondEnd.get()
		if end.IsZero() || !closed(both) {
			t.Fatalf("the second term's renewals stopped (its final Expiry %v); RenewalsDone closed: %v, want closed", end, closed(both))
		}
		if got := runner.Expiry(jctx); !got.Equal(end) {
			t.Errorf("Expiry of the joint context: %v; want the lapsing term's, %v", got, end)
		}
		if got, want := runner.Deadline(jctx), end.Add(renewInterval-ttl+renewDeadline); !got.Equal(want) {
			t.Errorf("Deadline of the joint context: %v; want the lapsing term's, %v", got, want)
		}
		advance(time.Minute) // the first term renews on; the bound stays
		if got := runner.Expiry(jctx); !got.Equal(end) {
			t.Errorf("a minute later, Expiry of the joint context: %v; want still %v", got, end)
		}
		last := runner.RenewalsDone(jctx)
		if last == both || closed(last) {
			t.Fatal("RenewalsDone after one term's renewals stopped: want a new channel, open while the other renews")
		}

		_ = stopFirst()
		synctest.Wait() // the joint's watch of the first term notes the end of its renewals
		if !closed(last) || runner.RenewalsDone(jctx) != last {
			t.Fatal("once every term's renewals stopped, RenewalsDone should keep returning one closed channel")
		}
		store.Heal("b")
	})
}
