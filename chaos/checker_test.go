package chaos

import (
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
