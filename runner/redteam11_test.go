package runner_test

// Red team 11: attacks on 2329058 that held (regression tests). The
// attacks that broke a rule are in redteam11open_test.go (build tag
// redteam11open).

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

// inFlight is a holder's lease whose renewals are answered late (landed
// at once, answered delay later), and which notes when each renewal was
// sent and answered, and the most renewals in flight at once.
type inFlight struct {
	lease.Lease
	delay time.Duration
	mu    sync.Mutex
	now   int
	most  int
	sent  []time.Time
	done  []time.Time
}

func (l *inFlight) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	l.mu.Lock()
	l.now++
	l.most = max(l.most, l.now)
	l.sent = append(l.sent, time.Now())
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.now--
		l.done = append(l.done, time.Now())
		l.mu.Unlock()
	}()
	return lateRenewals{l.Lease, l.delay}.Renew(ctx, t)
}

// TestRedteam11LateAnswersThenHang (rules 1, 3, 7; held on 2329058).
// Renewals answered late, back to back (answers later than the renew
// interval would need a CallTimeout above it: 2.5 s late here, within
// the default 3 s), then the store stops answering: the leader's task is
// cancelled exactly at the renew deadline of its last answered renewal as
// Term reports it (Sent + RenewDeadline, Sent never after when that
// renewal was sent), never two renewals are in flight, and none is sent
// at or after the step-down. It would fail if a renewal counted from its
// answer, if the next renewal were sent before the previous returned, or
// if the loop sent a renewal past the deadline.
func TestRedteam11LateAnswersThenHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		l := &inFlight{Lease: openLease(t, store, "a"), delay: 2500 * time.Millisecond}
		var lastSent shared[time.Time]
		var cancelled shared[time.Time]
		stop := start(t, runner.Config{Lease: l, Task: func(ctx context.Context) error {
			for {
				select {
				case <-ctx.Done():
					cancelled.set(time.Now())
					return nil
				case <-time.After(10 * time.Millisecond):
					lt, _ := runner.Term(ctx)
					lastSent.set(lt.Sent)
				}
			}
		}})
		advance(40 * time.Second)
		store.Hang("a")
		advance(2 * ttl)
		_ = stop()
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.most > 1 {
			t.Errorf("%d renewals in flight at once", l.most)
		}
		down := cancelled.get()
		if want := lastSent.get().Add(renewDeadline); !down.Equal(want) {
			t.Errorf("task cancelled at %v, want the last renewal's Sent (%v) + RenewDeadline = %v", down.Sub(began), lastSent.get().Sub(began), want.Sub(began))
		}
		for i, s := range l.sent {
			if !s.Before(down) {
				t.Errorf("renewal %d sent at %v, at or after the step-down at %v", i, s.Sub(began), down.Sub(began))
			}
			if i > 0 && s.Before(l.done[i-1]) {
				t.Errorf("renewal %d sent at %v, before renewal %d returned at %v", i, s.Sub(began), i-1, l.done[i-1].Sub(began))
			}
		}
		t.Logf("%d renewals; stepped down at %v", len(l.sent), down.Sub(began))
	})
}
