package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// The -shards scenarios: a group of -shard-workers in-process workers
// sharing N shards on one store, for each N of -shards. A fleet is either
// package shard's workers or the KCL-style baseline (kcl.go).

// fleetKind is what a fleet's workers run.
type fleetKind string

const (
	shardFleet fleetKind = "shard"
	kclFleet   fleetKind = "kcl"
)

// tracker sees every start and end of a shard on every worker of a fleet,
// and whether the fleet is balanced: every shard running on exactly one
// live worker, each live worker running ⌊N/M⌋ or ⌈N/M⌉.
type tracker struct {
	mu       sync.Mutex
	owner    []string       // the worker running each shard, "" for none
	count    map[string]int // shards running per worker
	live     map[string]bool
	starts   int // shard starts so far
	overlaps int // starts of a shard already running elsewhere
	changed  chan struct{}
}

func newTracker(n int) *tracker {
	return &tracker{owner: make([]string, n), count: map[string]int{}, live: map[string]bool{}, changed: make(chan struct{})}
}

// notify wakes the waiters; t.mu is held.
func (t *tracker) notify() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// start notes that worker id started shard s.
func (t *tracker) start(id string, s int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner[s] != "" {
		t.overlaps++
		t.count[t.owner[s]]--
	}
	t.owner[s] = id
	t.count[id]++
	t.starts++
	t.notify()
}

// end notes that worker id stopped shard s.
func (t *tracker) end(id string, s int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.owner[s] == id {
		t.owner[s] = ""
		t.count[id]--
	}
	t.notify()
}

// setLive counts worker id for balance, or no longer.
func (t *tracker) setLive(id string, live bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if live {
		t.live[id] = true
	} else {
		delete(t.live, id)
	}
	t.notify()
}

// drop ends every shard worker id runs.
func (t *tracker) drop(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s, o := range t.owner {
		if o == id {
			t.owner[s] = ""
		}
	}
	delete(t.count, id)
	t.notify()
}

// run is a shard function that notes its start and end.
func (t *tracker) run(id string) func(context.Context, shard.Shard) error {
	return func(ctx context.Context, s shard.Shard) error {
		t.start(id, s.Index)
		<-ctx.Done()
		t.end(id, s.Index)
		return nil
	}
}

// balanced reports whether every shard runs on a live worker and each live
// worker runs ⌊N/M⌋ or ⌈N/M⌉ of them; t.mu is held.
func (t *tracker) balanced() bool {
	m := len(t.live)
	if m == 0 {
		return false
	}
	for _, id := range t.owner {
		if !t.live[id] {
			return false
		}
	}
	lo, hi := share(len(t.owner), m)
	for id := range t.live {
		if c := t.count[id]; c < lo || c > hi {
			return false
		}
	}
	return true
}

// share is ⌊n/m⌋ and ⌈n/m⌉.
func share(n, m int) (lo, hi int) { return n / m, (n + m - 1) / m }

// errNotBalanced is waitBalanced's error when the limit passed.
var errNotBalanced = errors.New("not balanced")

// waitBalanced waits until the fleet is balanced, at most limit.
func (t *tracker) waitBalanced(ctx context.Context, limit time.Duration) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok, ch := t.balanced(), t.changed
		t.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return fmt.Errorf("%w within %v", errNotBalanced, limit)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// snapshot returns the shard starts so far and the shards worker id runs.
func (t *tracker) snapshot(id string) (starts, running int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.starts, t.count[id]
}

// crashStore is a worker's store that can crash: after that every call
// hangs until its context ends and sends nothing, as if the process had
// died.
type crashStore struct {
	shard.Store
	dead atomic.Bool
}

func (c *crashStore) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	if c.dead.Load() {
		return nil, "", hang(ctx)
	}
	return c.Store.Get(ctx, key, known)
}

func (c *crashStore) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	if c.dead.Load() {
		return "", hang(ctx)
	}
	return c.Store.Put(ctx, key, data, version)
}

