package quorumlease_test

import (
	"context"
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

func (c *crashAfterRenewal) arm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = true
}

func (c *crashAfterRenewal) lastSent() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent
}

// TestCrashFailoverInTTLs is leasebench's crash failover on a quorum of
// three memleases, in a synctest bubble, in both of its regimes: two
// runners (a fleet), the follower started at random within a third of a
// TTL of the holder's election, the holder crashing right after a renewal
// at a random phase (warmed: three TTLs on; just started: within a TTL
// less a renew interval of the follower's start), and the follower's
// takeover timed from that renewal's Sent. Stores that answer at once
// leave the quorum's own waits alone in the figure, held to leasebench's
// goals for the p99 over 1,000 trials: 1.10 TTL with every member up, 1.15
// with member 1 hung for both (its calls never answer).
//
// With member 1 hung, a follower that waited for it a CallTimeout every
// few attempts (its silence over while the read an earlier attempt left
// running still ran) had a p99 of 1.22 TTL. A follower that just started
// waits out the hung member once, at its first read: its p99 is 1.135,
// its slowest 1.17, which 100 trials each held to the goal missed by
// their draw.
//
// With member 1 slow for the holder (its writes land 60 ms, 3 % of the
// TTL, after the others', as MinIO's did on the emulators), the holder's
// last write to it lands after the follower's read that saw the others',
// and the follower sees it only at its next read, up to half a renew
// interval later: member 1 lapses last. A follower that waited for the
// first member in the order to lapse before taking the others took over
// at a median of 1.19 TTL just started and 1.21 warmed (p99 1.21 and
// 1.22); one that takes the free members after a member whose term is
// ending (its holder's other records lapsed or released), at 1.02 (p99
// 1.05 and 1.03).
func TestCrashFailoverInTTLs(t *testing.T) {
	const trials = 1000
	for _, c := range []struct {
		fault       memberFault
		justStarted bool
	}{{upAll, false}, {hung, false}, {slow, false}, {upAll, true}, {hung, true}, {slow, true}} {
		rng := rand.New(rand.NewPCG(1, 2))
		var ds []float64
		for range trials {
			before, phase := time.Duration(rng.Int64N(int64(ttl/3))), 3*ttl+time.Duration(rng.Int64N(int64(ttl)))
			if c.justStarted {
				phase = time.Duration(rng.Int64N(int64(ttl - runner.DefaultRenewInterval(ttl))))
			}
			synctest.Test(t, func(t *testing.T) {
				ds = append(ds, crashFailover(t, c.fault, before, phase))
			})
		}
		slices.Sort(ds)
		t.Logf("just started %v, member 1 %v: crash failover ÷ TTL over %d trials: min %.3f, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f",
			c.justStarted, c.fault, trials, ds[0], ds[trials/2], ds[trials*9/10], ds[trials*99/100], ds[trials-1])
		goal := 1.10 // leasebench's goals for the p99
		if c.fault == hung {
			goal = 1.15
		}
		if p99 := ds[trials*99/100]; p99 > goal {
			t.Errorf("just started %v, member 1 %v: crash failover p99 %.3f TTL over %d trials, want at most %.2f", c.justStarted, c.fault, p99, trials, goal)
		}
	}
}

// memberFault is what member 1 does in a crash failover trial.
type memberFault int

const (
	upAll memberFault = iota // every member answers at once
	hung                     // member 1 never answers anyone
	slow                     // member 1 applies the holder's writes 60 ms late
)

func (f memberFault) String() string {
	return [...]string{"up", "hung", "slow for the holder"}[f]
}

// crashFailover runs one trial: the follower starts before after the
// holder's election, the holder crashes right after its first renewal
// phase after that, and the follower takes over. It returns the
// takeover's time from the holder's last renewal, in TTLs.
func crashFailover(t *testing.T, fault memberFault, before, phase time.Duration) float64 {
	f := newFleet(t, 3)
	switch fault {
	case hung:
		f.q.stores[0].Hang("a")
		f.q.stores[0].Hang("b")
	case slow:
		f.q.stores[0].Delay("a", 60*time.Millisecond)
	}
	holder := &crashAfterRenewal{Lease: open(t, f.q, "a"), crash: func() {
		for _, s := range f.q.stores {
			s.Hang("a")
		}
	}}
	f.openWith = func(who string) (lease.Lease, error) {
		if who == "a" {
			return holder, nil
		}
		return f.q.Open(context.Background(), "job", lease.Options{Identity: who, TTL: ttl})
	}
	f.start("a")
	time.Sleep(ttl/2 + before)
	f.start("b")
	time.Sleep(phase)
	holder.arm()
	time.Sleep(2 * ttl) // its crash within a renew interval, the takeover within 1.2 TTLs of that
	tenures := f.stop()
	i := slices.IndexFunc(tenures, func(tn tenure) bool { return tn.who == "b" })
	if i < 0 {
		t.Fatalf("member 1 %v: the follower did not take over within 2 TTLs of arming the holder's crash (tenures %+v)", fault, tenures)
	}
	return float64(tenures[i].start.Sub(holder.lastSent())) / float64(ttl)
}
