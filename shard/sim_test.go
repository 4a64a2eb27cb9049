package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/shard/internal/oracle"
)

// fleet is a group of simulated workers on one memlease store.
type fleet struct {
	t       *testing.T
	store   *memlease.Store
	o       *oracle.Oracle
	n       int
	ttl     time.Duration
	expire  time.Duration
	workers map[string]*simWorker
	next    int
	// candidates, if set, is how many of the first workers campaign to be
	// the assigner; the others set NoAssigner.
	candidates int
	// followerReads, if set, is how many reads per renewal the store's
	// leases ask of their followers (lease.FollowerReader), as Azure's
	// ask for six.
	followerReads int
	crashed       []*simWorker // whose Run has yet to return
}

type simWorker struct {
	cancel context.CancelFunc
	done   chan error
	live   bool // counts for balance
	// cut, while set, hangs the calls of the worker's assigner lease, and
	// only those (see cutStore).
	cut *atomic.Bool
}

const simGroup = "sim"

func newFleet(t *testing.T, n int) *fleet {
	return &fleet{t: t, store: memlease.NewStore(), o: oracle.New(n), n: n, ttl: 15 * time.Second, workers: map[string]*simWorker{}}
}

func (f *fleet) renew() time.Duration { return f.ttl * 3 / 8 }

// drain is how long a shard's function takes to stop once its context is
// cancelled: within the TTL's margin over RenewInterval + RenewDeadline
// (1/16 of it), which is what the runner asks of a task.
func (f *fleet) drain() time.Duration { return f.renew() / 10 }

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
	var store Store = f.store.Objects(proc)
	if f.followerReads > 0 {
		store = askingStore{Objects: f.store.Objects(proc), judge: lease.JudgedByContender, shows: true, reads: f.followerReads}
	}
	cut := new(atomic.Bool)
	store = cutStore{store, cut}
	w, err := New(Config{
		Store: store, Group: simGroup, Shards: f.n, Identity: id, TTL: f.ttl,
		NoAssigner:  f.candidates > 0 && f.next > f.candidates,
		Logger:      simLogger().With("w", id),
		expireAfter: f.expire,
		Run: func(ctx context.Context, s Shard) error {
			f.o.Start(id, s.Index, s.Epoch)
			<-ctx.Done()
			if !f.o.Crashed(id) {
				time.Sleep(f.drain()) // the work takes a while to stop
			}
			f.o.End(id, s.Index)
			return nil
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.t.Context())
	sw := &simWorker{cancel: cancel, done: make(chan error, 1), live: true, cut: cut}
	f.workers[id] = sw
	go func() { sw.done <- w.Run(ctx) }()
}

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

// leave stops a worker as SIGTERM would.
func (f *fleet) leave(id string) {
	w := f.workers[id]
	w.live = false
	w.cancel()
	if err := <-w.done; err != nil {
		f.t.Fatalf("%s: Run: %v", id, err)
	}
	delete(f.workers, id)
}

// crash stops a worker as kill -9 would: its calls never reach the store
// again, and its shard functions end at once.
func (f *fleet) crash(id string) {
	f.store.Hang(id)
	f.o.Crash(id)
	w := f.workers[id]
	w.live = false
	w.cancel()
	f.crashed = append(f.crashed, w)
	delete(f.workers, id)
}

// partition cuts a worker off the store: its calls hang, or fail at once.
func (f *fleet) partition(id string, hang bool) {
	if hang {
		f.store.Hang(id)
	} else {
		f.store.Partition(id)
	}
	f.workers[id].live = false
}

func (f *fleet) heal(id string) {
	f.store.Heal(id)
	f.workers[id].live = true
}

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
// crashed ones' Run to return (their calls end at their timeouts).
func (f *fleet) stopAll() {
	for _, w := range f.workers {
		w.cancel()
	}
	for _, w := range f.crashed {
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
		time.Sleep(time.Duration(rand.Int64N(int64(f.renew()))))
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
		time.Sleep(time.Duration(rand.Int64N(int64(f.renew()))))
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
			time.Sleep(time.Duration(rand.Int64N(int64(f.renew()))))
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
