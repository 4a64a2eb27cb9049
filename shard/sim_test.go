package shard

import (
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/internal/stopwait"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard/internal/oracle"
)

// fleet is a group of simulated workers on one memlease store. Every
// random choice of a run is drawn from its seed (rng, and each worker's
// own source), so that a run replays from its seed.
type fleet struct {
	// wrapStore, if set, wraps each process's store under the simulation's
	// own (the red-team tests' per-key faults); source, if set, gives a
	// worker's processes their Rand (nil: the seed's stream).
	wrapStore func(proc string, s Store) Store
	source    func(id string) rand.Source
	t         *testing.T
	store     *memlease.Store
	o         *oracle.Oracle
	n         int
	ttl       time.Duration
	expire    time.Duration
	workers   map[string]*simWorker
	next      int
	seed      uint64
	rng       *rand.Rand
	procs     int // processes started, each with a source of its own
	// candidates, if set, is how many of the first workers campaign to be
	// the assigner; the others set NoAssigner.
	candidates int
	// followerReads, if set, is how many reads per renewal the store's
	// leases ask of their followers (lease.FollowerReader), as Azure's
	// ask for six.
	followerReads int
	// drainTimeout is the workers' DrainTimeout.
	drainTimeout time.Duration
	// perWorker is the workers' MaxPerWorker (see limitPerWorker).
	perWorker int
	// grace, if set, makes every shard function the command of
	// leasehold run --shards --grace grace, one that ignores SIGTERM: it
	// returns when the CLI's supervisor would SIGKILL it (see stopping).
	grace time.Duration
	// parts, if set, keeps the assignment as DynamoDB keeps a large object
	// (see partsModel).
	parts *partsModel
	// latency, if set, gives every call a latency below a millisecond
	// (see simStore.delay).
	latency bool
	gone    []*simWorker // stopped or killed, whose Run has yet to return
	// leaseFaults counts the faults put on the assigner lease's record
	// (restored, deleted, broken); cutOffs counts the shard functions of a
	// worker that left on purpose cut off before they stopped by
	// themselves (see checkDrain), firstCutOff describes the first.
	leaseFaults atomic.Int64
	cutOffs     atomic.Int64
	firstCutOff atomic.Pointer[string]
	// fingerprint, if set, records every shard start and end and every
	// call reaching the store, with its instant, so that two runs of one
	// seed can be compared (see replay).
	fingerprint *runLog
}

// runLog is what a run did, in the order of the fake clock: each entry
// is an instant and what happened at it. Entries of one instant are kept
// in the order of their text (lines), as goroutines woken at one instant
// run in an order the runtime picks: what they do at it is the run's, not
// the order in which the log saw it.
type runLog struct {
	mu      sync.Mutex
	t0      time.Time
	entries []logEntry
}

type logEntry struct {
	at   time.Duration
	what string
}

func (l *runLog) add(format string, args ...any) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, logEntry{time.Since(l.t0), fmt.Sprintf(format, args...)})
}

// lines returns the log, an entry a line, ordered by instant and then text.
func (l *runLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := slices.Clone(l.entries)
	slices.SortStableFunc(e, func(a, b logEntry) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.what, b.what)) })
	out := make([]string, len(e))
	for i, x := range e {
		out[i] = fmt.Sprintf("%v %s", x.at, x.what)
	}
	return out
}

type simWorker struct {
	cancel context.CancelFunc
	done   chan error
	live   bool // counts for balance
	// killed is closed when the process is killed: its shard functions
	// end at once, however long they were taking to stop.
	killed chan struct{}
	// stopTakes is how long its shard functions take to stop once their
	// context is cancelled, unless their lease expires first (see
	// stopping): f.drain(), f.grace, or a fault's longer time.
	stopTakes atomic.Int64
	// unhealthy fails its health checks while set.
	unhealthy atomic.Bool
	// cut, while set, hangs the calls of the worker's assigner lease, and
	// only those (see simStore).
	cut atomic.Bool
	// hide, while set, hides the worker's next renewal of its liveness:
	// once it succeeded, the record is put back as it was before it and
	// every call of the worker hangs (see simStore).
	hide atomic.Bool
	// slowLists, while set, delays half of its listings (drawn from rng)
	// by that long before the store sees them: a count that begins at a
	// slow listing and ends at a fast one is where counting from a
	// listing's sending instead of its return would judge early.
	slowLists atomic.Int64
	mu        sync.Mutex
	rng       *rand.Rand
	calls     map[string]int // by key and operation (see simStore.delay)
	// proc names the process for the store's faults (see startProcess).
	proc string
	// faulted is set once a fault of the schedule targeted this process
	// (see touch); drainCheck is set when it left on purpose untouched by
	// any, leaseFaultsAt the fleet's leaseFaults then (see checkDrain).
	faulted       bool
	drainCheck    atomic.Bool
	leaseFaultsAt atomic.Int64
}

const simGroup = "sim"

// newFleet returns a fleet of n shards whose random choices are drawn
// from seed 1.
func newFleet(t *testing.T, n int) *fleet { return newSeededFleet(t, n, 1) }

