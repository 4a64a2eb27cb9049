package runner_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// calledLease records when each of its Acquire and Renew calls was made.
type calledLease struct {
	lease.Lease
	t0    time.Time
	mu    *sync.Mutex
	calls *[]string
}

func (l calledLease) note(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.calls = append(*l.calls, l.Options().Identity+" "+op+" +"+time.Since(l.t0).String())
}

func (l calledLease) Acquire(ctx context.Context) (lease.Term, error) {
	l.note("acquire")
	return l.Lease.Acquire(ctx)
}

func (l calledLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	l.note("renew")
	return l.Lease.Renew(ctx, t)
}

// countedSource counts its draws.
type countedSource struct {
	rand.Source
	n *atomic.Int64
}

func (s countedSource) Uint64() uint64 {
	s.n.Add(1)
	return s.Source.Uint64()
}

// A run whose runners draw from seeded sources (Config.Rand) replays
// exactly: a follower's reads, the campaign's jitter after a task ended,
// and the backoff of failed renewals come at the same moments each time.
func TestRandReplaysARun(t *testing.T) {
	run := func() (calls []string, draws int64) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			var mu sync.Mutex
			var n atomic.Int64
			t0 := time.Now()
			for i, who := range []string{"a", "b"} {
				l := calledLease{Lease: openLease(t, store, who), t0: t0, mu: &mu, calls: &calls}
				start(t, runner.Config{Lease: l, Rand: runner.LockedSource(countedSource{rand.NewPCG(1, uint64(i)), &n}),
					Task: func(ctx context.Context) error {
						select {
						case <-ctx.Done():
						case <-time.After(2 * ttl):
						}
						return errors.New("done")
					}})
				advance(time.Second)
			}
			store.FailNext("a", 3)
			advance(6 * ttl)
			draws = n.Load()
		})
		return calls, draws
	}
	first, draws := run()
	if draws == 0 {
		t.Fatal("the runners drew nothing from Config.Rand")
	}
	for range 3 {
		if again, _ := run(); !slices.Equal(again, first) {
			t.Fatalf("a run with the same sources made other calls:\n%v\nthen\n%v", first, again)
		}
	}
}
