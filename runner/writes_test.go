package runner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// lateAnswer is a holder's lease whose Acquire answers late: its write
// lands at once, but its answer comes after delay (lost, then read back
// slowly: up to two CallTimeouts). The first write that follows (the
// period mark) lands, and is then hidden by a restore of the acquisition's
// record, and every later call of the holder hangs.
type lateAnswer struct {
	lease.Lease
	store    *memlease.Store
	identity string
	delay    time.Duration
	acquired []byte
	wrote    atomic.Bool
}

func (l *lateAnswer) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	l.acquired, _ = l.store.Bytes("job")
	time.Sleep(l.delay)
	return t, err
}

func (l *lateAnswer) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	if !l.wrote.Swap(true) {
		l.store.Put("job", l.acquired)
		l.store.Hang(l.identity)
	}
	return nt, err
}

// TestLateAcquisitionAnswer: a term whose Acquire answered late is led,
// and written, only within the deadlines its acquisition set (finding D1
// of issue 34). Its period mark is a write of the term like any renewal:
// sent only before the acquisition's renew deadline, and counted from when
// it was due (the acquisition's sending plus RenewInterval) when sent
// later, so that a restore hiding it, and renewals that hang after it,
// cannot keep the holder leading past a follower's takeover a TTL after
// the acquisition. A task whose term's deadline passed before it could
// start is not started.
func TestLateAcquisitionAnswer(t *testing.T) {
	for _, tc := range []struct {
		name        string
		period      string
		callTimeout time.Duration
		answer      time.Duration
	}{
		{"the mark sent after the acquisition's deadline", tick1, 5 * time.Second, 9900 * time.Millisecond},
		{"the mark sent late, before that deadline", tick1, 5 * time.Second, 7 * time.Second},
		{"no period: the task would start after the takeover", "", 8 * time.Second, 15500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				began := time.Now()
				store := memlease.NewStore()
				la, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl, CallTimeout: tc.callTimeout})
				if err != nil {
					t.Fatal(err)
				}
				j := newJournal()
				res := make(chan runner.Once, 1)
				go func() {
					res <- runPeriod(t, &lateAnswer{Lease: la, store: store, identity: "a", delay: tc.answer}, tc.period, runner.Config{}, j.task("a"))
				}()
				advance(100 * time.Millisecond) // b first reads a's acquisition
				stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
				got := <-res
				advance(ttl)
				if b := j.leader(); b != "b" {
					t.Errorf("after a's RunOnce (%+v) and a TTL, %q leads, want b", got, b)
				}
				_ = stop()
				j.checkSafety(t)
				for _, tm := range j.recorded() {
					t.Logf("%s led from %v to %v", tm.who, tm.start.Sub(began), tm.end.Sub(began))
				}
				t.Logf("a: %v, %v", got.Outcome, got.Err)
			})
		})
	}
}
