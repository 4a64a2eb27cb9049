package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// The KCL-style baseline: how the Kinesis Client Library shares shards,
// built on leasehold's single leases so that it is measured on the same
// store. One lease per shard (GROUP/leases/I), renewed by its owner every
// renew interval; no assigner: every worker reads every shard's lease
// every interval (KCL's scan of its lease table, which also feeds
// leasehold's judgement of expiry), computes its target from the workers
// it sees, and takes the free or expired leases it needs to reach its
// target, all in one interval, as KCL's lease taker does.
//
// Two departures, because leasehold never takes a held lease: a KCL
// worker under its target with no free or expired lease left steals one
// lease per interval (maxLeasesToStealAtOneTime, 1 by default) from the
// most loaded worker, and two workers run the shard until the victim
// notices; here, while a worker is under its share and none is free, the
// workers over their floor give one up in turn, one per interval in all,
// which is the same rate of moves without the overlap. And since a worker
// that owns nothing could then never be seen, each worker also keeps a presence lease
// (GROUP/workers/ID), found by one listing per interval: KCL's worker
// knows itself from the leases it steals.

// kclConfig is one baseline worker's settings.
type kclConfig struct {
	store    shard.Store
	group    string
	shards   int
	identity string
	ttl      time.Duration
	// start and stop are called when a shard starts and stops here.
	start, stop func(shard int)
	// renewed is called after each round of renewals that all succeeded,
	// with the time since the round began.
	renewed func(took time.Duration, err error)
	// round, if set, is called after each round with its length.
	round func(took time.Duration)
	// startWith, for the workers that start a fleet together, is how
	// many workers one must have seen live before it takes a lease: the
	// first to list would otherwise see itself alone and take every
	// shard, to give them up one per interval.
	startWith int
}

// kclParallel is how many of one worker's requests of a round go at once:
// as many as the SDKs keep idle connections to one host (10 for
// aws-sdk-go-v2 and azcore), so that a round opens no new connection.
const kclParallel = 10

// kclStep decides one interval of worker self: how many free or expired
// leases it takes, and whether it gives one up. owners names each shard's
// owner as the scan saw it ("" for none), live the workers seen alive
// (self among them). A worker that gives one up for a worker under its
// share does so in its turn (giveUpTurn).
func kclStep(self string, owners []string, live map[string]bool) (take int, release bool) {
	lo, hi := share(len(owners), len(live))
	count, free := owned(owners, live)
	under := false
	for w := range live {
		if count[w] < lo {
			under = true
		}
	}
	mine := count[self]
	switch {
	case mine > hi:
		return 0, true
	case mine < lo:
		return min(lo-mine, free), false
	case mine < hi && free > 0 && !under:
		return 1, false
	case mine > lo && under && free == 0:
		return 0, true
	}
	return 0, false
}

// owned counts the shards each live worker owns, and those no live
// worker owns (free or expired).
func owned(owners []string, live map[string]bool) (count map[string]int, free int) {
	count = map[string]int{}
	for _, o := range owners {
		if live[o] {
			count[o]++
		} else {
			free++
		}
	}
	return count, free
}

// giveUpTurn reports whether it is worker self's turn to give up a lease
// for a worker under its share: the live workers that own more than their
// floor, ⌊N/M⌋, take turns by identity, one per renew interval (slot
// counts the intervals), so that one lease moves per interval in all, as
// with KCL's one steal per interval.
func giveUpTurn(self string, owners []string, live map[string]bool, slot int64) bool {
	lo, _ := share(len(owners), len(live))
	count, _ := owned(owners, live)
	var donors []string
	for w := range live {
		if count[w] > lo {
			donors = append(donors, w)
		}
	}
	if len(donors) == 0 {
		return true
	}
	slices.Sort(donors)
	return donors[slot%int64(len(donors))] == self
}

// kclWorker is one baseline worker's state.
type kclWorker struct {
	kclConfig
	renewInterval, deadline, callTimeout time.Duration
	presence                             lease.Lease
	me                                   lease.Term
	leases                               []lease.Lease
	held                                 map[int]lease.Term
	seen                                 map[string]seenVersion
}

// seenVersion is a presence key's version and when it was first seen.
type seenVersion struct {
	version string
	since   time.Time
}