// newSeededFleet returns a fleet of n shards whose random choices are
// drawn from seed.
func newSeededFleet(t *testing.T, n int, seed uint64) *fleet {
	return &fleet{t: t, store: memlease.NewStore(), o: oracle.New(n), n: n, ttl: 15 * time.Second, workers: map[string]*simWorker{},
		seed: seed, rng: rand.New(rand.NewPCG(seed, 0))}
}

// limitPerWorker caps the group at perWorker shards a worker (0: none),
// in its workers' Config and in the oracle's checks: call it before the
// first join.
func (f *fleet) limitPerWorker(perWorker int) {
	f.perWorker = perWorker
	f.o.LimitPerWorker(perWorker)
}

func (f *fleet) renew() time.Duration { return f.ttl * 3 / 8 }

// renewDeadline is the workers' RenewDeadline, the runner's default.
func (f *fleet) renewDeadline() time.Duration { return runner.DefaultRenewDeadline(f.ttl) }

// drain is how long a shard's function takes to stop once its context is
// cancelled: within the TTL's margin over RenewInterval + RenewDeadline
// (1/16 of it), which is what the runner asks of a task.
func (f *fleet) drain() time.Duration { return f.renew() / 10 }

// phase returns a random duration below d, from the fleet's seed.
func (f *fleet) phase(d time.Duration) time.Duration { return time.Duration(f.rng.Int64N(int64(d))) }

func (f *fleet) join() string {
	f.next++
	id := fmt.Sprintf("w%04d", f.next)
	f.start(id)
	return id
}

func (f *fleet) start(id string) { f.startProcess(id, id) }

