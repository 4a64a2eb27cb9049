package runner_test

// A Config.Logger may block: its handler writes to a pipe whose reader
// stalled (leasehold's stderr, red team 14). The step-downs end the term
// first and log after, so a blocked log write never keeps a task running.

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// stallingHandler is a slog.Handler whose Handle blocks, once stall was
// called, until unstall is.
type stallingHandler struct {
	mu      *sync.Mutex
	stalled *chan struct{}
}

func newStallingHandler() stallingHandler {
	var ch chan struct{}
	return stallingHandler{mu: &sync.Mutex{}, stalled: &ch}
}

func (h stallingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h stallingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h stallingHandler) WithGroup(string) slog.Handler            { return h }
func (h stallingHandler) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	ch := *h.stalled
	h.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return nil
}

func (h stallingHandler) stall() {
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.stalled = make(chan struct{})
}

func (h stallingHandler) unstall() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if *h.stalled != nil {
		close(*h.stalled)
		*h.stalled = nil
	}
}

// stalledLogTerm runs a leader whose logger stalls once its task has
// started; then cut ends its term somehow. It returns how long after cut
// the task's context ended, or fails the test if it did not within a
// TTL.
func stalledLogTerm(t *testing.T, cfg runner.Config, cut func(store *memlease.Store)) time.Duration {
	t.Helper()
	store := memlease.NewStore()
	h := newStallingHandler()
	defer h.unstall()
	started, ended := make(chan struct{}), make(chan time.Time, 1)
	cfg.Lease = openLease(t, store, "a")
	cfg.Logger = slog.New(h)
	cfg.Task = func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		ended <- time.Now()
		return nil
	}
	start(t, cfg)
	<-started
	h.stall()
	cutAt := time.Now()
	cut(store)
	select {
	case at := <-ended:
		return at.Sub(cutAt)
	case <-time.After(ttl):
		t.Fatalf("the task still ran a TTL (%v) after its term should have ended: the step-down waits on a log write", ttl)
		return 0
	}
}

// TestStalledLoggerLeaseLostEndsTheTermAtOnce (rule 1): the renewal that
// finds the lease taken by another holder ends the term at once, though
// the logger blocks; before the fix it logged first, and the term ended
// only at the renew deadline, the new holder leading meanwhile.
func TestStalledLoggerLeaseLostEndsTheTermAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		took := stalledLogTerm(t, runner.Config{}, func(store *memlease.Store) {
			store.Put("job", driver.EncodeJSON(lease.Record{Holder: "intruder", Token: 99, TTL: time.Minute, Nonce: "x"}))
		})
		if took > renewInterval {
			t.Errorf("the task ran %v after its lease passed to another holder; the next renewal, within a renew interval (%v), should have ended it", took, renewInterval)
		}
	})
}

// TestStalledLoggerUnhealthyEndsTheTerm: the health check's last failure
// ends the term before it is logged.
func TestStalledLoggerUnhealthyEndsTheTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		sick := false
		cfg := runner.Config{HealthInterval: time.Second, HealthThreshold: 1, HealthCheck: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			if sick {
				return errors.New("sick")
			}
			return nil
		}}
		took := stalledLogTerm(t, cfg, func(*memlease.Store) {
			mu.Lock()
			sick = true
			mu.Unlock()
		})
		if took > time.Second {
			t.Errorf("the task ran %v after its health check failed; the next check, within a second, should have ended it", took)
		}
	})
}

// TestStalledLoggerDrainTimeoutStopsRenewals: a drain that times out stops
// the renewals at DrainTimeout after the step-down, though the logger
// blocks on the drain's lines, so that RenewalsDone closes and Expiry is
// final for a task that ignores its context (leasehold run's kill waits on
// them). Logging first, the renewals went on for as long as the log write
// blocked: the drain timer was armed only after the "draining" line, and
// the renewals stopped only after the "drain timed out" one.
func TestStalledLoggerDrainTimeoutStopsRenewals(t *testing.T) {
	const drain = 10 * time.Second
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		h := newStallingHandler()
		started, quit := make(chan struct{}), make(chan struct{})
		renewalsDone := make(chan time.Duration, 1)
		stop := start(t, runner.Config{
			Lease:        openLease(t, store, "a"),
			Logger:       slog.New(h),
			DrainTimeout: drain,
			Task: func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				cancelled := time.Now()
				select {
				case <-runner.RenewalsDone(ctx):
					renewalsDone <- time.Since(cancelled)
				case <-quit:
				}
				<-quit // a task that ignores its context
				return nil
			},
		})
		defer func() { _ = stop() }()
		defer close(quit)
		defer h.unstall()
		<-started
		h.stall()
		go func() { _ = stop() }() // a voluntary step-down: Stopped, drained
		select {
		case took := <-renewalsDone:
			if took > drain {
				t.Errorf("the renewals stopped %v after the step-down; want at DrainTimeout (%v)", took, drain)
			}
		case <-time.After(drain + ttl):
			t.Errorf("the renewals still went on %v after a step-down with DrainTimeout %v: the drain waits on a log write", drain+ttl, drain)
		}
	})
}