func (c *crashStore) List(ctx context.Context, prefix string) (map[string]string, error) {
	if c.dead.Load() {
		return nil, hang(ctx)
	}
	return c.Store.List(ctx, prefix)
}

func (c *crashStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := c.Store.Lease(key, opts)
	if err != nil {
		return nil, err
	}
	return &crashLease{Lease: l, dead: &c.dead}, nil
}

// crashLease is a lease of a crashStore.
type crashLease struct {
	lease.Lease
	dead *atomic.Bool
}

// RenewalsShow passes on the wrapped lease's (lease.RenewalsShow), which
// the embedded interface would hide, and without which package shard
// refuses a native lease (Azure's).
func (c *crashLease) RenewalsShow() bool { return lease.RenewalsShow(c.Lease) }

// FollowerReads passes on the wrapped lease's (lease.FollowerReads), so
// that the assigner's followers read as often as on the store itself.
func (c *crashLease) FollowerReads() int { return lease.FollowerReads(c.Lease) }

func (c *crashLease) Acquire(ctx context.Context) (lease.Term, error) {
	if c.dead.Load() {
		return lease.Term{}, hang(ctx)
	}
	return c.Lease.Acquire(ctx)
}

func (c *crashLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if c.dead.Load() {
		return lease.Term{}, hang(ctx)
	}
	return c.Lease.Renew(ctx, t)
}

func (c *crashLease) Release(ctx context.Context, t lease.Term) error {
	if c.dead.Load() {
		return hang(ctx)
	}
	return c.Lease.Release(ctx, t)
}

func (c *crashLease) Observe(ctx context.Context) (lease.Record, error) {
	if c.dead.Load() {
		return lease.Record{}, hang(ctx)
	}
	return c.Lease.Observe(ctx)
}

// fleetWorker is one worker of a fleet.
type fleetWorker struct {
	id     string
	store  *crashStore
	take   func() map[string]int // its requests since the last take
	cancel context.CancelFunc
	done   chan struct{}

	rounds roundStats

	mu        sync.Mutex
	armed     bool
	crashed   chan struct{}
	crashedAt time.Time
}

// roundStats counts a baseline worker's rounds, and those that took longer
// than the renew interval they are meant to fit in.
type roundStats struct {
	mu    sync.Mutex
	n     int
	over  int
	total time.Duration
}

// add counts a round that took took, against interval.
func (s *roundStats) add(took, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.total += took
	if took > interval {
		s.over++
	}
}

// take returns the counts since the last take, and resets them.
func (s *roundStats) take() (n, over int, total time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, over, total = s.n, s.over, s.total
	s.n, s.over, s.total = 0, 0, 0
	return n, over, total
}

// renewed is the worker's liveness renewal hook: an armed worker crashes
// right after a successful renewal, at that renewal's sending.
func (w *fleetWorker) renewed(took time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil || !w.armed {
		return
	}
	w.armed = false
	w.store.dead.Store(true)
	w.crashedAt = time.Now().Add(-took)
	close(w.crashed)
}

// fleet is the workers sharing one group's n shards on one store.
type fleet struct {
	st      *store
	kind    fleetKind
	group   string
	n       int
	tr      *tracker
	workers []*fleetWorker
	closers []func()
	// startWith is the workers the fleet starts with, while they join
	// (kclConfig.startWith), then 0.
	startWith int

	// lost counts the shards stopped because their worker's liveness
	// ended (shard.Lost): a renewal that failed past the renew deadline.
	lost atomic.Int64

	mu       sync.Mutex
	assigner string // the identity of the latest assigner that settled
}

func newFleet(st *store, kind fleetKind, n int) *fleet {
	return &fleet{st: st, kind: kind, group: fmt.Sprintf("%s%s-%d-%s", st.groups, kind, n, randomHex(4)), n: n, tr: newTracker(n)}
}

