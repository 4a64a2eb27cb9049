package main

import (
	"cmp"
	"context"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
			return fmt.Errorf("not balanced within %v", limit)
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

	mu        sync.Mutex
	armed     bool
	crashed   chan struct{}
	crashedAt time.Time
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
	run := func(ctx context.Context) error { return kclRun(ctx, f.kclConfig(w)) }
	if f.kind == shardFleet {
		sw, err := shard.New(shard.Config{
			Store: w.store, Group: f.group, Shards: f.n, Identity: id, TTL: f.st.ttl,
			Run: f.tr.run(id), OnRenew: w.renewed, Logger: quiet,
			OnSettled: func(shard.Settled) { f.mu.Lock(); f.assigner = id; f.mu.Unlock() },
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
		renewed: w.renewed,
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

// shardRun is one fleet's figures at one N.
type shardRun struct {
	store string
	kind  fleetKind
	n, m  int
	ttl   time.Duration
	// join, leave and crash are the times from the event to balance
	// (join), or to all the leaving or crashed worker's shards running
	// again on the others and the fleet balanced.
	join, leave, crash []time.Duration
	// moves and minimum per join, leave and crash: shard starts from the
	// event to balance, and the fewest balance needs.
	moves, minimum map[string][]int
	// perWorker is the requests per worker per hour at TTL 15s, by
	// operation, averaged over the workers; assigner is the assigner's
	// own (the baseline has none).
	perWorker, assigner map[string]float64
	// steadyMoves are the shard starts in a steady run of steadyFor.
	steadyMoves int
	steadyFor   time.Duration
	overlaps    int
	errs        []string
}

func (r *shardRun) fail(what string, err error) {
	r.errs = append(r.errs, fmt.Sprintf("%s %s N=%d: %s: %v", r.store, r.kind, r.n, what, err))
	progress("%s %s N=%d: %s failed: %v", r.store, r.kind, r.n, what, err)
}

// benchShards runs the scenarios on st for a fleet of kind with n shards
// over m workers: a steady run of steady, counting requests and moves,
// then trials of a join, a graceful leave and a crash.
func benchShards(ctx context.Context, st *store, kind fleetKind, n, m, trials int, steady time.Duration) *shardRun {
	r := &shardRun{store: st.name, kind: kind, n: n, m: m, ttl: st.ttl, steadyFor: steady,
		moves: map[string][]int{}, minimum: map[string][]int{}}
	f := newFleet(st, kind, n)
	defer func() {
		f.close()
		r.overlaps = f.tr.overlaps
	}()
	// A settling limit generous enough for the baseline, which takes
	// one shard per worker per renew interval.
	limit := 10*st.ttl + time.Duration(n+1)*runner.DefaultRenewInterval(st.ttl)
	for range m {
		if _, err := f.join(ctx); err != nil {
			r.fail("start", err)
			return r
		}
	}
	if err := f.tr.waitBalanced(ctx, limit); err != nil {
		r.fail("start", err)
		return r
	}
	progress("%s %s N=%d: balanced over %d workers; steady for %v", st.name, kind, n, m, steady)
	ctxtime.Sleep(ctx, st.ttl)
	for _, w := range f.workers {
		w.take()
	}
	starts, _ := f.tr.snapshot("")
	began := time.Now()
	ctxtime.Sleep(ctx, steady)
	elapsed := time.Since(began)
	after, _ := f.tr.snapshot("")
	r.steadyMoves = after - starts
	counts := map[string]map[string]int{}
	for _, w := range f.workers {
		counts[w.id] = w.take()
	}
	f.mu.Lock()
	assigner := f.assigner
	f.mu.Unlock()
	r.perWorker, r.assigner = perWorker(counts, assigner, elapsed, st.ttl)

	for i := range trials {
		if ctx.Err() != nil {
			return r
		}
		progress("%s %s N=%d: trial %d of %d", st.name, kind, n, i+1, trials)
		// Join.
		starts, _ := f.tr.snapshot("")
		t0 := time.Now()
		w, err := f.join(ctx)
		if err != nil {
			r.fail("join", err)
			return r
		}
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			r.fail("join", err)
			return r
		}
		r.join = append(r.join, time.Since(t0))
		after, _ := f.tr.snapshot("")
		lo, _ := share(n, m+1)
		r.moves["join"] = append(r.moves["join"], after-starts)
		r.minimum["join"] = append(r.minimum["join"], lo)

		// Graceful leave of the worker that joined.
		starts, held := f.tr.snapshot(w.id)
		t0 = time.Now()
		f.leave(w)
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			r.fail("leave", err)
			return r
		}
		r.leave = append(r.leave, time.Since(t0))
		after, _ = f.tr.snapshot("")
		r.moves["leave"] = append(r.moves["leave"], after-starts)
		r.minimum["leave"] = append(r.minimum["leave"], held)
		f.remove(w)

		// Crash of a worker other than the assigner, right after one of
		// its renewals.
		v := f.victim()
		v.mu.Lock()
		v.armed = true
		v.mu.Unlock()
		if err := waitFor(ctx, v.crashed, 2*st.ttl, "the victim's renewal"); err != nil {
			r.fail("crash", err)
			return r
		}
		starts, held = f.tr.snapshot(v.id)
		f.tr.setLive(v.id, false)
		if kind == kclFleet {
			// A crashed process runs nothing; the baseline's worker,
			// whose calls hang, would stop its shards only after
			// its renewals time out.
			f.tr.drop(v.id)
		}
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			r.fail("crash", err)
			return r
		}
		r.crash = append(r.crash, time.Since(v.crashedAt))
		after, _ = f.tr.snapshot("")
		r.moves["crash"] = append(r.moves["crash"], after-starts)
		r.minimum["crash"] = append(r.minimum["crash"], held)
		f.remove(v)
		// A replacement, so that every trial starts from m workers.
		if _, err := f.join(ctx); err != nil {
			r.fail("replace", err)
			return r
		}
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			r.fail("replace", err)
			return r
		}
	}
	return r
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
// fleets of one store one after the other.
func benchShardsAll(ctx context.Context, c config, stores []*store) *shardReport {
	rep := &shardReport{began: time.Now()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, st := range stores {
		if st.objects == nil {
			rep.notes = append(rep.notes, st.name+": skipped: leasebench opens no shard group on it")
			continue
		}
		wg.Go(func() {
			for _, f := range []struct {
				kind   fleetKind
				counts []int
			}{{shardFleet, c.shards}, {kclFleet, c.shardBaseline}} {
				for _, n := range f.counts {
					r := benchShards(ctx, st, f.kind, n, c.shardWorkers, c.shardTrials, c.shardSteady)
					mu.Lock()
					rep.runs = append(rep.runs, r)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	slices.SortStableFunc(rep.runs, func(a, b *shardRun) int {
		return cmp.Or(slices.Index(storeNames, a.store)-slices.Index(storeNames, b.store), strings.Compare(string(a.kind), string(b.kind)), a.n-b.n)
	})
	rep.ended = time.Now()
	return rep
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
		title: fmt.Sprintf("Shards: time to balance ÷ TTL, p50 / p99, over %d trials (%d workers, one more joining then leaving; a worker other than the assigner crashing)", c.shardTrials, c.shardWorkers),
		header: []string{"backend", "fleet", "shards", "TTL", "join → balanced", "graceful leave → its shards running", "crash → its shards running",
			"moves per join / minimum", "per leave / minimum", "per crash / minimum", "overlaps"},
	}
	cost := &table{
		title:  "Shards: requests per worker per hour at TTL 15s, and moves in a steady run",
		header: []string{"backend", "fleet", "shards", "workers", "per worker requests/h", "the assigner's requests/h", "moves in a steady run"},
	}
	var errs []string
	for _, r := range rep.runs {
		conv.rows = append(conv.rows, []string{r.store, fleetName(r.kind), fmt.Sprint(r.n), r.ttl.String(),
			p50p99(r.join, ratioTo(r.ttl)), p50p99(r.leave, ratioTo(r.ttl)), p50p99(r.crash, ratioTo(r.ttl)),
			moveCell(r.moves["join"], r.minimum["join"]), moveCell(r.moves["leave"], r.minimum["leave"]), moveCell(r.moves["crash"], r.minimum["crash"]),
			fmt.Sprint(r.overlaps)})
		own := requests(r.assigner)
		if r.kind == kclFleet {
			own = "none"
		}
		cost.rows = append(cost.rows, []string{r.store, fleetName(r.kind), fmt.Sprint(r.n), fmt.Sprint(r.m),
			requests(r.perWorker), own, fmt.Sprintf("%d in %v", r.steadyMoves, r.steadyFor)})
		errs = append(errs, r.errs...)
	}
	conv.print(w, c.markdown)
	cost.print(w, c.markdown)
	notes := append([]string{
		"join: from starting the new worker to the fleet balanced (every shard running on one live worker, each running ⌊N/M⌋ or ⌈N/M⌉); leave: from cancelling the worker's context to balanced again; crash: from the Sent of the victim's last successful renewal (then all its calls hang) to balanced again; shard functions return at once when cancelled (no drain time)",
		"moves: shard starts from the event to balance; minimum: ⌊N/(M+1)⌋ for a join, the shards the worker ran for a leave or a crash",
		"overlaps: starts of a shard while another worker still ran it (a crashed baseline worker counts as stopped at once)",
		"requests: counted per worker by a counting proxy (memlease counts its own) over the steady run, scaled from the TTL to 15s; the per-worker figure is the mean over the workers other than the assigner",
		"KCL-style baseline: one lease per shard renewed by its owner every renew interval, every worker reading every lease per interval (its scan) and taking at most one free or expired lease per interval; loaded workers give up one lease per interval instead of being stolen from, and presence is a lease per worker (see cmd/leasebench/kcl.go)",
	}, rep.notes...)
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
