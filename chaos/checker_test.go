package chaos

import (
	"slices"
	"testing"
	"time"
)

const s = int64(time.Second)

var bounds = Bounds{TTL: 2 * time.Second, Retry: 800 * time.Millisecond, Slack: 200 * time.Millisecond}

func TestCheckFinds(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		intervals              []Interval
		faults                 []Fault
		overlaps, tokens, gaps int
	}{
		{
			name: "a clean handover and a takeover within the TTL and a poll",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 10*s + s/2, End: 20 * s, Killed: true},
				{Process: "c2-1", Token: 3, Start: 22*s + s/2, End: 30 * s},
			},
		},
		{
			name: "an overlap",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 9 * s, End: 20 * s},
			},
			overlaps: 1,
		},
		{
			name: "an interval inside another, not next to it in start order",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 30 * s},
				{Process: "c1-1", Token: 2, Start: 5 * s, End: 6 * s},
				{Process: "c2-1", Token: 3, Start: 8 * s, End: 9 * s},
			},
			overlaps: 2,
		},
		{
			name: "touching intervals do not overlap",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 10 * s, End: 20 * s},
			},
		},
		{
			name: "tokens out of time order",
			intervals: []Interval{
				{Process: "c0-1", Token: 2, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 11 * s, End: 20 * s},
				{Process: "c2-1", Token: 1, Start: 21 * s, End: 30 * s},
			},
			tokens: 2,
		},
		{
			name: "a gap beyond TTL + retry + slack",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 13*s + s/10, End: 20 * s},
			},
			gaps: 1,
		},
		{
			name: "the same gap explained by a fault",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 13*s + s/10, End: 20 * s},
			},
			faults: []Fault{{Kind: "latency-all", Target: "all", Start: 9 * s, End: 11 * s}},
		},
		{
			name: "a fault long before the gap explains nothing",
			intervals: []Interval{
				{Process: "c0-1", Token: 1, Start: 1 * s, End: 10 * s},
				{Process: "c1-1", Token: 2, Start: 13*s + s/10, End: 20 * s},
			},
			faults: []Fault{{Kind: "latency-all", Target: "all", Start: 2 * s, End: 5 * s}},
			gaps:   1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.intervals, tc.faults, bounds)
			t.Log(r.Summary(tc.faults))
			if len(r.Overlaps) != tc.overlaps || len(r.TokenErrors) != tc.tokens || len(r.LongGaps) != tc.gaps {
				t.Errorf("Check found %d overlaps, %d token errors, %d long gaps; want %d, %d, %d",
					len(r.Overlaps), len(r.TokenErrors), len(r.LongGaps), tc.overlaps, tc.tokens, tc.gaps)
			}
			if r.OK() != (tc.overlaps+tc.tokens+tc.gaps == 0) {
				t.Errorf("OK() = %t", r.OK())
			}
			if r.Safe() != (tc.overlaps+tc.tokens == 0) {
				t.Errorf("Safe() = %t", r.Safe())
			}
		})
	}
}

func TestCheckWorstGap(t *testing.T) {
	r := Check([]Interval{
		{Process: "a", Token: 1, Start: 0, End: 10 * s},
		{Process: "b", Token: 2, Start: 11 * s, End: 20 * s},
		{Process: "c", Token: 3, Start: 22 * s, End: 30 * s},
	}, nil, bounds)
	if r.Worst.Length != 2*time.Second || r.Worst.From.Process != "b" || r.Worst.To.Process != "c" {
		t.Errorf("worst gap %v from %v to %v, want 2s from b to c", r.Worst.Length, r.Worst.From, r.Worst.To)
	}
	if want := 2.0 / 3.0; r.WorstRatio < want-1e-9 || r.WorstRatio > want+1e-9 {
		t.Errorf("worst ratio %v, want %v", r.WorstRatio, want)
	}
}

