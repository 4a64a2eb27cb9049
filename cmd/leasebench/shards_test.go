package main

import (
	"context"
	"flag"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

func TestTrackerBalanced(t *testing.T) {
	tr := newTracker(5)
	tr.setLive("a", true)
	tr.setLive("b", true)
	for _, s := range []int{0, 1, 2, 3} {
		tr.start("a", s)
	}
	tr.start("b", 4)
	if tr.balanced() {
		t.Fatal("4 and 1 of 5 over 2 workers: balanced")
	}
	tr.end("a", 3)
	if tr.balanced() {
		t.Fatal("shard 3 runs nowhere: balanced")
	}
	tr.start("b", 3)
	if !tr.balanced() {
		t.Fatal("3 and 2 of 5 over 2 workers: not balanced")
	}
	if tr.overlaps != 0 {
		t.Fatalf("overlaps = %d, want 0", tr.overlaps)
	}
	tr.start("a", 4)
	if tr.overlaps != 1 {
		t.Fatalf("a started b's running shard: overlaps = %d, want 1", tr.overlaps)
	}
	tr.drop("a")
	tr.setLive("a", false)
	if tr.balanced() {
		t.Fatal("a's shards dropped, nowhere else: balanced")
	}
	if starts, running := tr.snapshot("b"); starts != 7 || running != 1 {
		t.Fatalf("snapshot(b) = %d starts, %d running; want 7, 1", starts, running)
	}
}

func TestShare(t *testing.T) {
	for _, c := range []struct{ n, m, lo, hi int }{{10, 4, 2, 3}, {1000, 5, 200, 200}, {3, 4, 0, 1}} {
		if lo, hi := share(c.n, c.m); lo != c.lo || hi != c.hi {
			t.Errorf("share(%d, %d) = %d, %d; want %d, %d", c.n, c.m, lo, hi, c.lo, c.hi)
		}
	}
}

func TestMoveCell(t *testing.T) {
	if got, want := moveCell([]int{2, 3}, []int{2, 2}), "2.5 / 2.0"; got != want {
		t.Errorf("moveCell = %q, want %q", got, want)
	}
	if got := moveCell(nil, nil); got != "–" {
		t.Errorf("moveCell(nil) = %q, want –", got)
	}
}

func TestPerWorker(t *testing.T) {
	// Two workers and an assigner counted for a minute at a TTL of 2s:
	// per hour, ×60; at 15s, ×2/15.
	counts := map[string]map[string]int{
		"a":        {"read": 100, "write": 10},
		"b":        {"read": 300, "write": 30},
		"assigner": {"read": 900},
	}
	mean, own := perWorker(counts, "assigner", time.Minute, 2*time.Second)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	if !near(mean["read"], 200*60*2/15.0) || !near(mean["write"], 20*60*2/15.0) {
		t.Errorf("mean = %v, want read %v, write %v", mean, 200*60*2/15.0, 20*60*2/15.0)
	}
	if !near(own["read"], 900*60*2/15.0) {
		t.Errorf("assigner = %v, want read %v", own, 900*60*2/15.0)
	}
	mean, own = perWorker(counts, "", time.Minute, 2*time.Second)
	if own != nil || !near(mean["read"], 1300/3.0*60*2/15.0) {
		t.Errorf("no assigner: mean %v, own %v", mean, own)
	}
}

func TestKCLStep(t *testing.T) {
	live := func(ids ...string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	for _, c := range []struct {
		name    string
		self    string
		owners  []string
		live    map[string]bool
		take    int
		release bool
	}{
		{"free and under its share: takes all it needs at once", "a", []string{"", "", "b", "b"}, live("a", "b"), 2, false},
		{"a dead owner's shards are free", "a", []string{"c", "c", "b", "b"}, live("a", "b"), 2, false},
		{"under its share, fewer free than it needs", "a", []string{"", "b", "b", "b"}, live("a", "b"), 1, false},
		{"over its ceiling", "a", []string{"a", "a", "a", "b"}, live("a", "b"), 0, true},
		{"at its share", "a", []string{"a", "a", "b", "b"}, live("a", "b"), 0, false},
		{"a newcomer under the floor, nothing free: give one up", "a", []string{"a", "a", "b", "b"}, live("a", "b", "c"), 0, true},
		{"under the floor, nothing free: wait", "c", []string{"a", "a", "b", "b"}, live("a", "b", "c"), 0, false},
		{"at the floor, free, a newcomer under it: leave it", "a", []string{"a", "", "b", "b", "b"}, live("a", "b", "c"), 0, false},
		{"at the floor, free, nobody under it: take", "a", []string{"a", "", "b", "b", "c"}, live("a", "b", "c"), 1, false},
	} {
		take, release := kclStep(c.self, c.owners, c.live)
		if take != c.take || release != c.release {
			t.Errorf("%s: kclStep = take %v, release %v; want %v, %v", c.name, take, release, c.take, c.release)
		}
	}
}

func TestGiveUpTurn(t *testing.T) {
	live := map[string]bool{"a": true, "b": true, "c": true}
	// 5 shards over 3: floor 1; a and b own more, c less, d is gone.
	owners := []string{"a", "a", "b", "b", "d"}
	for slot, want := range []string{"a", "b", "a"} {
		for _, w := range []string{"a", "b"} {
			if got := giveUpTurn(w, owners, live, int64(slot)); got != (w == want) {
				t.Errorf("slot %d: giveUpTurn(%s) = %v, want %v", slot, w, got, w == want)
			}
		}
	}
}

// TestKCLJoinOnePerInterval: a worker joining four that run 40 shards
// gets its 8, one per renew interval, as with KCL's one steal per
// interval, not one from each of the others per interval.
func TestKCLJoinOnePerInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, m = 40, 4
		st := memStore(t)
		f := newFleet(st, kclFleet, n)
		defer f.close()
		ctx := t.Context()
		for range m {
			if _, err := f.join(ctx); err != nil {
				t.Fatal(err)
			}
		}
		limit := settleLimit(st.ttl, n, m)
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		if _, err := f.join(ctx); err != nil {
			t.Fatal(err)
		}
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			t.Fatal(err)
		}
		r := runner.DefaultRenewInterval(st.ttl)
		if took := time.Since(began); took < (n/(m+1)-1)*r {
			t.Errorf("8 shards moved in %v, under 7 renew intervals of %v", took, r)
		}
	})
}