// startProcess starts a worker of identity id whose calls the store's
// faults know as proc's: a process started again under its identity (proc
// differs from id) is not cut off with the killed one.
func (f *fleet) startProcess(id, proc string) {
	f.procs++
	sw := &simWorker{done: make(chan error, 1), live: true, killed: make(chan struct{}), proc: proc, calls: map[string]int{}, rng: rand.New(rand.NewPCG(f.seed, uint64(f.procs)))}
	sw.stopTakes.Store(int64(cmp.Or(f.grace, f.drain())))
	var store Store = f.store.Objects(proc)
	if f.followerReads > 0 {
		store = askingStore{Objects: f.store.Objects(proc), judge: lease.JudgedByContender, shows: true, reads: f.followerReads}
	}
	if f.wrapStore != nil {
		store = f.wrapStore(proc, store)
	}
	store = simStore{Store: store, f: f, w: sw, proc: proc}
	// The runners' jitter from the seed, a stream per process.
	var src rand.Source = rand.NewPCG(f.seed, 1<<32|uint64(f.procs))
	if f.source != nil {
		src = cmp.Or(f.source(id), src)
	}
	w, err := New(Config{
		Store: store, Group: simGroup, Shards: f.n, MaxPerWorker: f.perWorker, Identity: id, TTL: f.ttl,
		NoAssigner:   f.candidates > 0 && f.next > f.candidates,
		DrainTimeout: f.drainTimeout,
		Rand:         runner.LockedSource(src),
		HealthCheck: func(context.Context) error {
			if sw.unhealthy.Load() {
				return errors.New("sim: unhealthy")
			}
			return nil
		},
		Logger:      simLogger().With("w", id),
		expireAfter: f.expire,
		Run: func(ctx context.Context, s Shard) error {
			f.o.Start(id, s.Index, s.Epoch)
			f.fingerprint.add("start shard %d on %s (process %s), epoch %d", s.Index, id, proc, s.Epoch)
			<-ctx.Done()
			if !f.o.Crashed(id) {
				f.stopping(ctx, sw) // the work takes a while to stop
			}
			f.o.End(id, s.Index)
			f.fingerprint.add("end shard %d on %s (process %s), epoch %d", s.Index, id, proc, s.Epoch)
			return nil
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.t.Context())
	sw.cancel = cancel
	f.workers[id] = sw
	go func() { sw.done <- w.Run(ctx) }()
}

// stopping waits while a cancelled shard function stops: it takes
// sw.stopTakes to finish its work (f.drain(), or a fault's longer time, or
// with f.grace set, the grace period of leasehold run --shards, whose
// command ignores SIGTERM), but is cut off when the CLI's supervisor would
// SIGKILL it, by the CLI's own code (stopwait.Wait: the kill margin before
// runner.Expiry of its context, as runner.Config.DrainTimeout asks of a
// task that needs time to stop); or at once when the process is killed.
func (f *fleet) stopping(ctx context.Context, sw *simWorker) {
	margin := (f.ttl - f.renew() - f.renewDeadline()) / 2 // --kill-margin's default
	graceEnd := time.Now().Add(time.Duration(sw.stopTakes.Load()))
	stopped := stopwait.Wait(ctx, graceEnd, margin, sw.killed, nil, nil)
	if early := graceEnd.Sub(time.Now()); !stopped && early > 0 && sw.drainCheck.Load() && f.leaseFaults.Load() == sw.leaseFaultsAt.Load() {
		f.cutOffs.Add(1)
		what := fmt.Sprintf("%s: a shard function of %s cut off %v before it stopped, while its worker drained a leave on purpose (DrainTimeout %v)", time.Now().Format(time.TimeOnly), sw.proc, early, f.drainTimeout)
		f.firstCutOff.CompareAndSwap(nil, &what)
	}
}

// checkDrain marks a worker that leaves on purpose (SIGTERM, or failed
// health checks) with its shards slow to stop, within the DrainTimeout:
// unless a fault of the schedule touched its calls or its leases' records,
// both its leases stay renewed while they stop, so none of its shard
// functions may be cut off by a lease's expiry (see stopping).
func (f *fleet) checkDrain(id string) {
	w := f.workers[id]
	if w.faulted {
		return
	}
	w.leaseFaultsAt.Store(f.leaseFaults.Load())
	w.drainCheck.Store(true)
}

// touch notes a fault of the schedule on a worker's process: its leases'
// renewals may fail, and its shards be cut off.
func (f *fleet) touch(id string) {
	if w := f.workers[id]; w != nil {
		w.faulted = true
		w.drainCheck.Store(false)
	}
}

// live returns the workers that count for balance, in order.
func (f *fleet) live() []string {
	var out []string
	for id, w := range f.workers {
		if w.live {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// ids returns every worker's identity, in order: the schedule's choices
// must not follow the map's order.
func (f *fleet) ids() []string {
	out := slices.Collect(maps.Keys(f.workers))
	sort.Strings(out)
	return out
}

// leave stops a worker as SIGTERM would, and waits for its Run to return.
func (f *fleet) leave(id string) {
	w := f.workers[id]
	f.leaveLater(id)
	f.gone = f.gone[:len(f.gone)-1]
	if err := <-w.done; err != nil {
		f.t.Fatalf("%s: Run: %v", id, err)
	}
}

// leaveLater stops a worker as SIGTERM would, without waiting for its Run
// to return (stopAll waits for it).
func (f *fleet) leaveLater(id string) {
	w := f.workers[id]
	w.live = false
	w.cancel()
	f.gone = append(f.gone, w)
	delete(f.workers, id)
}

// crash stops a worker as kill -9 would: its calls never reach the store
// again, and its shard functions end at once.
func (f *fleet) crash(id string) {
	f.store.Hang(f.workers[id].proc)
	f.o.Crash(id)
	w := f.workers[id]
	close(w.killed)
	f.leaveLater(id)
}

// partition cuts a worker off the store: its calls hang, or fail at once.
func (f *fleet) partition(id string, hang bool) {
	f.touch(id)
	if hang {
		f.store.Hang(f.workers[id].proc)
	} else {
		f.store.Partition(f.workers[id].proc)
	}
	f.workers[id].live = false
}

// heal ends every fault of a worker.
func (f *fleet) heal(id string) {
	w := f.workers[id]
	f.store.Heal(w.proc)
	w.cut.Store(false)
	w.unhealthy.Store(false)
	w.hide.Store(false)
	w.slowLists.Store(0)
	w.live = true
}

// simStore is a worker's Store with the simulation's faults beside
// memlease's: every call takes a latency below a millisecond when the
// fleet's latency is set (see delay); the calls of its assigner lease
// hang while cut is set (cutStore); its next renewal of its liveness
// is hidden while hide is set; its listings are slow while slowLists is
// set; and the assignment is kept in parts when the fleet's parts is set.
type simStore struct {
	Store
	f    *fleet
	w    *simWorker
	proc string
}

// delay holds a call of op on key for its latency, when the fleet has
// one: below a millisecond, a hash of the seed, the process, the key, op,
// and how many such calls the process made before. On the fake clock,
// calls of two goroutines that fall on one instant run in the order the Go
// scheduler picks, which the seed does not decide (a worker's read of the
// assignment and its assigner's write of it, whose timers' periods share
// multiples, say); a latency that differs by caller and call puts them at
// instants of their own, so that a seed replays. It does not hang on the
// instant, nor on the order of a loop over a map (the assigner's reads of
// the acknowledgements that changed), which would make them differ again.
func (s simStore) delay(ctx context.Context, key, op string) {
	if !s.f.latency {
		return
	}
	call := key + " " + op
	s.w.mu.Lock()
	n := s.w.calls[call]
	s.w.calls[call] = n + 1
	s.w.mu.Unlock()
	h := fnv.New64a()
	fmt.Fprint(h, s.f.seed, s.proc, call, n)
	ctxtime.Sleep(ctx, 1+time.Duration(h.Sum64()%uint64(time.Millisecond)))
	if ctx.Err() == nil {
		s.f.fingerprint.add("%s %s", s.proc, call)
	}
}

func (s simStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := cutStore{s.Store, &s.w.cut}.Lease(key, opts)
	if err != nil {
		return l, err
	}
	return simLease{l, s, key}, nil
}

func (s simStore) List(ctx context.Context, prefix string) (map[string]string, error) {
	s.delay(ctx, prefix, "list")
	if d := time.Duration(s.w.slowLists.Load()); d > 0 {
		s.w.mu.Lock()
		slow := s.w.rng.IntN(2) == 0
		s.w.mu.Unlock()
		if !slow {
			d = 0
		}
		ctxtime.Sleep(ctx, d)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.Store.List(ctx, prefix)
}

func (s simStore) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	s.delay(ctx, key, "get")
	data, v, err := s.Store.Get(ctx, key, known)
	if err == nil && data != nil && s.f.parts != nil && key == assignmentKey(simGroup) && !s.f.parts.has(v) {
		return nil, "", fmt.Errorf("%w (sim: %s)", driver.Corruptf("the head item at version %q names parts that are not stored: a head put back (a restore) after a later write deleted its parts", v), key)
	}
	return data, v, err
}

func (s simStore) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	s.delay(ctx, key, "put")
	if key == assignmentKey(simGroup) {
		if a, err := decodeAssignment(data); err == nil {
			defer s.f.o.Wrote(a.Gen, a.FenceGen) // when it returns: a lost answer's write may land until then
		}
	}
	if s.f.parts == nil || key != assignmentKey(simGroup) {
		return s.Store.Put(ctx, key, data, version)
	}
	s.f.parts.add(digest(data))
	v, err := s.Store.Put(ctx, key, data, version)
	if err == nil && version != v {
		s.f.parts.remove(version)
	}
	return v, err
}

// simLease is a lease of a worker's simStore: its calls take their
// latency; the liveness lease's next successful renewal, while the worker's hide is
// set, is hidden: the record is put back as it was before it, as by a
// restore of the version the assigner's listings have counted, and the
// worker's calls hang from then on, so that it stops only at its renew
// deadline, counted from that renewal's sending.
type simLease struct {
	lease.Lease
	s   simStore
	key string
}

func (l simLease) before(ctx context.Context, op string) error {
	l.s.delay(ctx, l.key, op)
	return ctx.Err()
}

func (l simLease) Acquire(ctx context.Context) (lease.Term, error) {
	if err := l.before(ctx, "acquire"); err != nil {
		return lease.Term{}, err
	}
	return l.Lease.Acquire(ctx)
}

func (l simLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := l.before(ctx, "renew"); err != nil {
		return lease.Term{}, err
	}
	before, _ := l.s.f.store.Bytes(l.key)
	nt, err := l.Lease.Renew(ctx, t)
	if err == nil && l.key == memberKey(simGroup, t.Holder) && l.s.w.hide.CompareAndSwap(true, false) {
		l.s.f.store.Put(l.key, before)
		l.s.f.store.Hang(l.s.proc)
	}
	return nt, err
}

func (l simLease) Release(ctx context.Context, t lease.Term) error {
	if err := l.before(ctx, "release"); err != nil {
		return err
	}
	return l.Lease.Release(ctx, t)
}

func (l simLease) Observe(ctx context.Context) (lease.Record, error) {
	l.s.delay(ctx, l.key, "observe")
	if err := ctx.Err(); err != nil {
		return lease.Record{}, err
	}
	return l.Lease.Observe(ctx)
}

func (l simLease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l simLease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

// cutStore is a worker's Store whose assigner lease's calls hang while
// cut is set, each until its CallTimeout, its other calls going on: a
// fault that ends a worker's assigner term by its renew deadline while its
// liveness renews.
type cutStore struct {
	Store
	cut *atomic.Bool
}

func (s cutStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Store.Lease(key, opts)
	if err != nil || key != assignerKey(simGroup) {
		return l, err
	}
	return cutLease{l, s.cut}, nil
}

type cutLease struct {
	lease.Lease
	cut *atomic.Bool
}

func (l cutLease) hang(ctx context.Context) error {
	if !l.cut.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.Options().CallTimeout)
	defer cancel()
	<-ctx.Done()
	return fmt.Errorf("%w: sim: the assigner lease's calls hang", lease.ErrUnavailable)
}

func (l cutLease) Acquire(ctx context.Context) (lease.Term, error) {
	if err := l.hang(ctx); err != nil {
		return lease.Term{}, err
	}
	return l.Lease.Acquire(ctx)
}

func (l cutLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := l.hang(ctx); err != nil {
		return lease.Term{}, err
	}
	return l.Lease.Renew(ctx, t)
}

func (l cutLease) Release(ctx context.Context, t lease.Term) error {
	if err := l.hang(ctx); err != nil {
		return err
	}
	return l.Lease.Release(ctx, t)
}

func (l cutLease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l cutLease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

// partsModel is how DynamoDB keeps an object larger than an item
// (dynamolease.Objects): a head item, whose version names its parts, and
// the parts, written before the head; a Put deletes the parts of the
// version it replaced once its head is written. A head put back by a
// restore names parts that a later Put deleted: reading it fails with
// lease.ErrCorrupt, as dynamolease reports a head read twice at one
// version whose parts are missing, while a read that names the head's
// version as known is answered "unchanged" as ever.
// Memlease's versions are digests of the bytes, so a head restored has the
// version of the write that made it.
type partsModel struct {
	mu   sync.Mutex
	kept map[string]bool // the versions whose parts exist
}

func (p *partsModel) has(v string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kept[v]
}

func (p *partsModel) add(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept[v] = true
}

func (p *partsModel) remove(v string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.kept, v)
}

// digest is memlease's version of data: the MD5 of the bytes.
func digest(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// assigner returns the identity holding the assigner lease.
func (f *fleet) assigner() string {
	b, ok := f.store.Bytes(assignerKey(simGroup))
	if !ok {
		return ""
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Holder
}

// settle waits until the fleet is balanced, and returns how long that
// took and how many shards started meanwhile.
func (f *fleet) settle(what string, since time.Time, startsBefore int) (time.Duration, int) {
	f.t.Helper()
	limit := since.Add(20 * f.ttl)
	for !f.o.Balanced(f.live()) {
		if time.Now().After(limit) {
			f.t.Fatalf("%s: not balanced within 20 TTL: counts %v", what, f.o.Counts(f.live()))
		}
		time.Sleep(f.renew() / 16)
	}
	return time.Since(since), f.o.Starts() - startsBefore
}

// overlapped reports whether the oracle saw a shard start while another
// worker ran it.
func (f *fleet) overlapped() bool {
	overlaps, _, _ := f.o.Violations()
	return overlaps != 0
}

// stopAll stops every worker at once, and waits for them and for the
// Run of those stopped or killed before (a killed one's calls end at their
// timeouts).
func (f *fleet) stopAll() {
	for _, w := range f.workers {
		w.cancel()
	}
	for _, w := range f.gone {
		<-w.done
	}
	for id, w := range f.workers {
		if err := <-w.done; err != nil {
			f.t.Errorf("%s: Run: %v", id, err)
		}
	}
}

// calls returns the reads and writes of ids.
func (f *fleet) calls(ids []string) (reads, writes []int) {
	for _, id := range ids {
		r, w := f.store.Calls(id)
		reads, writes = append(reads, r), append(writes, w)
	}
	return reads, writes
}

// noMinimum marks a change whose moves are not held to the minimum.
const noMinimum = -1

type figures struct {
	what       string
	took       time.Duration
	moves, min int
}

// scenario runs the simulation of n shards over m workers and returns its
// figures; it fails the test on any overlap, any epoch that did not
// increase, and any change that does not end balanced.
func scenario(t *testing.T, n, m int) {
	f := newFleet(t, n)
	var figs []figures
	record := func(what string, change func() int) {
		t.Helper()
		startsBefore := f.o.Starts()
		since := time.Now()
		least := change()
		took, moves := f.settle(what, since, startsBefore)
		figs = append(figs, figures{what, took, moves, least})
		// Steady afterwards: no shard moves in two TTLs.
		before := f.o.Starts()
		time.Sleep(2 * f.ttl)
		if moved := f.o.Starts() - before; moved != 0 {
			t.Errorf("%s: %d shards moved in a steady fleet", what, moved)
		}
	}
	record(fmt.Sprintf("start %d workers", m), func() int {
		for range m {
			f.join()
		}
		return n
	})
	// Requests per worker per renew interval, in a steady fleet.
	ids := f.live()
	boss := f.assigner()
	r0, w0 := f.calls(ids)
	const intervals = 8
	time.Sleep(intervals * f.renew())
	r1, w1 := f.calls(ids)
	var reads, writes float64
	var bossReads, bossWrites int
	for i, id := range ids {
		if id == boss {
			bossReads, bossWrites = r1[i]-r0[i], w1[i]-w0[i]
			continue
		}
		reads += float64(r1[i] - r0[i])
		writes += float64(w1[i] - w0[i])
	}
	others := float64(len(ids) - 1)
	snapshot, _ := f.store.Bytes(assignmentKey(simGroup))
	oldAcks := map[string][]byte{}
	for _, id := range ids {
		oldAcks[id], _ = f.store.Bytes(ackKey(simGroup, id))
	}

	record("join 1", func() int {
		counts := f.o.Counts(f.live())
		f.join()
		return oracle.MinMoves(append(counts, 0), 0)
	})
	leaver := f.live()[len(f.live())/2]
	record("leave 1 (graceful)", func() int {
		var counts []int
		gone := 0
		for _, id := range f.live() {
			if id == leaver {
				gone = f.o.Counts([]string{id})[0]
				continue
			}
			counts = append(counts, f.o.Counts([]string{id})[0])
		}
		f.leave(leaver)
		return oracle.MinMoves(counts, gone)
	})
	crashLoss := func(victim string) int {
		var counts []int
		gone := 0
		for _, id := range f.live() {
			c := f.o.Counts([]string{id})[0]
			if id == victim {
				gone = c
				continue
			}
			counts = append(counts, c)
		}
		return oracle.MinMoves(counts, gone)
	}
	victim := f.live()[1]
	if victim == f.assigner() {
		victim = f.live()[2]
	}
	record("crash 1 (kill -9)", func() int {
		least := crashLoss(victim)
		f.crash(victim)
		return least
	})
	cut := f.live()[3]
	if cut == f.assigner() {
		cut = f.live()[4]
	}
	for _, hang := range []bool{true, false} {
		how := map[bool]string{true: "hang", false: "fail"}[hang]
		record("partition 1 (calls "+how+")", func() int {
			least := crashLoss(cut)
			f.partition(cut, hang)
			return least
		})
		record("heal the partition", func() int {
			counts := f.o.Counts(f.live())
			f.heal(cut)
			return oracle.MinMoves(append(counts, 0), 0)
		})
	}
	record("restore an old assignment", func() int {
		f.store.Put(assignmentKey(simGroup), snapshot)
		return 0
	})
	record("restore every worker's old acknowledgement", func() int {
		for id, b := range oldAcks {
			f.store.Put(ackKey(simGroup, id), b)
		}
		return 0
	})
	record("crash the assigner", func() int {
		boss := f.assigner()
		least := crashLoss(boss)
		f.crash(boss)
		return least
	})
	// A restore across a change of assigner brings back owners that no
	// longer run their shards: the new assigner's fence stops what the old
	// assignment does not give, so the moves are not the fewest.
	var cutBoss string
	record("partition the assigner (calls hang)", func() int {
		cutBoss = f.assigner()
		least := crashLoss(cutBoss)
		f.partition(cutBoss, true)
		return least
	})
	record("heal the assigner's partition", func() int {
		counts := f.o.Counts(f.live())
		f.heal(cutBoss)
		return oracle.MinMoves(append(counts, 0), 0)
	})
	// A restore of the assigner lease's record ends its holder's assigner
	// term while its liveness goes on; the next assigner, finding the
	// holder's liveness term named in the record, frees its shards at once,
	// so that term must have stopped them (session.campaign): it did, and
	// its worker runs them again in its next term.
	record("restore the assigner lease's record", func() int {
		boss := f.assigner()
		snapshot, _ := f.store.Bytes(assignerKey(simGroup))
		time.Sleep(f.renew())
		f.store.Put(assignerKey(simGroup), snapshot)
		for f.assigner() == boss {
			time.Sleep(f.renew() / 16)
		}
		return noMinimum
	})
	// The same through the renew deadline: the assigner lease's calls hang
	// while its holder's liveness renews; its shards stop at that deadline
	// (context.AfterFunc in session.campaign), before the lease can be
	// taken over and the next assigner frees them.
	record("the assigner lease's calls hang (its liveness renews)", func() int {
		boss := f.assigner()
		f.workers[boss].cut.Store(true)
		for f.assigner() == boss {
			time.Sleep(f.renew() / 16)
		}
		f.workers[boss].cut.Store(false)
		return noMinimum
	})
	record("restore an old assignment, crash the assigner", func() int {
		f.store.Put(assignmentKey(simGroup), snapshot)
		f.crash(f.assigner())
		return noMinimum
	})
	record("join 1 while the assigner's writes lose their answers and others' fail", func() int {
		counts := f.o.Counts(f.live())
		f.store.LoseResponses(f.assigner(), 3)
		for _, id := range f.live()[:3] {
			f.store.FailNext(id, 2)
		}
		f.join()
		return oracle.MinMoves(append(counts, 0), 0)
	})
	joiners := max(1, m/10)
	record(fmt.Sprintf("join %d at once", joiners), func() int {
		counts := f.o.Counts(f.live())
		for range joiners {
			f.join()
			counts = append(counts, 0)
		}
		return oracle.MinMoves(counts, 0)
	})
	f.stopAll()

	t.Logf("%d shards over %d workers, TTL %v, renew interval %v", n, m, f.ttl, f.renew())
	t.Logf("%-48s %10s %8s %8s", "change", "÷ TTL", "moves", "minimum")
	for _, g := range figs {
		least := "n/a"
		if g.min != noMinimum {
			least = fmt.Sprint(g.min)
		}
		t.Logf("%-48s %10.2f %8d %8s", g.what, g.took.Seconds()/f.ttl.Seconds(), g.moves, least)
	}
	t.Logf("steady state, per renew interval: a worker %.2f reads, %.2f writes; the assigner %.2f reads (listings included), %.2f writes",
		reads/others/intervals, writes/others/intervals, float64(bossReads)/intervals, float64(bossWrites)/intervals)
	overlaps, backwards, first := f.o.Violations()
	t.Logf("oracle: %d starts, %d overlaps, %d epochs not increasing", f.o.Starts(), overlaps, backwards)
	if overlaps != 0 || backwards != 0 {
		t.Errorf("oracle: %d overlaps, %d epochs not increasing; first: %s", overlaps, backwards, first)
	}
	for _, g := range figs {
		if g.min != noMinimum && g.moves > g.min {
			t.Errorf("%s: %d moves, more than the minimum %d", g.what, g.moves, g.min)
		}
	}
}

// TestSimulation runs 100 shards over 10 workers through the scenario;
// LEASEHOLD_SHARD_SIM=large runs the fleet instead, 10,000 shards
// over 1,000 workers (about 30 s), as sim's LEASEHOLD_SIM_SCHEDULES sets
// a larger budget: a size, not a second test that skips.
func TestSimulation(t *testing.T) {
	shards, workers := 100, 10
	if os.Getenv("LEASEHOLD_SHARD_SIM") == "large" {
		shards, workers = 10_000, 1_000
	}
	synctest.Test(t, func(t *testing.T) { scenario(t, shards, workers) })
}

func simLogger() *slog.Logger {
	if os.Getenv("LEASEHOLD_SHARD_SIM_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// TestOracleCatchesEarlyExpiry shows that the oracle can fail: an
// assigner that judges a worker's liveness expired after a little more
// than a renew interval, instead of a TTL, moves a partitioned worker's
// shards while it still runs them (until its renew deadline), and the
// oracle sees two owners.
func TestOracleCatchesEarlyExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 20)
		f.expire = f.renew() * 11 / 10
		for range 4 {
			f.join()
		}
		f.settle("start", time.Now(), 0)
		// Whether a start falls before the renew deadline depends on where
		// the partition falls among the listings and reads: cut workers
		// off in turn until one does.
		for i := 0; i < 100 && !f.overlapped(); i++ {
			cut := f.live()[i%2]
			if cut == f.assigner() {
				cut = f.live()[2]
			}
			f.partition(cut, true)
			time.Sleep(2 * f.ttl)
			f.heal(cut)
			time.Sleep(3 * f.ttl)
		}
		f.stopAll()
		overlaps, _, first := f.o.Violations()
		if overlaps == 0 {
			t.Fatal("the oracle saw no two owners of a shard, although expiry was judged before the partitioned worker's renew deadline")
		}
		t.Logf("as expected: %d starts while another worker ran the shard; first: %s", overlaps, first)
	})
}

// TestShardCountIsFixed: a worker whose Shards differ from its group's gets
// an error naming the field, and the group carries on.
func TestShardCountIsFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 10)
		f.join()
		f.settle("start", time.Now(), 0)
		w, err := New(Config{Store: f.store.Objects("odd"), Group: simGroup, Shards: 11, Identity: "odd", TTL: f.ttl,
			Logger: simLogger(), Run: func(context.Context, Shard) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Run(t.Context())
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "Shards (11)") {
			t.Fatalf("Run with 11 shards in a group of 10: %v; want an error naming Shards", err)
		}
		f.stopAll()
	})
}

// TestStartThroughFailures: a group starts whichever of its first calls
// fail, the fence's write among them.
func TestStartThroughFailures(t *testing.T) {
	for fail := 1; fail <= 8; fail++ {
		t.Run(fmt.Sprint(fail), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 8)
				f.store.FailNext("w0001", fail)
				f.join()
				f.settle("start", time.Now(), 0)
				f.stopAll()
			})
		})
	}
}