func TestAcross(t *testing.T) {
	r := Check([]Interval{
		{Process: "a", Token: 1, Start: 1 * s, End: 10 * s},
		{Process: "b", Token: 2, Start: 12 * s, End: 20 * s},
		{Process: "b", Token: 3, Start: 20 * s, End: 30 * s},
	}, nil, bounds)
	for _, tc := range []struct {
		name     string
		from, to int64
		want     Steadiness
	}{
		{name: "inside one leadership", from: 2 * s, to: 9 * s},
		{name: "up to its last instant", from: 1 * s, to: 10 * s},
		{name: "a gap and a takeover", from: 5 * s, to: 15 * s, want: Steadiness{Changes: 1, Leaderless: 2 * time.Second}},
		{name: "a takeover at once, by the same process", from: 15 * s, to: 25 * s, want: Steadiness{Changes: 1}},
		{name: "before the first leader", from: 0, to: 5 * s, want: Steadiness{Changes: 1, Leaderless: time.Second}},
		{name: "after the last", from: 25 * s, to: 35 * s, want: Steadiness{Leaderless: 5 * time.Second}},
		{name: "nobody leads at all", from: 10 * s, to: 11 * s, want: Steadiness{Leaderless: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Across(tc.from, tc.to)
			if got != tc.want {
				t.Errorf("Across(%ds, %ds) = %+v, want %+v", tc.from/s, tc.to/s, got, tc.want)
			}
			if got.Steady() != (tc.want == Steadiness{}) {
				t.Errorf("Steady() = %t", got.Steady())
			}
		})
	}
}

// shardBounds: TTL 2s, renew interval 0.75s, call timeout 0.4s: a shard
// may run nowhere for 2s + 2s + 0.8s + 0.25s + 0.75s + 2.4s = 8.2s.
var shardBounds = ShardBounds(2*time.Second, 750*time.Millisecond, 400*time.Millisecond)

func TestCheckShardsFinds(t *testing.T) {
	if got, want := shardBounds.TTL+shardBounds.Retry+shardBounds.Slack, 8200*time.Millisecond; got != want {
		t.Fatalf("ShardBounds allow %v without faults, want %v", got, want)
	}
	// Shard 0 moves from w1 to w2 and back to w1; shard 1 stays on w2.
	clean := []Interval{
		{Process: "w1-1", Shard: 0, Token: 1, Start: 1 * s, End: 10 * s},
		{Process: "w2-1", Shard: 0, Token: 5, Start: 11 * s, End: 20 * s},
		{Process: "w1-1", Shard: 0, Token: 9, Start: 21 * s, End: 30 * s},
		{Process: "w2-1", Shard: 1, Token: 1, Start: 1 * s, End: 30 * s},
	}
	with := func(extra ...Interval) []Interval { return append(slices.Clone(clean), extra...) }
	for _, tc := range []struct {
		name                     string
		intervals                []Interval
		faults                   []Fault
		until                    int64
		overlaps, epochs, orphan int
	}{
		{name: "moves without overlap, gap or epoch error", intervals: clean, until: 30 * s},
		{
			name:      "two runs of one shard at once, on two workers",
			intervals: with(Interval{Process: "w3-1", Shard: 1, Token: 7, Start: 12 * s, End: 13 * s}),
			until:     30 * s, overlaps: 1,
		},
		{
			name:      "an epoch that does not increase",
			intervals: with(Interval{Process: "w3-1", Shard: 1, Token: 1, Start: 31 * s, End: 33 * s}),
			until:     33 * s, epochs: 1,
		},
		{
			name:      "a shard nobody runs for longer than the bound, between two runs",
			intervals: with(Interval{Process: "w3-1", Shard: 1, Token: 8, Start: 39 * s, End: 40 * s}),
			until:     40 * s, orphan: 2, // shard 1 from 30s to 39s; shard 0 from 30s to the end
		},
		{
			name:      "the same gaps explained by a partition",
			intervals: with(Interval{Process: "w3-1", Shard: 1, Token: 8, Start: 39 * s, End: 40 * s}),
			faults:    []Fault{{Kind: "partition", Target: "w3", Start: 29 * s, End: 33 * s}},
			until:     40 * s,
		},
		{name: "a shard whose last run ended long before the end", intervals: clean, until: 39 * s, orphan: 2},
		{
			name:      "the same gaps explained by a kill, which adds a TTL to recover",
			intervals: clean, until: 39 * s,
			faults: []Fault{{Kind: "kill", Target: "w1", Start: 31 * s, End: 31 * s}},
		},
		{
			name:      "a shard that never ran",
			intervals: clean[:3],
			until:     30 * s, orphan: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckShards(tc.intervals, 2, tc.faults, shardBounds, tc.until)
			t.Log(r.Summary(tc.faults))
			overlaps, epochs := 0, 0
			for _, sr := range r.Shards {
				overlaps += len(sr.Overlaps)
				epochs += len(sr.TokenErrors)
			}
			if overlaps != tc.overlaps || epochs != tc.epochs || len(r.Orphans) != tc.orphan {
				t.Errorf("CheckShards found %d overlaps, %d epoch errors, %d orphans; want %d, %d, %d",
					overlaps, epochs, len(r.Orphans), tc.overlaps, tc.epochs, tc.orphan)
			}
			if r.OK() != (tc.overlaps+tc.epochs+tc.orphan == 0) {
				t.Errorf("OK() = %t", r.OK())
			}
			if r.Safe() != (tc.overlaps+tc.epochs == 0) {
				t.Errorf("Safe() = %t", r.Safe())
			}
		})
	}
}