// TestKCLBaseline runs the baseline on memlease, in a bubble: three
// workers balance ten shards, one leaves and one crashes, and the last
// one runs them all, no shard ever started while it ran elsewhere.
func TestKCLBaseline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 10
		ttl := 2 * time.Second
		st := &store{name: "mem", ttl: ttl, mem: memlease.NewStore()}
		st.objects = func(_ context.Context, _, _, identity string) (shard.Store, error) {
			return st.mem.Objects(identity), nil
		}
		f := newFleet(st, kclFleet, n)
		defer f.close()
		ctx := t.Context()
		for range 3 {
			if _, err := f.join(ctx); err != nil {
				t.Fatal(err)
			}
		}
		limit := time.Duration(n+10) * ttl
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			t.Fatalf("three workers: %v", err)
		}
		w := f.workers[0]
		f.leave(w)
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			t.Fatalf("after a leave: %v", err)
		}
		f.remove(w)
		v := f.workers[0]
		v.store.dead.Store(true)
		f.tr.setLive(v.id, false)
		f.tr.drop(v.id)
		if err := f.tr.waitBalanced(ctx, limit); err != nil {
			t.Fatalf("after a crash: %v", err)
		}
		if _, running := f.tr.snapshot(f.workers[1].id); running != n {
			t.Fatalf("the last worker runs %d shards, want %d", running, n)
		}
		if f.tr.overlaps != 0 {
			t.Fatalf("%d overlaps", f.tr.overlaps)
		}
	})
}

func TestParseScenarios(t *testing.T) {
	got, err := parseScenarios("steady, assigner")
	if err != nil || len(got) != 2 || !got[scenarioSteady] || !got[scenarioAssigner] {
		t.Errorf("parseScenarios(steady, assigner) = %v, %v", got, err)
	}
	if !steadyOnly(map[string]bool{scenarioSteady: true}) || steadyOnly(got) {
		t.Error("steadyOnly is wrong")
	}
	for _, bad := range []string{"", "steady,crsh"} {
		if _, err := parseScenarios(bad); err == nil || !strings.Contains(err.Error(), "known: steady, join, crash, assigner") {
			t.Errorf("parseScenarios(%q) = %v, want an error listing the scenarios", bad, err)
		}
	}
}