// join starts a new worker.
func (f *fleet) join(ctx context.Context) (*fleetWorker, error) {
	id := fmt.Sprintf("w%d-%s", len(f.workers), randomHex(3))
	endpoint := f.st.endpoint
	var take func() map[string]int
	if f.st.mem != nil {
		var lastR, lastW int
		take = func() map[string]int {
			r, w := f.st.mem.Calls(id)
			n := map[string]int{"read": r - lastR, "write": w - lastW}
			lastR, lastW = r, w
			return n
		}
	} else {
		proxy, err := newCountingProxy(f.st.endpoint, f.st.label)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, proxy.close)
		endpoint, take = proxy.url, proxy.take
	}
	s, err := f.st.objects(ctx, endpoint, f.group, id)
	if err != nil {
		return nil, err
	}
	w := &fleetWorker{id: id, store: &crashStore{Store: s}, take: take, done: make(chan struct{}), crashed: make(chan struct{})}
	wctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	kc := f.kclConfig(w)
	run := func(ctx context.Context) error { return kclRun(ctx, kc) }
	if f.kind == shardFleet {
		sw, err := shard.New(shard.Config{
			Store: w.store, Group: f.group, Shards: f.n, Identity: id, TTL: f.st.ttl,
			Run: f.tr.run(id), OnRenew: w.renewed, Logger: quiet,
			OnSettled: func(shard.Settled) { f.mu.Lock(); f.assigner = id; f.mu.Unlock() },
			OnEvent: func(e shard.Event) {
				if e.Kind == shard.Lost {
					f.lost.Add(1)
				}
			},
		})
		if err != nil {
			cancel()
			return nil, err
		}
		run = sw.Run
	}
	f.workers = append(f.workers, w)
	f.tr.setLive(id, true)
	go func() {
		defer close(w.done)
		if err := run(wctx); err != nil && wctx.Err() == nil {
			progress("%s: %s worker %s: %v", f.st.name, f.kind, id, err)
		}
	}()
	return w, nil
}

// kclConfig is the baseline's configuration for worker w.
func (f *fleet) kclConfig(w *fleetWorker) kclConfig {
	return kclConfig{
		store: w.store, group: f.group, shards: f.n, identity: w.id, ttl: f.st.ttl,
		start: func(s int) { f.tr.start(w.id, s) }, stop: func(s int) { f.tr.end(w.id, s) },
		renewed: w.renewed, startWith: f.startWith,
		round: func(took time.Duration) { w.rounds.add(took, runner.DefaultRenewInterval(f.st.ttl)) },
	}
}

// leave stops worker w gracefully, and stops counting it.
func (f *fleet) leave(w *fleetWorker) {
	f.tr.setLive(w.id, false)
	w.cancel()
}

// remove forgets w once it returned.
func (f *fleet) remove(w *fleetWorker) {
	w.cancel()
	<-w.done
	f.workers = slices.DeleteFunc(f.workers, func(x *fleetWorker) bool { return x == w })
}

func (f *fleet) close() {
	for _, w := range f.workers {
		w.cancel()
	}
	for _, w := range f.workers {
		<-w.done
	}
	for _, c := range f.closers {
		c()
	}
}

// victim is a worker to crash: not the assigner, whose crash is the
// assigner's failover besides.
func (f *fleet) victim() *fleetWorker {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ws []*fleetWorker
	for _, w := range f.workers {
		if w.id != f.assigner {
			ws = append(ws, w)
		}
	}
	return ws[rand.N(len(ws))]
}

// assignerWorker is the worker that is the assigner, or nil when the
// latest assigner that settled is no longer among the workers.
func (f *fleet) assignerWorker() *fleetWorker {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range f.workers {
		if w.id == f.assigner {
			return w
		}
	}
	return nil
}

