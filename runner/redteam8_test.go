package runner_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedteam8LegitTriggerAfterHoldSwallowed: a runs period tick1 with a
// minimum hold; its hold ends and its release is in flight (the store
// answers it 1s late). b fires for the NEXT period, tick2, after a's hold
// is over: it first reads the record still marked Hold, then finds it
// released, wins it before a's record "could have lapsed" by b's count,
// gives the lease back and returns NotElected. tick2 never runs: a legit
// trigger of a later period, fired after the hold, is swallowed for its
// whole period. Before holdEnded it ran.
func TestRedteam8LegitTriggerAfterHoldSwallowed(t *testing.T) {
	const minHold = 30 * time.Second
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		start := time.Now()
		aDone := goRunOnce(t, runner.Config{Lease: openLease(t, store, "a"), Task: done, Logger: quiet, MinHold: minHold, Period: tick1})
		advance(minHold - time.Second) // after a's last renewal of the hold
		store.Delay("a", time.Second)  // its release lands 1s after it is sent
		advance(time.Second + 200*time.Millisecond)
		if time.Since(start) <= minHold {
			t.Fatal("b must fire after a's hold is over")
		}
		ran := false
		rb, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Logger: quiet, Period: tick2, OnceTimeout: 4 * ttl,
			Task: func(context.Context) error { ran = true; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		res, err := rb.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		<-aDone
		if !ran || res.Outcome != runner.Ran {
			t.Errorf("b, for the later period %s, fired %v after a's hold of %v for %s ended: %v (holder %q), task ran: %v; want Ran",
				tick2, time.Duration(200*time.Millisecond), minHold, tick1, res.Outcome, res.Holder(), ran)
		}
	})
}

// lostAnswers is a Lease whose Renew, once lose is set, applies the write
// (the inner Lease sees it succeed) but reports it unanswered, as when the
// response and the read-back are both lost: every write lands, no answer
// comes.
type lostAnswers struct {
	lease.Lease
	lose atomic.Bool
	sent atomic.Int64
}

func (l *lostAnswers) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	if err == nil && l.lose.Load() {
		l.sent.Add(1)
		return lease.Term{}, fmt.Errorf("%w: redteam: answer lost (write landed)", lease.ErrUnavailable)
	}
	return nt, err
}

// TestRedteam8HoldUntilNeverEnds: after the task returns, every write of
// the done mark and the hold lands but its answer is lost. holdUntil's
// "until t has landed once" (marked) is never satisfied, as resolve only
// ever finds "a write" landed, not which: it writes the term again and
// again, long after MinHold, and RunOnce never returns; the lease stays
// held by a finished run for ever (every later trigger is refused), while
// the record has carried the done mark since the first write.
func TestRedteam8HoldUntilNeverEnds(t *testing.T) {
	const minHold = 30 * time.Second
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		l := &lostAnswers{Lease: openLease(t, store, "a")}
		ra, err := runner.New(runner.Config{Lease: l, Logger: quiet, MinHold: minHold, Period: tick1,
			Task: func(context.Context) error { advance(3 * time.Second); l.lose.Store(true); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		aDone := make(chan struct{})
		go func() {
			defer close(aDone)
			if _, err := ra.RunOnce(ctx); err != nil {
				t.Error(err)
			}
		}()
		bound := minHold + 10*ttl
		select {
		case <-aDone:
			return
		case <-time.After(bound):
		}
		rec := record(t, store)
		t.Errorf("RunOnce still running %v after its task returned (MinHold %v): %d writes sent since, all landed; record %s token %d held=%v done=%v hold=%v",
			bound, minHold, l.sent.Load(), rec.Holder, rec.Token, rec.Held(), runner.ScheduleOf(rec.Annotations).Done, runner.ScheduleOf(rec.Annotations).Hold)
		cancel() // SIGTERM of leasehold run: ctx ends
		select {
		case <-aDone:
			return
		case <-time.After(3 * ttl):
			t.Errorf("and still running %v after its ctx was cancelled", 3*ttl)
		}
		l.lose.Store(false) // let it end, for the bubble to end
		<-aDone
	})
}