// memStore is leasebench's memory store at a TTL of 2s.
func memStore(t *testing.T) *store {
	t.Helper()
	st, _, err := setupStore(t.Context(), "mem", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBenchShards runs every scenario once on a fleet of package shard's
// workers on memlease, in a bubble: each event is timed and its moves are
// the minimum, the assigner's crash among them, and the steady run
// counts requests and no move.
func TestBenchShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		all, err := parseScenarios(strings.Join(shardScenarioNames, ","))
		if err != nil {
			t.Fatal(err)
		}
		r := benchShards(t.Context(), memStore(t), shardFleet, 12, 3, 1, time.Minute, all)
		if len(r.errs) > 0 || len(r.cutoff) > 0 {
			t.Fatalf("errors %v, cut off %v", r.errs, r.cutoff)
		}
		// 12 shards: 3 for a fourth worker, 3 from it when it leaves, 4
		// from a crashed one of three.
		for e, want := range map[string]int{"join": 3, "leave": 3, scenarioCrash: 4, scenarioAssigner: 4} {
			if len(r.times[e]) != 1 {
				t.Errorf("%s: %d times, want 1", e, len(r.times[e]))
			}
			if !slices.Equal(r.moves[e], []int{want}) || !slices.Equal(r.minimum[e], []int{want}) {
				t.Errorf("%s: moves %v, minimum %v; want %d and %d", e, r.moves[e], r.minimum[e], want, want)
			}
		}
		if r.steadyMoves != 0 || r.steadyFor != time.Minute || r.perWorker["write"] == 0 || r.assigner["write"] == 0 {
			t.Errorf("steady run: %d moves in %v, per worker %v, assigner %v", r.steadyMoves, r.steadyFor, r.perWorker, r.assigner)
		}
		if r.overlaps != 0 {
			t.Errorf("%d overlaps", r.overlaps)
		}
	})
}

// TestBenchShardsSteadyOnly runs only the steady run: requests and moves
// are counted, nothing is timed.
func TestBenchShardsSteadyOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := benchShards(t.Context(), memStore(t), kclFleet, 10, 3, 1, time.Minute, map[string]bool{scenarioSteady: true})
		if len(r.errs) > 0 || len(r.times) > 0 {
			t.Fatalf("errors %v, times %v", r.errs, r.times)
		}
		if r.steadyFor != time.Minute || r.perWorker["read"] == 0 || r.assigner != nil {
			t.Errorf("steady run of %v: per worker %v, assigner %v", r.steadyFor, r.perWorker, r.assigner)
		}
		// Three workers' rounds, one per renew interval of 0.75s, over a
		// minute; on memory none overruns.
		if r.rounds < 3*70 || r.overran != 0 || r.overrunNote() != "" {
			t.Errorf("steady run: %d rounds, %d overran", r.rounds, r.overran)
		}
	})
}

// TestSettleCutOff: a fleet that does not balance within the limit is
// noted as cut off, and shown so.
func TestSettleCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := &shardRun{cutoff: map[string]time.Duration{}, times: map[string][]time.Duration{}, ttl: time.Second}
		f := newFleet(memStore(t), kclFleet, 4)
		if r.settle(t.Context(), f, "join", time.Minute) {
			t.Fatal("a fleet of no workers settled")
		}
		if got, want := r.timeCell("join"), "not balanced in 1m0s"; got != want {
			t.Errorf("timeCell = %q, want %q", got, want)
		}
		r.times["join"] = []time.Duration{time.Second}
		if got, want := r.timeCell("join"), "1.00 / 1.00, then not balanced in 1m0s"; got != want {
			t.Errorf("timeCell = %q, want %q", got, want)
		}
		if len(r.errs) > 0 {
			t.Errorf("a cut-off noted as failed: %v", r.errs)
		}
	})
}

func TestSettleLimit(t *testing.T) {
	// 1,000 shards over 4+1 workers: the baseline moves 200, one per renew
	// interval (0.75s at a TTL of 2s).
	if got, want := settleLimit(2*time.Second, 1000, 4), 20*time.Second+2*201*750*time.Millisecond; got != want {
		t.Errorf("settleLimit = %v, want %v", got, want)
	}
}

// showingLease is a native lease whose renewals show, as Azure's.
type showingLease struct{ lease.Lease }

