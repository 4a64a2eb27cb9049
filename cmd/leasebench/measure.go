package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// latencies measures, on one lease and one connection to st, n
// acquisitions of a released lease (the steady case: a read and a
// conditional write on CAS stores) and n renewals.
func latencies(ctx context.Context, st *store, n int) (acquire, renew []time.Duration, err error) {
	open, err := st.connect(st.endpoint)
	if err != nil {
		return nil, nil, err
	}
	l, err := open(ctx, "latency-"+randomHex(6), lease.Options{Identity: "bench-latency", TTL: st.ttl})
	if err != nil {
		return nil, nil, err
	}
	for i := -1; i < n; i++ { // i == -1: a warm-up round, not measured
		began := time.Now()
		t, err := l.Acquire(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("acquire: %w", err)
		}
		took := time.Since(began)
		began = time.Now()
		if t, err = l.Renew(ctx, t); err != nil {
			return nil, nil, fmt.Errorf("renew: %w", err)
		}
		if i >= 0 {
			acquire = append(acquire, took)
			renew = append(renew, time.Since(began))
		}
		if err := l.Release(ctx, t); err != nil {
			return nil, nil, fmt.Errorf("release: %w", err)
		}
	}
	return acquire, renew, nil
}

// errVoid marks a trial that measured nothing: the holder lost its lease
// before the crash or release the trial was about (a store too slow for
// the CallTimeout, say). It is repeated.
var errVoid = errors.New("void trial")

// pair is a holder and a follower of one lease, each a runner at the
// defaults on a connection of its own, the holder elected first.
type pair struct {
	holder, follower *probe
	h, f             *contender
}

func startPair(ctx context.Context, st *store, kind string, v variant) (*pair, error) {
	name := kind + "-" + randomHex(6)
	var p pair
	for _, role := range []string{"holder", "follower"} {
		pr, err := st.openProbe(ctx, name, role, v)
		if err != nil {
			return nil, err
		}
		c, err := v.start(ctx, pr)
		if err != nil {
			return nil, err
		}
		if role == "holder" {
			p.holder, p.h = pr, c
			if err := waitFor(ctx, pr.acquired, 3*st.ttl, "the holder's election"); err != nil {
				p.stop()
				return nil, err
			}
			// The follower starts at a moment unrelated to the holder's
			// renewals, as in a fleet.
			sleepRandom(ctx, st.ttl/3)
		} else {
			p.follower, p.f = pr, c
		}
	}
	return &p, nil
}

// openProbe opens the lease name on st for the contender role, on a
// connection of its own, in a probe.
func (st *store) openProbe(ctx context.Context, name, role string, v variant) (*probe, error) {
	open, err := st.connect(st.endpoint)
	if err != nil {
		return nil, err
	}
	l, err := open(ctx, name, v.options(role, st.ttl))
	if err != nil {
		return nil, err
	}
	return newProbe(l), nil
}

func (p *pair) stop() {
	var wg sync.WaitGroup
	for _, c := range []*contender{p.h, p.f} {
		if c != nil {
			wg.Go(c.stop)
		}
	}
	wg.Wait()
}