// The -shard-scenarios: what a fleet is put through once balanced.
const (
	// scenarioSteady is the steady run, over which requests and moves
	// are counted.
	scenarioSteady = "steady"
	// scenarioJoin is a worker joining, then the same worker leaving
	// gracefully.
	scenarioJoin = "join"
	// scenarioCrash is a worker other than the assigner crashing, then a
	// replacement joining.
	scenarioCrash = "crash"
	// scenarioAssigner is the assigner crashing (package shard's fleets
	// only), then a replacement joining.
	scenarioAssigner = "assigner"
)

// shardScenarioNames are the scenarios, in the order a trial runs them.
var shardScenarioNames = []string{scenarioSteady, scenarioJoin, scenarioCrash, scenarioAssigner}

// parseScenarios parses -shard-scenarios: a comma-separated subset of
// shardScenarioNames.
func parseScenarios(s string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, name := range splitList(s) {
		if !slices.Contains(shardScenarioNames, name) {
			return nil, fmt.Errorf("-shard-scenarios: unknown scenario %q (known: %s)", name, strings.Join(shardScenarioNames, ", "))
		}
		set[name] = true
	}
	if len(set) == 0 {
		return nil, fmt.Errorf("-shard-scenarios %q names no scenario (known: %s)", s, strings.Join(shardScenarioNames, ", "))
	}
	return set, nil
}

// steadyOnly reports whether scenarios name none but the steady run.
func steadyOnly(scenarios map[string]bool) bool {
	return len(scenarios) == 1 && scenarios[scenarioSteady]
}

// shardEvents are the events a fleet's times are measured from, in the
// order of the tables' columns: a worker joining, the same worker leaving,
// a worker crashing, the assigner crashing.
var shardEvents = []string{"join", "leave", scenarioCrash, scenarioAssigner}

// fleetID is a fleet among a run's: its store, kind and number of shards.
type fleetID struct {
	store string
	kind  fleetKind
	n     int
}

// compare orders fleets as the tables list them: by store (storeNames),
// then kind, then number of shards.
func (a fleetID) compare(b fleetID) int {
	return cmp.Or(slices.Index(storeNames, a.store)-slices.Index(storeNames, b.store), strings.Compare(string(a.kind), string(b.kind)), a.n-b.n)
}

func (r *shardRun) id() fleetID { return fleetID{r.store, r.kind, r.n} }

// shardRun is one fleet's figures at one N.
type shardRun struct {
	store string
	kind  fleetKind
	n, m  int
	ttl   time.Duration
	// times are, per scenario event ("join", "leave", "crash",
	// "assigner"), the times from the event to balance (join), or to all
	// the leaving or crashed worker's shards running again on the others
	// and the fleet balanced.
	times map[string][]time.Duration
	// moves and minimum per event: shard starts from the event to
	// balance, and the fewest balance needs.
	moves, minimum map[string][]int
	// cutoff is, per event, the limit within which the fleet did not
	// balance, which ended the trials.
	cutoff map[string]time.Duration
	// perWorker is the requests per worker per hour at TTL 15s, by
	// operation, averaged over the workers; assigner is the assigner's
	// own (the baseline has none). Both are nil without a steady run.
	perWorker, assigner map[string]float64
	// steadyMoves are the shard starts in a steady run of steadyFor, and
	// steadyLost the shards stopped meanwhile by a lost liveness.
	steadyMoves, steadyLost int
	steadyFor               time.Duration
	// rounds, overran and roundTime are the baseline's rounds in the
	// steady run, those longer than a renew interval, and their total
	// length.
	rounds, overran int
	roundTime       time.Duration
	overlaps        int
	errs            []string
}

func (r *shardRun) fail(what string, err error) {
	r.errs = append(r.errs, fmt.Sprintf("%s %s N=%d: %s: %v", r.store, r.kind, r.n, what, err))
	progress("%s %s N=%d: %s failed: %v", r.store, r.kind, r.n, what, err)
}