// TestCheckSlotsFinds: CheckSlots finds a process that runs two slots at
// once, even when no slot runs twice; one that runs them one after the
// other, or two processes with a slot each, pass.
func TestCheckSlotsFinds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		intervals []Interval
		crowded   int
	}{
		{"a slot each", []Interval{
			{Process: "w1-1", Shard: 0, Token: 1, Start: 1 * s, End: 10 * s},
			{Process: "w2-1", Shard: 1, Token: 1, Start: 1 * s, End: 10 * s},
		}, 0},
		{"one process, one slot after the other", []Interval{
			{Process: "w1-1", Shard: 0, Token: 1, Start: 1 * s, End: 5 * s},
			{Process: "w1-1", Shard: 1, Token: 1, Start: 5 * s, End: 10 * s},
			{Process: "w2-1", Shard: 0, Token: 4, Start: 6 * s, End: 10 * s},
		}, 0},
		{"one process, two slots at once", []Interval{
			{Process: "w1-1", Shard: 0, Token: 1, Start: 1 * s, End: 10 * s},
			{Process: "w1-1", Shard: 1, Token: 1, Start: 4 * s, End: 10 * s},
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckSlots(tc.intervals, 2, nil, shardBounds, 10*s)
			t.Log(r.Summary(nil))
			if len(r.Crowded) != tc.crowded || r.Safe() != (tc.crowded == 0) {
				t.Errorf("CheckSlots found %d processes with two slots at once, Safe() %t; want %d", len(r.Crowded), r.Safe(), tc.crowded)
			}
			if len(r.Crowded) == 0 && !CheckShards(tc.intervals, 2, nil, shardBounds, 10*s).Safe() {
				t.Error("CheckShards finds these unsafe")
			}
		})
	}
}

func TestCheckShardsMoves(t *testing.T) {
	r := CheckShards([]Interval{
		{Process: "w1-1", Shard: 0, Token: 1, Start: 1 * s, End: 2 * s},
		{Process: "w2-1", Shard: 0, Token: 2, Start: 3 * s, End: 4 * s},
		{Process: "w2-1", Shard: 0, Token: 3, Start: 5 * s, End: 6 * s},
		{Process: "w1-1", Shard: 1, Token: 1, Start: 1 * s, End: 6 * s},
	}, 2, nil, shardBounds, 6*s)
	if r.Moves != 1 {
		t.Errorf("%d moves, want 1 (shard 0 from w1 to w2; its restart on w2 is not a move)", r.Moves)
	}
}