func waitFor(ctx context.Context, ch <-chan struct{}, limit time.Duration, what string) error {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return fmt.Errorf("%s did not come within %v", what, limit)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// warmUp lets a pair run for a dozen renew intervals, five TTLs, and then
// up to one TTL more at random, before the crash or release a trial is
// about: no figure depends on the follower's first polls, or on its
// learning of the holder's schedule.
func warmUp(ctx context.Context, ttl time.Duration) {
	ctxtime.Sleep(ctx, 5*ttl)
	sleepRandom(ctx, ttl)
}

// regime is how long a failover trial's follower has watched the holder
// before the crash: warmed, a dozen renew intervals (warmUp); or just
// started, as in a rolling deploy or a scale-out, the crash coming at a
// random moment within one TTL of the follower's start.
type regime bool

const (
	warmed      regime = true
	justStarted regime = false
)

func (r regime) String() string {
	if r == warmed {
		return "warmed"
	}
	return "just started"
}

// settle waits, from the follower's start, until the holder's crash is
// armed: it crashes right after its next renewal, which comes within renew.
// Just started, the crash is armed at random within TTL − renew, so that
// the holder's last renewal comes within one TTL of the follower's start.
func (r regime) settle(ctx context.Context, ttl, renew time.Duration) {
	if r == warmed {
		warmUp(ctx, ttl)
		return
	}
	sleepRandom(ctx, ttl-renew)
}

// sleepRandom sleeps a random time up to d, or until ctx ends.
func sleepRandom(ctx context.Context, d time.Duration) { ctxtime.Sleep(ctx, rand.N(d)) }

// failoverTrial measures one crash failover: the holder crashes (stops
// renewing, releases nothing) right after a successful renewal at a random
// moment of the follower's polling, settled as r says, and the follower's
// runner takes over.
// It returns the time from that renewal's Sent to the follower's
// successful Acquire returning.
func failoverTrial(ctx context.Context, st *store, v variant, r regime) (time.Duration, error) {
	p, err := startPair(ctx, st, "failover", v)
	if err != nil {
		return 0, err
	}
	defer p.stop()
	r.settle(ctx, st.ttl, cmp.Or(v.renew, runner.DefaultRenewInterval(st.ttl)))
	p.holder.armCrash()
	if err := waitFor(ctx, p.holder.crashed, st.ttl, "a renewal to crash after"); err != nil {
		return 0, fmt.Errorf("%w: %v", errVoid, err)
	}
	if len(p.h.demotions()) > 0 {
		return 0, fmt.Errorf("%w: the holder was demoted before its crash: %v", errVoid, p.h.demotions()[0])
	}
	if err := waitFor(ctx, p.follower.acquired, 4*st.ttl, "the follower's takeover"); err != nil {
		return 0, err
	}
	_, lastSent, _ := p.holder.times()
	acquiredAt, _, _ := p.follower.times()
	return acquiredAt.Sub(lastSent), nil
}

// handoverTrial measures one graceful handover: at a random moment the
// holder's runner is stopped, releases the lease, and the follower's runner
// takes over. It returns the time from the Release call to the follower's
// successful Acquire returning.
func handoverTrial(ctx context.Context, st *store, v variant) (time.Duration, error) {
	p, err := startPair(ctx, st, "handover", v)
	if err != nil {
		return 0, err
	}
	defer p.stop()
	warmUp(ctx, st.ttl)
	if len(p.h.demotions()) > 0 {
		return 0, fmt.Errorf("%w: the holder was demoted before its release: %v", errVoid, p.h.demotions()[0])
	}
	go p.h.stop()
	if err := waitFor(ctx, p.follower.acquired, 3*st.ttl, "the follower's election"); err != nil {
		return 0, err
	}
	if err := waitFor(ctx, p.h.done, 2*st.ttl, "the holder's runner returning"); err != nil {
		return 0, err
	}
	if d := p.h.demotions(); len(d) != 1 || !d[0].Released {
		return 0, fmt.Errorf("%w: the holder's term ended with %v, want one release", errVoid, d)
	}
	_, _, releaseSent := p.holder.times()
	acquiredAt, _, _ := p.follower.times()
	return acquiredAt.Sub(releaseSent), nil
}

// trials runs n trials, parallel at a time, repeating void ones (at most n
// more), and returns the measurements and how many were void.
func trials(ctx context.Context, n, parallel int, trial func(context.Context) (time.Duration, error)) ([]time.Duration, int, error) {
	var (
		mu      sync.Mutex
		out     []time.Duration
		void    int
		lastErr error
	)
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				sem <- struct{}{}
				d, err := trial(ctx)
				<-sem
				mu.Lock()
				switch {
				case err == nil:
					out = append(out, d)
				case errors.Is(err, errVoid) && void < n:
					void++
					mu.Unlock()
					continue
				default:
					lastErr = err
				}
				mu.Unlock()
				return
			}
		})
	}
	wg.Wait()
	if len(out) < n && lastErr != nil {
		return out, void, fmt.Errorf("%d of %d trials failed; the last: %w", n-len(out), n, lastErr)
	}
	return out, void, nil
}