// settle waits until the fleet is balanced after event, within limit; a
// fleet that does not balance in time is noted as cut off, any other
// failure as failed.
func (r *shardRun) settle(ctx context.Context, f *fleet, event string, limit time.Duration) bool {
	err := f.tr.waitBalanced(ctx, limit)
	switch {
	case err == nil:
		return true
	case errors.Is(err, errNotBalanced):
		r.cutoff[event] = limit
		progress("%s %s N=%d: %s: not balanced within %v", r.store, r.kind, r.n, event, limit)
	default:
		r.fail(event, err)
	}
	return false
}

// note records one event's time and moves.
func (r *shardRun) note(event string, took time.Duration, moves, minimum int) {
	r.times[event] = append(r.times[event], took)
	r.moves[event] = append(r.moves[event], moves)
	r.minimum[event] = append(r.minimum[event], minimum)
}

// settleLimit is how long a fleet of n shards over m workers is given to
// balance after an event: ten TTLs, and twice the renew intervals the
// KCL-style baseline needs for a join, which moves one shard per interval
// (⌈n/(m+1)⌉ of them), and one more.
func settleLimit(ttl time.Duration, n, m int) time.Duration {
	_, moves := share(n, m+1)
	return 10*ttl + 2*time.Duration(moves+1)*runner.DefaultRenewInterval(ttl)
}

// benchShards runs the scenarios on st for a fleet of kind with n shards
// over m workers: a steady run of steady, counting requests and moves,
// then trials of the other scenarios, each trial from m workers.
func benchShards(ctx context.Context, st *store, kind fleetKind, n, m, trials int, steady time.Duration, scenarios map[string]bool) *shardRun {
	r := &shardRun{store: st.name, kind: kind, n: n, m: m, ttl: st.ttl, times: map[string][]time.Duration{},
		moves: map[string][]int{}, minimum: map[string][]int{}, cutoff: map[string]time.Duration{}}
	f := newFleet(st, kind, n)
	defer func() {
		f.close()
		r.overlaps = f.tr.overlaps
	}()
	limit := settleLimit(st.ttl, n, m)
	f.startWith = m
	for range m {
		if _, err := f.join(ctx); err != nil {
			r.fail("start", err)
			return r
		}
	}
	f.startWith = 0
	balanced := r.settle(ctx, f, "start", limit)
	if _, cut := r.cutoff["start"]; scenarios[scenarioSteady] && (balanced || cut) {
		// A fleet still converging is counted too, and said to be.
		r.steady(ctx, f, steady)
	}
	if !balanced || steadyOnly(scenarios) {
		return r
	}
	for i := range trials {
		if ctx.Err() != nil {
			return r
		}
		progress("%s %s N=%d: trial %d of %d", st.name, kind, n, i+1, trials)
		if scenarios[scenarioJoin] && !r.joinLeave(ctx, f, limit) {
			return r
		}
		if scenarios[scenarioCrash] && !r.crash(ctx, f, scenarioCrash, f.victim(), limit) {
			return r
		}
		if scenarios[scenarioAssigner] && kind == shardFleet && !r.crash(ctx, f, scenarioAssigner, f.assignerWorker(), limit) {
			return r
		}
	}
	return r
}

// steady lets the balanced fleet run for d, after a TTL of settling, and
// counts its workers' requests and its shard starts over that time.
func (r *shardRun) steady(ctx context.Context, f *fleet, d time.Duration) {
	progress("%s %s N=%d: balanced over %d workers; steady for %v", r.store, r.kind, r.n, r.m, d)
	ctxtime.Sleep(ctx, r.ttl)
	for _, w := range f.workers {
		w.take()
		w.rounds.take()
	}
	starts, _ := f.tr.snapshot("")
	lost := f.lost.Load()
	began := time.Now()
	ctxtime.Sleep(ctx, d)
	elapsed := time.Since(began)
	after, _ := f.tr.snapshot("")
	counts := map[string]map[string]int{}
	for _, w := range f.workers {
		counts[w.id] = w.take()
		n, over, total := w.rounds.take()
		r.rounds, r.overran, r.roundTime = r.rounds+n, r.overran+over, r.roundTime+total
	}
	if ctx.Err() != nil {
		return
	}
	r.steadyMoves, r.steadyLost, r.steadyFor = after-starts, int(f.lost.Load()-lost), d
	f.mu.Lock()
	assigner := f.assigner
	f.mu.Unlock()
	r.perWorker, r.assigner = perWorker(counts, assigner, elapsed, r.ttl)
}