// TestCost: a worker makes one write and 1.25 reads per renew interval
// (the assignment, and its acknowledgement every fourth time), however
// many shards, plus two reads of the assigner's lease while it campaigns
// to be the assigner, on every store: also on one whose leases ask their
// followers for six reads per renewal, as Azure's do for a lease's handover.
func TestCost(t *testing.T) {
	for _, tc := range []struct {
		name                string
		shards              int
		campaign            bool
		followerReads       int
		maxReads, wantReads float64
	}{
		{"without campaigning, 10 shards", 10, false, 0, 1.35, 1.25},
		{"without campaigning, 1000 shards", 1000, false, 0, 1.35, 1.25},
		{"campaigning, leases asking six reads", 10, true, 6, 3.5, 3.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, tc.shards)
				f.followerReads = tc.followerReads
				f.candidates = 1
				if tc.campaign {
					f.candidates = 6
				}
				for range 5 {
					f.join()
				}
				f.settle("start", time.Now(), 0)
				time.Sleep(f.ttl)
				ids := slices.DeleteFunc(f.live(), func(id string) bool { return id == f.assigner() })
				r0, w0 := f.calls(ids)
				const intervals = 16
				time.Sleep(intervals * f.renew())
				r1, w1 := f.calls(ids)
				for i, id := range ids {
					reads, writes := float64(r1[i]-r0[i])/intervals, float64(w1[i]-w0[i])/intervals
					if reads > tc.maxReads || writes > 1.1 {
						t.Errorf("%s: %.2f reads and %.2f writes per renew interval; want about %.2f and 1", id, reads, writes, tc.wantReads)
					}
				}
				f.stopAll()
			})
		})
	}
}

