package shard

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/runner"
)

// slowStopFleet is three workers on memlease, TTL 15s and DrainTimeout 45s,
// whose shard functions take 30s to stop once their context is cancelled:
// longer than TTL - RenewInterval, within the drain.
type slowStopFleet struct {
	*fleet
	// obeyExpiry makes the shard functions stop, at the latest, a margin
	// before runner.Expiry of their context, as leasehold run kills a
	// command: the earliest instant a lease the shard rests on may be
	// someone else's.
	obeyExpiry bool
	cancel     map[string]context.CancelFunc
	sick, cut  map[string]*atomic.Bool
	done       sync.WaitGroup
}

const (
	slowStopShards = 6
	slowStopDrain  = 45 * time.Second
	slowStopTakes  = 30 * time.Second
)

func newSlowStopFleet(t *testing.T, obeyExpiry bool) *slowStopFleet {
	f := &slowStopFleet{fleet: newFleet(t, slowStopShards), obeyExpiry: obeyExpiry,
		cancel: map[string]context.CancelFunc{}, sick: map[string]*atomic.Bool{}, cut: map[string]*atomic.Bool{}}
	// One after another, so that a is the assigner.
	for _, id := range []string{"a", "b", "c"} {
		f.start(id)
		time.Sleep(time.Second)
	}
	for !f.o.Balanced([]string{"a", "b", "c"}) {
		time.Sleep(time.Second)
	}
	if got := f.assigner(); got != "a" {
		t.Fatalf("the assigner is %q; want a, the first to start", got)
	}
	return f
}

func (f *slowStopFleet) start(id string) {
	sick, cut := new(atomic.Bool), new(atomic.Bool)
	w, err := New(Config{
		Store: cutStore{f.store.Objects(id), cut}, Group: simGroup, Shards: slowStopShards, Identity: id, TTL: f.ttl,
		DrainTimeout: slowStopDrain, Logger: simLogger().With("w", id),
		HealthCheck: func(context.Context) error {
			if sick.CompareAndSwap(true, false) {
				return errors.New("sick")
			}
			return nil
		},
		HealthThreshold: 1,
		Run: func(ctx context.Context, s Shard) error {
			f.o.Start(id, s.Index, s.Epoch)
			<-ctx.Done()
			f.stop(ctx)
			f.o.End(id, s.Index)
			return nil
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.t.Context())
	f.cancel[id], f.sick[id], f.cut[id] = cancel, sick, cut
	f.done.Go(func() {
		if err := w.Run(ctx); err != nil {
			f.t.Errorf("Run(%s): %v", id, err)
		}
	})
}

// stop takes slowStopTakes to stop a shard whose context ctx was
// cancelled, or, with obeyExpiry, at most until stopBy says.
func (f *slowStopFleet) stop(ctx context.Context) {
	if f.obeyExpiry {
		stopBy(ctx, slowStopTakes, f.ttl/40)
		return
	}
	time.Sleep(slowStopTakes)
}

// stopBy is a shard function's stop, once its context ctx was cancelled,
// that takes takes, or ends margin before runner.Expiry(ctx) if that comes
// first, following Expiry as it moves (runner.RenewalsDone): what a
// function that needs time to stop must do, as leasehold run's kill does.
func stopBy(ctx context.Context, takes, margin time.Duration) {
	end := time.Now().Add(takes)
	changed := runner.RenewalsDone(ctx)
	for {
		until := runner.Expiry(ctx).Add(-margin)
		if end.Before(until) {
			until = end
		}
		if !time.Now().Before(until) {
			return
		}
		select {
		case <-time.After(time.Until(until)):
		case <-changed:
			if next := runner.RenewalsDone(ctx); next != changed {
				changed = next
			} else {
				changed = nil
			}
		}
	}
}

// check fails the test on any shard started while another worker ran it,
// on an epoch that did not increase, or when the shards are not balanced
// over live; and stops the fleet.
func (f *slowStopFleet) check(what string, live []string) {
	f.t.Helper()
	if overlaps, backwards, first := f.o.Violations(); overlaps+backwards > 0 {
		f.t.Errorf("%s: %d overlaps, %d epochs backward; first: %s", what, overlaps, backwards, first)
	}
	if !f.o.Balanced(live) {
		f.t.Errorf("%s: not balanced over %v: counts %v", what, live, f.o.Counts(live))
	}
	for _, cancel := range f.cancel {
		cancel()
	}
	f.done.Wait()
}

// TestAssignerLeavesSlowly: the assigner's worker leaves (its context
// ends, or its health check fails) while its shards' functions take 30s
// to stop (longer than TTL - RenewInterval, within DrainTimeout): its
// assigner lease drains as its liveness does, so no successor frees its
// shards before they stopped. On main the assigner lease's renewals
// stopped at once, it lapsed while the shards drained, and its successor,
// reading the ended term in shard/term, gave them to another worker while
// they ran.
//
// The shards of a worker that is the assigner rest on both its leases, so
// runner.Expiry of a shard's context is the earlier of the two: when the
// assigner lease's calls hang, during a drain or while the liveness
// renews, a shard function that stops by it (as leasehold run kills a
// command by it) has stopped before a successor frees its shard. On main
// it was the liveness lease's alone, which kept moving.
func TestAssignerLeavesSlowly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		obeyExpiry bool
		leave      func(f *slowStopFleet)
		live       []string // after it
	}{
		// SIGTERM, a scale-in: Run's context ends.
		{"stopped", false, func(f *slowStopFleet) { f.cancel["a"]() }, []string{"b", "c"}},
		// Its health check fails once: its liveness steps down as
		// Unhealthy, and it joins again after a cool-down.
		{"unhealthy", false, func(f *slowStopFleet) { f.sick["a"].Store(true) }, []string{"a", "b", "c"}},
		// SIGTERM, and the assigner lease's renewals hang while it drains.
		{"stopped, the assigner lease lost while draining", true, func(f *slowStopFleet) {
			f.cancel["a"]()
			f.cut["a"].Store(true)
		}, []string{"b", "c"}},
		// No leave: the assigner lease's calls hang while the liveness
		// renews, until its shards have stopped.
		{"the assigner lease lost", true, func(f *slowStopFleet) {
			f.cut["a"].Store(true)
			time.Sleep(2 * f.ttl)
			f.cut["a"].Store(false)
		}, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newSlowStopFleet(t, tc.obeyExpiry)
				tc.leave(f)
				time.Sleep(3 * time.Minute)
				f.check(tc.name, tc.live)
			})
		})
	}
}