// joinLeave starts a worker, waits for balance, then stops the same
// worker gracefully and waits for balance again; it reports whether the
// trials can go on.
func (r *shardRun) joinLeave(ctx context.Context, f *fleet, limit time.Duration) bool {
	starts, _ := f.tr.snapshot("")
	t0 := time.Now()
	w, err := f.join(ctx)
	if err != nil {
		r.fail("join", err)
		return false
	}
	if !r.settle(ctx, f, "join", limit) {
		return false
	}
	after, _ := f.tr.snapshot("")
	lo, _ := share(r.n, r.m+1)
	r.note("join", time.Since(t0), after-starts, lo)

	starts, held := f.tr.snapshot(w.id)
	t0 = time.Now()
	f.leave(w)
	if !r.settle(ctx, f, "leave", limit) {
		return false
	}
	after, _ = f.tr.snapshot("")
	r.note("leave", time.Since(t0), after-starts, held)
	f.remove(w)
	return true
}

// crash crashes v right after one of its renewals (from then on its calls
// hang), waits for its shards to run elsewhere and the fleet to balance,
// and starts a replacement; it reports whether the trials can go on.
func (r *shardRun) crash(ctx context.Context, f *fleet, event string, v *fleetWorker, limit time.Duration) bool {
	if v == nil {
		r.fail(event, errors.New("no live worker is known to be the assigner"))
		return false
	}
	v.mu.Lock()
	v.armed = true
	v.mu.Unlock()
	if err := waitFor(ctx, v.crashed, 2*r.ttl, "the victim's renewal"); err != nil {
		r.fail(event, err)
		return false
	}
	starts, held := f.tr.snapshot(v.id)
	f.tr.setLive(v.id, false)
	if r.kind == kclFleet {
		// A crashed process runs nothing; the baseline's worker, whose
		// calls hang, would stop its shards only after its renewals
		// time out.
		f.tr.drop(v.id)
	}
	if !r.settle(ctx, f, event, limit) {
		return false
	}
	after, _ := f.tr.snapshot("")
	r.note(event, time.Since(v.crashedAt), after-starts, held)
	f.remove(v)
	// A replacement, so that every trial starts from m workers.
	if _, err := f.join(ctx); err != nil {
		r.fail("replace", err)
		return false
	}
	return r.settle(ctx, f, "replace", limit)
}

// perWorker turns each worker's request counts over elapsed at ttl into
// the mean per worker other than the assigner, and the assigner's own,
// per hour at lease.DefaultTTL. With no assigner (the baseline) every
// worker is in the mean and assigner is nil.
func perWorker(counts map[string]map[string]int, assigner string, elapsed, ttl time.Duration) (mean, own map[string]float64) {
	sum := map[string]int{}
	workers := 0
	for id, c := range counts {
		if id == assigner {
			own = scaleCounts(c, elapsed, ttl)
			continue
		}
		workers++
		for op, v := range c {
			sum[op] += v
		}
	}
	if workers == 0 {
		return nil, own
	}
	mean = scaleCounts(sum, elapsed*time.Duration(workers), ttl)
	return mean, own
}

// shardReport is what leasebench prints with -shards.
type shardReport struct {
	began, ended time.Time
	runs         []*shardRun
	notes        []string
}