// TestSlowAssignerStillJudgesExpiry: an assigner whose every call is slow
// reads only the acknowledgements it has time for in a round, so that its
// listings stay within a renew interval of each other and its count
// towards a crashed worker's expiry is not broken again and again while
// many acknowledgements change (here, rewritten with the same content).
func TestSlowAssignerStillJudgesExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 24)
		f.candidates = 1
		for range 12 {
			f.join()
		}
		f.settle("start", time.Now(), 0)
		f.store.Delay("w0001", f.renew()/8)
		f.crash("w0012")
		since := time.Now()
		for time.Since(since) < 3*f.ttl {
			for _, id := range f.live() { // the same acknowledgements, each a new version
				b, _ := f.store.Bytes(ackKey(simGroup, id))
				if k, err := decodeAck(b); err == nil {
					f.store.Put(ackKey(simGroup, id), k.encode())
				}
			}
			time.Sleep(f.renew() / 4)
		}
		if !f.o.Balanced(f.live()) {
			t.Errorf("3 TTL after a crash, with a slow assigner: not balanced: counts %v", f.o.Counts(f.live()))
		}
		f.stopAll()
	})
}

// phasedFleet starts m workers sharing n shards, the first alone
// campaigning to be the assigner, at random phases of the renew interval,
// and waits until they are balanced.
func phasedFleet(t *testing.T, n, m, candidates int) *fleet {
	f := newFleet(t, n)
	f.candidates = candidates
	for range m {
		f.join()
		time.Sleep(f.phase(f.renew()))
	}
	f.settle("start", time.Now(), 0)
	return f
}

