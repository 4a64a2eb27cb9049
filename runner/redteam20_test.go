package runner_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// holdIdler is a lease with no Keep (so that RunOnce's minimum hold
// renews) whose Idle is idle, and which notes when each Renew was sent.
type holdIdler struct {
	lease.Lease
	idle   func(ctx context.Context, until time.Time)
	mu     sync.Mutex
	renews []time.Time
}

func (h *holdIdler) Idle(ctx context.Context, until time.Time) { h.idle(ctx, until) }

func (h *holdIdler) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	h.mu.Lock()
	h.renews = append(h.renews, time.Now())
	h.mu.Unlock()
	return h.Lease.Renew(ctx, t)
}

func (h *holdIdler) renewsAfter(at time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.renews {
		if r.After(at) {
			n++
		}
	}
	return n
}

// goRunOnce runs RunOnce of a runner of cfg in a goroutine, and returns
// the channel its result comes on.
func goRunOnce(t *testing.T, cfg runner.Config) <-chan runner.Once {
	t.Helper()
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan runner.Once, 1)
	go func() {
		once, err := r.RunOnce(context.Background())
		if err != nil {
			t.Error(err)
		}
		res <- once
	}()
	return res
}

// TestRedTeam20HoldIdleOverrunsPastTheTTL: during RunOnce's minimum hold
// a's Idle overruns its until, and ignores ctx, past a TTL after the
// hold's latest write: the record lapses, b takes it over for the same
// period, finds the period done (rule 13: the mark was written before the
// hold idled) and does not run; when a's Idle returns, a writes nothing
// more (the hold's write is past its deadline, rule 3) and does not
// release b's lease.
func TestRedTeam20HoldIdleOverrunsPastTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		over := make(chan struct{})
		a := &holdIdler{Lease: openLease(t, store, "a"), idle: func(context.Context, time.Time) { <-over }}
		aDone := goRunOnce(t, runner.Config{Lease: a, Task: done, Logger: quiet, Period: "p", MinHold: 10 * ttl})
		advance(3 * ttl)
		ranB := false
		rb, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Logger: quiet, Period: "p", OnceTimeout: 4 * ttl, Task: func(context.Context) error { ranB = true; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		resB, err := rb.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ranB || resB.Outcome != runner.AlreadyRan {
			t.Errorf("b after a's hold lapsed: %v, ran %t; want AlreadyRan, not run (the done mark kept)", resB.Outcome, ranB)
		}
		bEnded := time.Now()
		close(over)
		resA := <-aDone
		if n := a.renewsAfter(bEnded); n != 0 || resA.Demotion.Released {
			t.Errorf("a after its Idle returned past a TTL: %d renewals sent, released %t; want none", n, resA.Demotion.Released)
		}
	})
}

// TestRedTeam20HoldIdleReturnsEarly (RT20-4): lease.Idler's Idle "returns
// by until", so an Idle that returns at once keeps its contract; but the
// hold then writes again at once, in a loop, for the whole minimum hold
// (and a leader's renewals too): the store is hammered, and in a synctest
// bubble the clock never moves. After a thousand early returns the Idle
// here waits until its until, so that the test ends.
func TestRedTeam20HoldIdleReturnsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := &holdIdler{Lease: openLease(t, store, "a"), idle: earlyIdle()}
		const minHold = 10 * ttl
		runPeriod(t, a, "p", runner.Config{MinHold: minHold}, done)
		if most := int(minHold/renewInterval) + 2; len(a.renews) > most {
			t.Errorf("%d renewals during a hold of %v, renew interval %v; want at most %d", len(a.renews), minHold, renewInterval, most)
		}
	})
}

// earlyIdle returns an Idle that returns at once its first thousand
// times, as lease.Idler allows, and then waits until its until.
func earlyIdle() func(ctx context.Context, until time.Time) {
	calls := 0
	return func(ctx context.Context, until time.Time) {
		calls++
		if calls > 1000 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(until)):
			}
		}
	}
}

// TestRedTeam20LeaderIdleReturnsEarly (RT20-4): a leader's renewals go
// at least a renew interval apart (keepRenewing: red team 11 showed two
// leaders when two writes of a term, close together, were hidden by a
// restore), even when the lease's Idle returns early.
func TestRedTeam20LeaderIdleReturnsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := &holdIdler{Lease: openLease(t, store, "a"), idle: earlyIdle()}
		stop := start(t, runner.Config{Lease: a, Task: func(ctx context.Context) error { <-ctx.Done(); return nil }})
		advance(5 * ttl)
		if err := stop(); err != nil {
			t.Error(err)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		for i := 1; i < len(a.renews); i++ {
			if gap := a.renews[i].Sub(a.renews[i-1]); gap < renewInterval {
				t.Fatalf("renewals %d and %d sent %v apart, want at least the renew interval (%v)", i-1, i, gap, renewInterval)
			}
		}
	})
}