// benchShardsAll runs the -shards scenarios on every store at once, the
// fleets of one store one after the other, or all at once when the steady
// run is the only scenario (nothing is timed but the requests counted).
func benchShardsAll(ctx context.Context, c config, stores []*store) *shardReport {
	rep := &shardReport{began: time.Now()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, st := range stores {
		if st.objects == nil {
			rep.notes = append(rep.notes, st.name+": skipped: leasebench opens no shard group on it")
			continue
		}
		var fleets []func()
		for _, f := range []struct {
			kind   fleetKind
			counts []int
		}{{shardFleet, c.shards}, {kclFleet, c.shardBaseline}} {
			for _, n := range f.counts {
				fleets = append(fleets, func() {
					r := benchShards(ctx, st, f.kind, n, c.shardWorkers, c.shardTrials, c.shardSteady, c.shardScenarios)
					mu.Lock()
					rep.runs = append(rep.runs, r)
					mu.Unlock()
				})
			}
		}
		if steadyOnly(c.shardScenarios) {
			for _, run := range fleets {
				wg.Go(run)
			}
			continue
		}
		wg.Go(func() {
			for _, run := range fleets {
				run()
			}
		})
	}
	wg.Wait()
	slices.SortStableFunc(rep.runs, func(a, b *shardRun) int { return a.id().compare(b.id()) })
	rep.ended = time.Now()
	return rep
}

// overrunNote says, when more than a tenth of the baseline's rounds in
// the steady run took longer than their renew interval, that its requests
// are what the store carried in that time, fewer than the design sends.
func (r *shardRun) overrunNote() string {
	if r.overran*10 <= r.rounds {
		return ""
	}
	return fmt.Sprintf("%s %s, %d shards: %d of the %d rounds of the steady run took longer than the renew interval (%v; mean %v): its requests per hour are what the store carried, fewer than the design asks for",
		r.store, fleetName(r.kind), r.n, r.overran, r.rounds, runner.DefaultRenewInterval(r.ttl), (r.roundTime / time.Duration(r.rounds)).Round(time.Millisecond))
}

// timeCell shows an event's times ÷ TTL, p50 / p99, and the limit within
// which the fleet did not balance after it, if it did not.
func (r *shardRun) timeCell(event string) string {
	cell := p50p99(r.times[event], ratioTo(r.ttl))
	limit, cut := r.cutoff[event]
	switch {
	case !cut:
		return cell
	case len(r.times[event]) == 0:
		return fmt.Sprintf("not balanced in %v", limit)
	}
	return fmt.Sprintf("%s, then not balanced in %v", cell, limit)
}

// moveCell shows the mean moves per event against the mean minimum.
func moveCell(moves, minimum []int) string {
	if len(moves) == 0 {
		return "–"
	}
	mean := func(xs []int) float64 {
		t := 0
		for _, x := range xs {
			t += x
		}
		return float64(t) / float64(len(xs))
	}
	return fmt.Sprintf("%.1f / %.1f", mean(moves), mean(minimum))
}

// fleetName names a fleet in the tables.
func fleetName(k fleetKind) string {
	if k == kclFleet {
		return "KCL-style baseline"
	}
	return "leasehold shard"
}

func (rep *shardReport) print(w io.Writer, c config) {
	fmt.Fprintf(w, "leasebench -shards, %s, %s\n\n", rep.began.Format("2006-01-02 15:04 MST"), machine())
	conv := &table{
		title: fmt.Sprintf("Shards: time to balance ÷ TTL, p50 / p99, over %d trials (%d workers, one more joining then leaving; a worker other than the assigner crashing; the assigner crashing)", c.shardTrials, c.shardWorkers),
		header: []string{"backend", "fleet", "shards", "TTL", "join → balanced", "graceful leave → its shards running", "crash → its shards running", "assigner crash → its shards running",
			"moves per join / minimum", "per leave / minimum", "per crash / minimum", "per assigner crash / minimum", "overlaps"},
	}
	cost := &table{
		title:  "Shards: requests per worker per hour at TTL 15s, and moves in a steady run",
		header: []string{"backend", "fleet", "shards", "workers", "per worker requests/h", "the assigner's requests/h", "moves in a steady run"},
	}
	var errs, cutoffs []string
	for _, r := range rep.runs {
		if !steadyOnly(c.shardScenarios) {
			row := []string{r.store, fleetName(r.kind), fmt.Sprint(r.n), r.ttl.String()}
			for _, e := range shardEvents {
				row = append(row, r.timeCell(e))
			}
			for _, e := range shardEvents {
				row = append(row, moveCell(r.moves[e], r.minimum[e]))
			}
			conv.rows = append(conv.rows, append(row, fmt.Sprint(r.overlaps)))
		}
		if limit, cut := r.cutoff["start"]; cut {
			cutoffs = append(cutoffs, fmt.Sprintf("%s %s, %d shards: the %d workers did not balance in %v from their start; its steady run (if any) counted them still converging, and nothing else was measured", r.store, fleetName(r.kind), r.n, r.m, limit))
		}
		errs = append(errs, r.errs...)
		if !c.shardScenarios[scenarioSteady] {
			continue
		}
		if note := r.overrunNote(); note != "" {
			cutoffs = append(cutoffs, note)
		}
		own := requests(r.assigner)
		if r.kind == kclFleet {
			own = "none"
		}
		moves := "–"
		if r.steadyFor > 0 {
			moves = fmt.Sprintf("%d in %v", r.steadyMoves, r.steadyFor)
			if r.steadyLost > 0 {
				moves += fmt.Sprintf(" (%d lost)", r.steadyLost)
			}
		}
		cost.rows = append(cost.rows, []string{r.store, fleetName(r.kind), fmt.Sprint(r.n), fmt.Sprint(r.m),
			requests(r.perWorker), own, moves})
	}
	if len(conv.rows) > 0 {
		conv.print(w, c.markdown)
	}
	if len(cost.rows) > 0 {
		cost.print(w, c.markdown)
	}
	notes := append([]string{
		"join: from starting the new worker to the fleet balanced (every shard running on one live worker, each running ⌊N/M⌋ or ⌈N/M⌉); leave: from cancelling the worker's context to balanced again; crash: from the Sent of the victim's last successful renewal (then all its calls hang) to balanced again, the victim a worker other than the assigner; assigner crash: the same with the assigner as the victim (package shard's fleets only: the baseline has none); shard functions return at once when cancelled (no drain time)",
		"moves: shard starts from the event to balance; minimum: ⌊N/(M+1)⌋ for a join, the shards the worker ran for a leave or a crash; in a steady run, (k lost): k shards stopped meanwhile because their worker's liveness ended (its renewals failed until the renew deadline: shard.Lost), to start again",
		"not balanced in X: the fleet did not balance within X (ten TTLs and two renew intervals per shard the baseline moves for a join) after the event, which ended that fleet's trials",
		"overlaps: starts of a shard while another worker still ran it (a crashed baseline worker counts as stopped at once)",
		"requests: counted per worker by a counting proxy (memlease counts its own) over the steady run (-shard-steady), scaled from the TTL to 15s; the per-worker figure is the mean over the workers other than the assigner",
		"KCL-style baseline: one lease per shard renewed by its owner every renew interval, every worker reading every lease per interval (its scan) and taking the free or expired leases it needs at once; for a worker under its share with none free, the workers over their floor give one up in turn, one per interval in all, instead of being stolen from (KCL steals one per interval), and presence is a lease per worker (see cmd/leasebench/kcl.go)",
	}, append(cutoffs, rep.notes...)...)
	for _, e := range errs {
		notes = append(notes, "FAILED: "+e)
	}
	notes = append(notes, fmt.Sprintf("took %v", rep.ended.Sub(rep.began).Round(time.Second)))
	for _, n := range notes {
		if c.markdown {
			fmt.Fprintf(w, "- %s\n", n)
		} else {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}
