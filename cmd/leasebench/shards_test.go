package main

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
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
		name          string
		self          string
		owners        []string
		live          map[string]bool
		take, release bool
	}{
		{"free and under its share", "a", []string{"", "", "b", "b"}, live("a", "b"), true, false},
		{"a dead owner's shard is free", "a", []string{"c", "c", "b", "b"}, live("a", "b"), true, false},
		{"over its ceiling", "a", []string{"a", "a", "a", "b"}, live("a", "b"), false, true},
		{"at its share", "a", []string{"a", "a", "b", "b"}, live("a", "b"), false, false},
		{"a newcomer under the floor, nothing free", "a", []string{"a", "a", "b", "b"}, live("a", "b", "c"), false, true},
		{"under the floor, nothing free: wait", "c", []string{"a", "a", "b", "b"}, live("a", "b", "c"), false, false},
		{"at the floor, free, a newcomer under it: leave it", "a", []string{"a", "", "b", "b", "b"}, live("a", "b", "c"), false, false},
		{"at the floor, free, nobody under it: take", "a", []string{"a", "", "b", "b", "c"}, live("a", "b", "c"), true, false},
	} {
		take, release := kclStep(c.self, c.owners, c.live)
		if take != c.take || release != c.release {
			t.Errorf("%s: kclStep = take %v, release %v; want %v, %v", c.name, take, release, c.take, c.release)
		}
	}
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