// TestCrashedWorkersShardsStartSoon: the assigner lists again the moment a
// crashed worker's liveness can be judged expired, and the workers read
// the assignment just after it (assignment.Expect), so a crashed worker's
// shards run elsewhere within TTL + a listing interval (the lag of the
// first listing that showed its last renewal) + a tenth of a renew
// interval, from the crash, not TTL + up to a listing interval + a renew
// interval (the next regular read).
func TestCrashedWorkersShardsStartSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := phasedFleet(t, 24, 4, 1)
		bound := f.ttl + f.renew()/3 + f.renew()/10 + f.renew()/20
		f.crashTrials("crash", bound, func(trial int) string { return f.live()[1+trial%3] })
		f.stopAll()
	})
}

// crashTrials crashes victim(trial) 12 times, at random phases of the
// renew interval, waiting each time until the group is balanced again and
// then for a replacement's join, and fails the test when the crashed
// worker's shards ran elsewhere later than bound after the crash, or a
// shard ran on two workers at once.
func (f *fleet) crashTrials(what string, bound time.Duration, victim func(trial int) string) {
	t := f.t
	t.Helper()
	var worst time.Duration
	for trial := range 12 {
		time.Sleep(f.phase(f.renew()))
		since := time.Now()
		f.crash(victim(trial))
		took, _ := f.settle(what, since, f.o.Starts())
		worst = max(worst, took)
		f.join()
		f.settle("replace", time.Now(), f.o.Starts())
	}
	t.Logf("%s → its shards running elsewhere, worst of 12: %.2f TTL (bound %.2f)", what, worst.Seconds()/f.ttl.Seconds(), bound.Seconds()/f.ttl.Seconds())
	if worst > bound {
		t.Errorf("%s: the crashed worker's shards ran elsewhere %v after the crash; want at most %v", what, worst, bound)
	}
	if f.overlapped() {
		t.Error("a shard ran on two workers at once")
	}
}

