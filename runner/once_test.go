package runner_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// onceTimeout is RunOnce's default bound for the TTL: the TTL plus three
// CampaignIntervals of a third of it.
const onceTimeout = 2 * ttl

// runOnce runs RunOnce for who on l and returns its result and how long it
// took.
func runOnce(t *testing.T, l lease.Lease, task func(context.Context) error) (runner.Once, time.Duration) {
	t.Helper()
	r, err := runner.New(runner.Config{Lease: l, Task: task, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	res, err := r.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v, want a result", err)
	}
	return res, time.Since(began)
}

func done(context.Context) error { return nil }

func mustNotRun(t *testing.T) func(context.Context) error {
	return func(context.Context) error { t.Error("the task ran"); return nil }
}

func TestRunOnce(t *testing.T) {
	t.Run("free lease runs and releases", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			res, _ := runOnce(t, openLease(t, store, "a"), done)
			rec, _ := openLease(t, store, "x").Observe(context.Background())
			if res.Outcome != runner.Ran || res.Err != nil || res.Term.Token != 1 || !res.Demotion.Released || !rec.Released {
				t.Fatalf("RunOnce = %+v, record %+v; want Ran with token 1, no error, released", res, rec)
			}
		})
	})
	t.Run("task error is the result's", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			boom := errors.New("boom")
			res, _ := runOnce(t, openLease(t, memlease.NewStore(), "a"), func(context.Context) error { return boom })
			if res.Outcome != runner.Ran || !errors.Is(res.Err, boom) || res.Demotion.Reason != runner.TaskEnded {
				t.Fatalf("RunOnce = %+v, want Ran with the task's error", res)
			}
		})
	})
	t.Run("live leader means not elected, naming it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			j := newJournal()
			start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a")})
			synctest.Wait()
			res, took := runOnce(t, openLease(t, store, "b"), mustNotRun(t))
			if res.Outcome != runner.NotElected || res.Holder() != "a" || res.Record.Token != 1 {
				t.Fatalf("RunOnce = %+v, want NotElected with a's record (token 1)", res)
			}
			if took > renewInterval+ttl/3*6/5 {
				t.Fatalf("RunOnce waited %v for a live leader, want no more than a renewal and a poll", took)
			}
		})
	})
	t.Run("live leader on a store that judges expiry means not elected", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			res, took := runOnce(t, &nativeLease{Lease: openLease(t, memlease.NewStore(), "b")}, mustNotRun(t))
			if res.Outcome != runner.NotElected || res.Holder() != "az" {
				t.Fatalf("RunOnce = %+v, want NotElected naming az", res)
			}
			if took >= ttl {
				t.Fatalf("RunOnce waited %v for a live leader the store vouches for, want about a poll", took)
			}
		})
	})
	t.Run("lapsing lease on a store that judges expiry is waited out", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := &lapsingLease{Lease: openLease(t, memlease.NewStore(), "b")}
			res, took := runOnce(t, l, done)
			if res.Outcome != runner.Ran || l.calls.Load() != 5 {
				t.Fatalf("RunOnce = %+v after %v and %d Acquires, want Ran on the fifth, once the store lets the lapsed lease go", res, took, l.calls.Load())
			}
		})
	})
	t.Run("dead leader's lease is taken after its TTL", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			if _, err := openLease(t, store, "crashed").Acquire(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, took := runOnce(t, openLease(t, store, "b"), done)
			if res.Outcome != runner.Ran || res.Term.Token != 2 || took < ttl {
				t.Fatalf("RunOnce = %+v after %v, want Ran with token 2 after at least the TTL (%v)", res, took, ttl)
			}
		})
	})
	for _, fault := range []struct {
		name string
		set  func(*memlease.Store, string)
	}{
		{"store never answers", (*memlease.Store).Hang},
		{"store refuses every call", (*memlease.Store).Partition},
	} {
		t.Run(fault.name+" means unreachable within OnceTimeout", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				fault.set(store, "b")
				res, took := runOnce(t, openLease(t, store, "b"), mustNotRun(t))
				if res.Outcome != runner.Unreachable || res.Err == nil {
					t.Fatalf("RunOnce = %+v, want Unreachable with the reason", res)
				}
				if took > onceTimeout {
					t.Fatalf("RunOnce took %v, want at most OnceTimeout (%v)", took, onceTimeout)
				}
				t.Logf("after %v: %v", took, res.Err)
			})
		})
	}
	t.Run("leader cut off mid-task steps down", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			task := func(ctx context.Context) error {
				store.Partition("a")
				<-ctx.Done()
				return ctx.Err()
			}
			res, took := runOnce(t, openLease(t, store, "a"), task)
			if res.Outcome != runner.SteppedDown || res.Demotion.Reason != runner.DeadlinePassed || res.Term.Token != 1 {
				t.Fatalf("RunOnce = %+v, want SteppedDown at the renew deadline, token 1", res)
			}
			if took != renewDeadline {
				t.Fatalf("the task was cancelled after %v, want the renew deadline (%v)", took, renewDeadline)
			}
		})
	})
	t.Run("ctx ended before the election is interrupted", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			store.Hang("b")
			r, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Task: mustNotRun(t), Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if res, err := r.RunOnce(ctx); err != nil || res.Outcome != runner.Interrupted {
				t.Fatalf("RunOnce = %+v, %v; want Interrupted", res, err)
			}
		})
	})
	t.Run("a lease that needs a person is an error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			store.Put("job", []byte("not a lease"))
			r, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Task: mustNotRun(t), Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := r.RunOnce(context.Background()); !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("RunOnce = %+v, %v; want an error matching lease.ErrCorrupt", res, err)
			}
		})
	})
}

// nativeLease is a lease on a store that judges expiry itself, as Azure's
// blob lease does, held by a live holder: every Acquire is refused with the
// same version.
type nativeLease struct{ lease.Lease }

func (n *nativeLease) Acquire(context.Context) (lease.Term, error) {
	return lease.Term{}, &lease.HeldError{Record: lease.Record{Holder: "az", Token: 1, TTL: ttl, Version: "etag"}, Wait: ttl}
}

func (n *nativeLease) Judge() lease.Judge { return lease.JudgedByStore }

// lapsingLease is a lease on a store that judges expiry itself, whose
// holder has just died: its first Acquire is refused by the holder's live
// lease, the next three by a store slow to let the lapsed lease go (as
// Azure may be for up to a minute), which is lease.ErrUnavailable; then
// the lease is free.
type lapsingLease struct {
	lease.Lease
	calls atomic.Int32
}

func (l *lapsingLease) Acquire(ctx context.Context) (lease.Term, error) {
	switch n := l.calls.Add(1); {
	case n == 1:
		return lease.Term{}, &lease.HeldError{Record: lease.Record{Holder: "dying", Token: 1, TTL: ttl, Version: "etag"}, Wait: ttl}
	case n <= 4:
		return lease.Term{}, fmt.Errorf("%w: the previous lease is lapsing", lease.ErrUnavailable)
	}
	return l.Lease.Acquire(ctx)
}

func (l *lapsingLease) Judge() lease.Judge { return lease.JudgedByStore }
