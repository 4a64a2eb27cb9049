package quorumlease_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// crashAfterRenewal is a holder's quorum lease that, once armed, crashes
// right after its next successful renewal (every call of its identity
// hangs on every member from then on), as leasebench's crash failover
// does, and notes that renewal's Sent.
type crashAfterRenewal struct {
	lease.Lease
	crash func()
	mu    sync.Mutex
	armed bool
	sent  time.Time
}

func (c *crashAfterRenewal) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := c.Lease.Renew(ctx, t)
	if err == nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sent = nt.Sent
		if c.armed {
			c.armed = false
			c.crash()
		}
	}
	return nt, err
}

// TestCrashFailoverInTTLs is leasebench's crash failover on a quorum of
// three memleases, in a synctest bubble: two runners, the holder crashes
// right after a renewal at a random phase, and the follower's takeover is
// timed from that renewal's Sent. With every member up, and with member 1
// hung for both (its calls never answer), no takeover may take more than
// 1.10 TTL: stores that answer at once leave the quorum's own waits alone
// in the figure. With member 1 hung, a follower that waited for it a
// CallTimeout every few attempts (its silence over while the read an
// earlier attempt left running still ran) took over at up to 1.22 TTL
// (p90 1.17 over 300 trials), while leasebench's goal with one member
// down is a p99 of 1.15.
func TestCrashFailoverInTTLs(t *testing.T) {
	const trials = 100
	for _, hung := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		var ds []float64
		for range trials {
			phase := time.Duration(rng.Int64N(int64(ttl)))
			synctest.Test(t, func(t *testing.T) {
				ds = append(ds, crashFailover(t, hung, phase))
			})
		}
		slices.Sort(ds)
		t.Logf("member 1 hung %v: crash failover ÷ TTL over %d trials: min %.3f, p50 %.3f, p90 %.3f, max %.3f",
			hung, trials, ds[0], ds[trials/2], ds[trials*9/10], ds[trials-1])
		if ds[trials-1] > 1.10 {
			t.Errorf("member 1 hung %v: the slowest of %d crash failovers took %.3f TTL, want at most 1.10", hung, trials, ds[trials-1])
		}
	}
}

// crashFailover runs one trial: the holder crashes phase after its third
// TTL of leading, and the follower takes over. It returns the takeover's
// time from the holder's last renewal, in TTLs.
func crashFailover(t *testing.T, hung bool, phase time.Duration) float64 {
	h := newMemQuorum(3)
	if hung {
		h.stores[0].Hang("a")
		h.stores[0].Hang("b")
	}
	holder := &crashAfterRenewal{Lease: open(t, h, "a"), crash: func() {
		for _, s := range h.stores {
			s.Hang("a")
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu   sync.Mutex
		took time.Time
	)
	start := func(l lease.Lease, task func()) {
		r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Task: func(ctx context.Context) error {
			task()
			<-ctx.Done()
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = r.Run(ctx) }()
	}
	start(holder, func() {})
	time.Sleep(ttl / 2)
	start(open(t, h, "b"), func() {
		mu.Lock()
		defer mu.Unlock()
		took = time.Now()
	})
	time.Sleep(3*ttl + phase)
	holder.mu.Lock()
	holder.armed = true
	holder.mu.Unlock()
	time.Sleep(4 * ttl)
	mu.Lock()
	defer mu.Unlock()
	holder.mu.Lock()
	defer holder.mu.Unlock()
	if took.IsZero() {
		t.Fatalf("member 1 hung %v: the follower did not take over within 4 TTLs of the holder's crash", hung)
	}
	cancel()
	time.Sleep(ttl) // the runners and the calls they left running end
	return float64(took.Sub(holder.sent)) / float64(ttl)
}