func (showingLease) Judge() lease.Judge { return lease.JudgedByStore }
func (showingLease) RenewalsShow() bool { return true }
func (showingLease) FollowerReads() int { return 6 }

// TestCrashLeaseKeepsRenewalsShow: wrapping a lease for crashes keeps what
// package shard asks of a native lease (Azure's): that its renewals show,
// and how often its followers read.
func TestCrashLeaseKeepsRenewalsShow(t *testing.T) {
	l, err := memlease.NewStore().Objects("a").Lease("k", lease.Options{Identity: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if !lease.RenewalsShow(&crashLease{Lease: showingLease{l}}) {
		t.Error("a crashLease over a native lease whose renewals show: RenewalsShow false")
	}
	if got := lease.FollowerReads(&crashLease{Lease: showingLease{l}}); got != 6 {
		t.Errorf("a crashLease over a lease read 6 times per renewal: FollowerReads %d", got)
	}
}

func TestOverrunNote(t *testing.T) {
	r := &shardRun{store: "minio", kind: kclFleet, n: 1000, ttl: 2 * time.Second, rounds: 10, overran: 1, roundTime: 10 * time.Second}
	if got := r.overrunNote(); got != "" {
		t.Errorf("1 of 10 rounds overran: %q, want none", got)
	}
	r.overran = 2
	want := "minio KCL-style baseline, 1000 shards: 2 of the 10 rounds of the steady run took longer than the renew interval (750ms; mean 1s): its requests per hour are what the store carried, fewer than the design asks for"
	if got := r.overrunNote(); got != want {
		t.Errorf("overrunNote = %q, want %q", got, want)
	}
	var s roundStats
	s.add(time.Second, 750*time.Millisecond)
	s.add(500*time.Millisecond, 750*time.Millisecond)
	if n, over, total := s.take(); n != 2 || over != 1 || total != 1500*time.Millisecond {
		t.Errorf("take = %d, %d, %v; want 2, 1, 1.5s", n, over, total)
	}
	if n, _, _ := s.take(); n != 0 {
		t.Errorf("take after take = %d rounds, want 0", n)
	}
}

func TestShardMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-trials", "2"}, false},
		{[]string{"-shards", "10"}, true},
		{[]string{"-shards", "", "-shard-baseline", "1000"}, true},
		{[]string{"-shard-baseline", "1000"}, true},
	} {
		fs := flag.NewFlagSet("leasebench", flag.ContinueOnError)
		fs.String("shards", "", "")
		fs.String("shard-baseline", "10,100", "")
		fs.Int("trials", 20, "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := shardMode(fs); got != c.want {
			t.Errorf("shardMode(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// TestBenchShardsStartCutOff: a fleet that does not balance from its start
// is still counted over its steady run, and shown as cut off.
func TestBenchShardsStartCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memStore(t)
		objects := st.objects
		// Every worker's calls hang: nothing ever starts.
		st.objects = func(ctx context.Context, ep, group, id string) (shard.Store, error) {
			s, err := objects(ctx, ep, group, id)
			c := &crashStore{Store: s}
			c.dead.Store(true)
			return c, err
		}
		r := benchShards(t.Context(), st, kclFleet, 10, 2, 1, time.Minute, map[string]bool{scenarioSteady: true, scenarioJoin: true})
		if _, cut := r.cutoff["start"]; !cut || len(r.errs) > 0 {
			t.Fatalf("cut off %v, errors %v; want the start cut off", r.cutoff, r.errs)
		}
		if r.steadyFor != time.Minute || r.perWorker == nil || len(r.times) > 0 {
			t.Errorf("steady run of %v, per worker %v, times %v; want a minute counted and nothing timed", r.steadyFor, r.perWorker, r.times)
		}
	})
}

// TestKCLStartTogether: four baseline workers that start a fleet of 1,000
// shards together balance within a few intervals, none taking every
// shard for seeing itself alone first.
func TestKCLStartTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, _, err := setupStore(t.Context(), "mem", 15*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := benchShards(t.Context(), st, kclFleet, 1000, 4, 0, 0, map[string]bool{scenarioSteady: true})
		if len(r.cutoff) > 0 || len(r.errs) > 0 {
			t.Fatalf("cut off %v, errors %v", r.cutoff, r.errs)
		}
	})
}