// TestAssignerCrashShardsStartSoon: the assigner's crash ends its liveness
// term with its assigner term, and the worker that wins the assigner lease
// finds that term named in the lease's record (session.campaign), so it
// frees the crashed worker's shards at once, instead of counting a TTL of
// its own towards its liveness's expiry; the other workers, seeing the
// new assigner, read the assignment at a new term's pace until they have
// acknowledged its fence and read the assignment after it. So the crashed
// assigner's shards run elsewhere within a TTL of the crash (the takeover,
// counted from the last renewal before it) plus a renew interval (the
// fence acknowledged and the assignment after it written and read, at
// eight reads and six listings per renew interval), not the two TTLs and
// more of a new assigner that counts a TTL of its own, or waits for the
// objects a store's probe writes beside the workers' keys to expire.
func TestAssignerCrashShardsStartSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 24)
		for range 4 {
			id := f.join()
			// A probe's object beside the worker's liveness key, as S3's
			// and Cloud Storage's leases write: no member, never renewed.
			f.store.Put(memberKey(simGroup, id)+driver.ProbeSuffix, []byte("probe"))
			time.Sleep(f.phase(f.renew()))
		}
		f.settle("start", time.Now(), 0)
		f.crashTrials("the assigner's crash", f.ttl+f.renew(), func(int) string { return f.assigner() })
		f.stopAll()
	})
}