// kclRun runs a baseline worker until ctx ends, then gives up its shards
// and its presence.
func kclRun(ctx context.Context, c kclConfig) error {
	// Rounds start every renew interval, but their reads of one lease
	// come up to a round's length later than a renew interval apart,
	// which would break every run of reads (rule 2) if the records said
	// the holder renews every renew interval: they say twice that, and
	// holders renew more often than they promise.
	r := runner.DefaultRenewInterval(c.ttl)
	opts := lease.Options{Identity: c.identity, TTL: c.ttl, RenewInterval: 2 * r}
	w := &kclWorker{kclConfig: c, renewInterval: r, deadline: runner.DefaultRenewDeadline(c.ttl),
		callTimeout: c.ttl / 5, held: map[int]lease.Term{}, seen: map[string]seenVersion{}}
	var err error
	if w.presence, err = c.store.Lease(c.group+"/workers/"+c.identity, opts); err != nil {
		return err
	}
	w.leases = make([]lease.Lease, c.shards)
	for i := range w.leases {
		if w.leases[i], err = c.store.Lease(fmt.Sprintf("%s/leases/%d", c.group, i), opts); err != nil {
			return err
		}
	}
	defer w.leave(context.WithoutCancel(ctx))
	tick := time.NewTicker(w.renewInterval)
	defer tick.Stop()
	for {
		began := time.Now()
		w.round(ctx)
		if c.round != nil {
			c.round(time.Since(began))
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// call runs f with the worker's call timeout.
func (w *kclWorker) call(ctx context.Context, f func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, w.callTimeout)
	defer cancel()
	return f(cctx)
}

// round is one interval: renewals, the scan, and the takes or one
// give-up.
func (w *kclWorker) round(ctx context.Context) {
	began := time.Now()
	ok := w.renew(ctx)
	if ok && w.renewed != nil {
		w.renewed(time.Since(began), nil)
	}
	live, err := w.members(ctx)
	if err != nil {
		return
	}
	owners, err := w.scan(ctx)
	if err != nil {
		return
	}
	if len(live) < w.startWith {
		return
	}
	w.startWith = 0
	take, release := kclStep(w.identity, owners, live)
	switch {
	case release && !giveUpTurn(w.identity, owners, live, time.Now().UnixNano()/int64(w.renewInterval)):
		// Not its turn: it keeps its leases this interval.
	case release:
		for s, t := range w.held {
			w.stop(s)
			delete(w.held, s)
			_ = w.call(ctx, func(ctx context.Context) error { return w.leases[s].Release(ctx, t) })
			return
		}
	case take > 0:
		var candidates []int
		for s, o := range owners {
			if !live[o] {
				candidates = append(candidates, s)
			}
		}
		rand.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
		var mu sync.Mutex
		w.each(ctx, candidates[:take], func(ctx context.Context, s int) {
			t, err := w.leases[s].Acquire(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			w.held[s] = t
			w.start(s)
		})
	}
}

// renew renews the presence and every held lease, stopping the shards
// whose leases are lost or past their renew deadline; it reports whether
// every renewal succeeded.
func (w *kclWorker) renew(ctx context.Context) bool {
	ok := true
	if err := w.call(ctx, func(ctx context.Context) (err error) {
		if w.me.Token == 0 {
			w.me, err = w.presence.Acquire(ctx)
		} else {
			w.me, err = w.presence.Renew(ctx, w.me)
		}
		return err
	}); err != nil {
		ok = false
		if errors.Is(err, lease.ErrLost) {
			w.me = lease.Term{}
		}
	}
	var mu sync.Mutex
	w.each(ctx, heldShards(w.held), func(ctx context.Context, s int) {
		mu.Lock()
		t := w.held[s]
		mu.Unlock()
		nt, err := w.leases[s].Renew(ctx, t)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			w.held[s] = nt
		case errors.Is(err, lease.ErrLost) || time.Since(t.Sent) > w.deadline:
			ok = false
			delete(w.held, s)
			w.stop(s)
		default:
			ok = false
		}
	})
	return ok
}

func heldShards(held map[int]lease.Term) []int {
	out := make([]int, 0, len(held))
	for s := range held {
		out = append(out, s)
	}
	return out
}

// each calls f for every shard of ss, kclParallel at a time, each with the
// call timeout.
func (w *kclWorker) each(ctx context.Context, ss []int, f func(context.Context, int)) {
	sem := make(chan struct{}, kclParallel)
	var wg sync.WaitGroup
	for _, s := range ss {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_ = w.call(ctx, func(ctx context.Context) error { f(ctx, s); return nil })
		})
	}
	wg.Wait()
}

// members lists the presence leases: a worker is live while its key shows
// a new version within a TTL, on this worker's clock. Self is always live.
func (w *kclWorker) members(ctx context.Context) (map[string]bool, error) {
	prefix := w.group + "/workers/"
	var keys map[string]string
	if err := w.call(ctx, func(ctx context.Context) (err error) { keys, err = w.store.List(ctx, prefix); return err }); err != nil {
		return nil, err
	}
	now := time.Now()
	live := map[string]bool{w.identity: true}
	for key, v := range keys {
		id := key[len(prefix):]
		if sv, ok := w.seen[id]; !ok || sv.version != v {
			w.seen[id] = seenVersion{v, now}
		}
		if now.Sub(w.seen[id].since) < w.ttl {
			live[id] = true
		}
	}
	return live, nil
}

// scan reads every shard's lease: its owner, "" when free or unreadable
// as held.
func (w *kclWorker) scan(ctx context.Context) ([]string, error) {
	owners := make([]string, w.shards)
	all := make([]int, w.shards)
	for i := range all {
		all[i] = i
	}
	var mu sync.Mutex
	var failed error
	w.each(ctx, all, func(ctx context.Context, s int) {
		rec, err := w.leases[s].Observe(ctx)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil && !rec.Released:
			owners[s] = rec.Holder
		case err != nil && !errors.Is(err, lease.ErrNoRecord):
			failed = err
		}
	})
	mu.Lock()
	defer mu.Unlock()
	for s := range w.held {
		owners[s] = w.identity
	}
	return owners, failed
}

// leave stops every shard, releases its lease and the presence.
func (w *kclWorker) leave(ctx context.Context) {
	w.each(ctx, heldShards(w.held), func(ctx context.Context, s int) {
		w.stop(s)
		_ = w.leases[s].Release(ctx, w.held[s])
	})
	if w.me.Token != 0 {
		_ = w.call(ctx, func(ctx context.Context) error { return w.presence.Release(ctx, w.me) })
	}
}
