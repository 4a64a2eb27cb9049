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
	o       *oracle.Oracle
	workers map[string]*worker
	// lost counts the shards stopped because a worker's liveness lapsed
	// (shard.Lost): a renewal the store did not answer within the renew
	// deadline, which moves shards that no join or leave asked to move.
	lost atomic.Int64
}

type worker struct {
	cancel context.CancelFunc
	done   chan error
}

func (f *fleet) start(id string) {
	e := f.e
	w, err := shard.New(shard.Config{
		Store: e.clients(id), Group: f.group, Shards: groupShards, Identity: id,
		TTL: e.cfg.TTL, CallTimeout: e.cfg.CallTimeout,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnEvent: func(ev shard.Event) {
			if ev.Kind == shard.Lost {
				f.lost.Add(1)
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
// most one, and returns how many shards started meanwhile.
func (f *fleet) settle(what string, startsBefore int) int {
	f.e.t.Helper()
	ttl := f.e.cfg.TTL
	limit := time.Now().Add(10 * ttl)
	for !f.o.Balanced(f.live()) {
		if time.Now().After(limit) {
			f.e.t.Fatalf("%s: not balanced within 10 TTL (%v): workers %v run %v of %d shards", what, 10*ttl, f.live(), f.o.Counts(f.live()), groupShards)
		}
		time.Sleep(ttl / 20)
	}
	return f.o.Starts() - startsBefore
}

// group runs a group of workers on the store: two start, a third joins,
// one leaves; after each change every shard runs, balanced, having moved
// the fewest shards, and the oracle saw no shard on two workers and no
// epoch that did not increase.
func group(e *env) {
	f := &fleet{e: e, group: e.prefix + "group", o: oracle.New(groupShards), workers: map[string]*worker{}}
	defer func() {
		for _, id := range f.live() {
			f.leave(id)
		}
		overlaps, backwards, first := f.o.Violations()
		e.t.Logf("oracle: %d starts, %d overlaps, %d epochs not increasing", f.o.Starts(), overlaps, backwards)
		if overlaps != 0 || backwards != 0 {
			e.t.Errorf("oracle: %d starts of a shard while another worker ran it, %d epochs not increasing; first: %s", overlaps, backwards, first)
		}
	}()
	f.start("w1")
	f.start("w2")
	if moved := f.settle("start of two workers", 0); moved != groupShards {
		e.t.Errorf("start of two workers: %d starts; want %d, one per shard", moved, groupShards)
	}
	// check holds a change to the fewest moves, unless a worker's
	// liveness lapsed meanwhile (the store too slow for the renew
	// deadline): that moves shards too, safely, as the oracle checks.
	check := func(what string, moved, want int, lostBefore int64) {
		e.t.Helper()
		lost := f.lost.Load() - lostBefore
		e.t.Logf("%s: %d shards moved (fewest: %d); counts %v of %v; %d shards lost to a lapsed liveness", what, moved, want, f.o.Counts(f.live()), f.live(), lost)
		if moved != want && lost == 0 {
			e.t.Errorf("%s: %d shards started; want the fewest balance needs, %d", what, moved, want)
		}
	}
	before, lost := f.o.Starts(), f.lost.Load()
	want := oracle.MinMoves(append(f.o.Counts(f.live()), 0), 0)
	f.start("w3")
	check("join of w3", f.settle("join of w3", before), want, lost)

	before, lost = f.o.Starts(), f.lost.Load()
	counts := f.o.Counts([]string{"w1", "w2", "w3"})
	want = oracle.MinMoves(counts[1:], counts[0])
	f.leave("w1")
	check("leave of w1", f.settle("leave of w1", before), want, lost)
}
