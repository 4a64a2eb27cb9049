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
// three memleases, in a synctest bubble, in both of its regimes: two
// runners, the follower started at random within a third of a TTL of the
// holder's election, the holder crashing right after a renewal at a random
// phase (warmed: three TTLs on; just started: within a TTL less a renew
// interval of the follower's start), and the follower's takeover timed
// from that renewal's Sent. Stores that answer at once leave the quorum's
// own waits alone in the figure, so every trial must meet leasebench's
// goals for the p99: 1.10 TTL with every member up, 1.15 with member 1
// hung for both (its calls never answer). With member 1 hung, a follower
// that waited for it a CallTimeout every few attempts (its silence over
// while the read an earlier attempt left running still ran) took over at
// up to 1.22 TTL, warmed (p90 1.17 over 300 trials).
func TestCrashFailoverInTTLs(t *testing.T) {
	const trials = 100
	for _, c := range []struct{ hung, justStarted bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		hung := c.hung
		rng := rand.New(rand.NewPCG(1, 2))
		var ds []float64
		for range trials {
			before, phase := time.Duration(rng.Int64N(int64(ttl/3))), 3*ttl+time.Duration(rng.Int64N(int64(ttl)))
			if c.justStarted {
				before, phase = time.Duration(rng.Int64N(int64(ttl/3))), time.Duration(rng.Int64N(int64(ttl-runner.DefaultRenewInterval(ttl))))
			}
			synctest.Test(t, func(t *testing.T) {
				ds = append(ds, crashFailover(t, hung, before, phase))
			})
		}
		slices.Sort(ds)
		t.Logf("just started %v, member 1 hung %v: crash failover ÷ TTL over %d trials: min %.3f, p50 %.3f, p90 %.3f, max %.3f",
			c.justStarted, hung, trials, ds[0], ds[trials/2], ds[trials*9/10], ds[trials-1])
		goal := 1.10 // leasebench's goals for the p99: here, every trial
		if hung {
			goal = 1.15
		}
		if ds[trials-1] > goal {
			t.Errorf("just started %v, member 1 hung %v: the slowest of %d crash failovers took %.3f TTL, want at most %.2f", c.justStarted, hung, trials, ds[trials-1], goal)
		}
	}
}

// crashFailover runs one trial: the follower starts before after the
// holder's election, the holder crashes right after its first renewal
// phase after that, and the follower takes over. It returns the
// takeover's time from the holder's last renewal, in TTLs.
func crashFailover(t *testing.T, hung bool, before, phase time.Duration) float64 {
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
	time.Sleep(ttl/2 + before)
	start(open(t, h, "b"), func() {
		mu.Lock()
		defer mu.Unlock()
		took = time.Now()
	})
	time.Sleep(phase)
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