// TestRestartedWorkerGetsItsShardsBack: a worker killed and started again
// under its identity, within a TTL, finds its earlier term's liveness still
// held and says so (ack.Restarting); the assigner keeps that term's shards
// for it, and gives them back to the new process once its term began:
// no other worker runs them meanwhile, and nothing else moves.
func TestRestartedWorkerGetsItsShardsBack(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates int
		victim     func(*fleet) string
	}{
		{"a worker", 1, func(f *fleet) string { return f.live()[2] }},
		// The assigner's successor frees its liveness term at once (see
		// session.campaign), but keeps its shards for its restarted process
		// as it would those of any worker judged expired.
		{"the assigner", 4, func(f *fleet) string { return f.assigner() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := phasedFleet(t, 24, 4, tc.candidates)
				victim := tc.victim(f)
				mine := f.o.Shards(victim)
				f.crash(victim)
				time.Sleep(f.ttl / 4)
				f.o.Restart(victim)
				f.startProcess(victim, victim+"-restarted")
				starts := f.o.Starts()
				took, moves := f.settle("restart", time.Now(), starts)
				if got := f.o.Shards(victim); !slices.Equal(got, mine) || moves != len(mine) {
					t.Errorf("restarted %s runs shards %v after %d starts; want its own %v, %d starts", victim, got, moves, mine, len(mine))
				}
				t.Logf("restart → its %d shards back in %.2f TTL", len(mine), took.Seconds()/f.ttl.Seconds())
				if f.overlapped() {
					t.Error("a shard ran on two workers at once")
				}
				f.stopAll()
			})
		})
	}
}
