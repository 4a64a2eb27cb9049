package shardtest

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/internal/oracle"
)

// groupShards is N of the group's run: a few per worker.
const groupShards = 6

// fleet is the workers of the group's run, judged by one oracle.
type fleet struct {
	e       *env
	group   string
	shards  int
	o       *oracle.Oracle
	workers map[string]*worker
	// lost counts the shards stopped because a worker's liveness lapsed
	// (shard.Lost): a renewal the store did not answer within the renew
	// deadline, which moves shards that no join or leave asked to move.
	lost atomic.Int64
	// trouble is when a worker last lost shards to a lapsed liveness or
	// failed to renew it: the store too slow for the group, as a loaded
	// machine makes it.
	trouble trouble
}

type worker struct {
	cancel context.CancelFunc
	done   chan error
}

func (f *fleet) start(id string) {
	e := f.e
	w, err := shard.New(shard.Config{
		Store: e.clients(id), Group: f.group, Shards: f.shards, Identity: id,
		TTL: e.cfg.TTL, CallTimeout: e.cfg.CallTimeout,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnEvent: func(ev shard.Event) {
			if ev.Kind == shard.Lost {
				f.lost.Add(1)
				f.trouble.mark()
			}
		},
		OnRenew: func(_ time.Duration, err error) {
			if err != nil {
				f.trouble.mark()
			}
		},
		Run: func(ctx context.Context, s shard.Shard) error {
			f.o.Start(id, s.Index, s.Epoch)
			<-ctx.Done()
			f.o.End(id, s.Index)
			return nil
		},
	})
	if err != nil {
		e.t.Fatalf("shard.New for %s: %v", id, err)
	}
	ctx, cancel := context.WithCancel(e.t.Context())
	sw := &worker{cancel: cancel, done: make(chan error, 1)}
	f.workers[id] = sw
	go func() { sw.done <- w.Run(ctx) }()
}

// leave stops a worker as SIGTERM would.
func (f *fleet) leave(id string) {
	w := f.workers[id]
	delete(f.workers, id)
	w.cancel()
	if err := <-w.done; err != nil {
		f.e.t.Errorf("%s: Run after its context ended: %v; want nil", id, err)
	}
}

func (f *fleet) live() []string {
	out := make([]string, 0, len(f.workers))
	for id := range f.workers {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// settle waits until every shard runs and the workers' counts differ by at
// most one, and returns how many shards started meanwhile. It fails the
// test after 10 TTL in which the store kept up (no worker's renewal failed
// and no liveness lapsed), or after 30 TTL in all: how long a group takes
// to balance on a store that load slows is up to the machine.
func (f *fleet) settle(what string, startsBefore int) int {
	f.e.t.Helper()
	ttl := f.e.cfg.TTL
	began := time.Now()
	for !f.o.Balanced(f.live()) {
		if over, calm := f.trouble.overdue(began, 10*ttl, 30*ttl); over {
			f.e.t.Fatalf("%s: not balanced after %v (TTL %v), %v since a renewal last failed or a liveness lapsed: workers %v run %v of %d shards", what, time.Since(began).Round(time.Millisecond), ttl, time.Since(calm).Round(time.Millisecond), f.live(), f.o.Counts(f.live()), f.shards)
		}
		time.Sleep(ttl / 20)
	}
	return f.o.Starts() - startsBefore
}

// newFleet returns a fleet of no workers yet, in group GROUP of e's
// prefix, of n shards.
func newFleet(e *env, n int) *fleet {
	return &fleet{e: e, group: e.prefix + "group", shards: n, o: oracle.New(n), workers: map[string]*worker{}}
}

// stop stops the workers still running and fails the test for any
// start the oracle saw while another worker ran the shard, or with an
// epoch that did not increase.
func (f *fleet) stop() {
	for _, id := range f.live() {
		f.leave(id)
	}
	overlaps, backwards, first := f.o.Violations()
	f.e.t.Logf("oracle: %d starts, %d overlaps, %d epochs not increasing", f.o.Starts(), overlaps, backwards)
	if overlaps != 0 || backwards != 0 {
		f.e.t.Errorf("oracle: %d starts of a shard while another worker ran it, %d epochs not increasing; first: %s", overlaps, backwards, first)
	}
}

// group runs a group of workers on the store: one starts, a second and a
// third join, one leaves; after each change every shard runs, balanced,
// having moved the fewest shards, and the oracle saw no shard on two
// workers and no epoch that did not increase. The workers start one after
// the other, as on a loaded machine they may anyway: two that start
// together move shards when the second says hello after the first
// assignment, which is no fault.
func group(e *env) {
	f := newFleet(e, groupShards)
	defer f.stop()
	before, lost := f.o.Starts(), f.lost.Load()
	f.start("w1")
	f.check("start of w1", f.settle("start of w1", before), groupShards, lost)
	f.join("w2")
	f.join("w3")

	before, lost = f.o.Starts(), f.lost.Load()
	counts := f.o.Counts([]string{"w1", "w2", "w3"})
	want := oracle.MinMoves(counts[1:], counts[0])
	f.leave("w1")
	f.check("leave of w1", f.settle("leave of w1", before), want, lost)
}

// join starts worker id and checks that the group balances with the
// fewest moves.
func (f *fleet) join(id string) {
	f.e.t.Helper()
	before, lost := f.o.Starts(), f.lost.Load()
	want := oracle.MinMoves(append(f.o.Counts(f.live()), 0), 0)
	f.start(id)
	f.check("join of "+id, f.settle("join of "+id, before), want, lost)
}

// check holds a change to the fewest starts, want, unless a worker's
// liveness lapsed meanwhile (the store too slow for the renew deadline, a
// loaded machine): that moves shards too, safely, as the oracle checks,
// and how many is up to the machine, not the code: a figure for a
// benchmark, not a test.
func (f *fleet) check(what string, moved, want int, lostBefore int64) {
	f.e.t.Helper()
	lost := f.lost.Load() - lostBefore
	f.e.t.Logf("%s: %d shards started (fewest: %d); counts %v of %v; %d shards lost to a lapsed liveness", what, moved, want, f.o.Counts(f.live()), f.live(), lost)
	if moved != want && lost == 0 {
		f.e.t.Errorf("%s: %d shards started; want the fewest balance needs, %d", what, moved, want)
	}
}