// requestRates runs a leader and a follower, each a runner at the defaults
// on its own connection, for d after the follower's first poll, and
// returns the requests each sent per hour, by operation, scaled from the
// store's TTL to lease.DefaultTTL (every interval of the runner is a fixed
// fraction of the TTL, so the rate is inversely proportional to it); and
// the requests the follower sent in its first startWindow renew intervals,
// where what it does to learn the holder's schedule shows. With v's
// Prefer, both have the same one, and their Candidates' requests count as
// theirs.
func requestRates(ctx context.Context, st *store, d time.Duration, v variant) (leader, follower map[string]float64, startReads int, err error) {
	run := randomHex(6)
	name := "requests-" + run
	// Identities of their own: memlease counts calls by identity, and the
	// trials' contenders are called holder and follower.
	roles := []string{"leader-" + run, "follower-" + run}
	var takes []func() map[string]int
	var cs []*contender
	defer func() {
		for _, c := range cs {
			c.stop()
		}
	}()
	for _, role := range roles {
		open, take, done, err := st.counted(role)
		if err != nil {
			return nil, nil, 0, err
		}
		defer done()
		pr, c, err := v.contend(ctx, open, name, role, st.ttl)
		if err != nil {
			return nil, nil, 0, err
		}
		cs = append(cs, c)
		if role == roles[0] {
			if err := waitFor(ctx, pr.acquired, 3*st.ttl, "the leader's election"); err != nil {
				return nil, nil, 0, err
			}
		}
		takes = append(takes, take)
	}
	ctxtime.Sleep(ctx, startWindow*cmp.Or(v.renew, runner.DefaultRenewInterval(st.ttl)))
	startReads = total(takes[1]())
	warmUp(ctx, st.ttl) // the follower's first polls, and its learning of the leader's schedule, not counted in the rates
	for _, take := range takes {
		take()
	}
	began := time.Now()
	if ctxtime.Sleep(ctx, d); ctx.Err() != nil {
		return nil, nil, 0, ctx.Err()
	}
	elapsed := time.Since(began)
	var rates []map[string]float64
	for _, take := range takes {
		rates = append(rates, scaleCounts(take(), elapsed, st.ttl))
	}
	for _, c := range cs[:1] {
		if len(c.demotions()) > 0 {
			return nil, nil, 0, fmt.Errorf("the leader was demoted while its requests were counted: %v", c.demotions()[0])
		}
	}
	return rates[0], rates[1], startReads, nil
}

// counted returns an opener for the contender role on a connection of its
// own whose requests are counted, by operation, and take, which returns the
// counts since its last call: a counting proxy's in front of the store;
// memlease's own, by identity; or a quorum's members', each member's
// total under its name. done ends the counting.
func (st *store) counted(role string) (open opener, take func() map[string]int, done func(), err error) {
	switch {
	case st.members != nil:
		return st.countedQuorum(role)
	case st.mem != nil:
		var lastR, lastW int
		take = func() map[string]int {
			r, w := st.mem.Calls(role)
			n := map[string]int{"read": r - lastR, "write": w - lastW}
			lastR, lastW = r, w
			return n
		}
		open, err = st.connect(st.endpoint)
		return open, take, func() {}, err
	}
	proxy, err := newCountingProxy(st.endpoint, st.label)
	if err != nil {
		return nil, nil, nil, err
	}
	if open, err = st.connect(proxy.url); err != nil {
		proxy.close()
		return nil, nil, nil, err
	}
	return open, proxy.take, proxy.close, nil
}

// startWindow is how many renew intervals after its start a follower's
// requests are counted for the one-time cost of its start.
const startWindow = 2

// total is the sum of m's values, added in the order of their keys, so
// that a sum of floats comes out the same every time (the figures).
func total[N int | float64](m map[string]N) (t N) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		t += m[k]
	}
	return t
}

// scaleCounts turns counts made over elapsed with leases of ttl into
// counts per hour with leases of lease.DefaultTTL: every interval of the
// runner (and of the peer, configured alike) is a fixed fraction of the
// TTL, so request rates are inversely proportional to it.
func scaleCounts(counts map[string]int, elapsed, ttl time.Duration) map[string]float64 {
	scale := float64(time.Hour) / float64(elapsed) * float64(ttl) / float64(lease.DefaultTTL)
	m := map[string]float64{}
	for k, v := range counts {
		if v > 0 {
			m[k] = float64(v) * scale
		}
	}
	return m
}
