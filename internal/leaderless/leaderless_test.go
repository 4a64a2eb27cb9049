package leaderless

import (
	"testing"
	"time"
)

func TestAcross(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	from, to := at(10), at(20)
	for _, tc := range []struct {
		name string
		ivs  []Interval
		want Window
	}{
		{"nobody", nil, Window{Leaderless: 10 * time.Second}},
		{"one term across it, still led", []Interval{{Start: at(1)}}, Window{Terms: 1}},
		{"one term across it, ended after", []Interval{{at(1), at(30)}}, Window{Terms: 1}},
		{"before and after only", []Interval{{at(1), at(5)}, {at(25), at(30)}}, Window{Leaderless: 10 * time.Second}},
		{"a gap inside", []Interval{{at(2), at(12)}, {at(15), at(16)}, {at(18), at(40)}}, Window{5 * time.Second, 3, 2}},
		{"overlapping terms, unsorted", []Interval{{at(14), at(19)}, {at(5), at(15)}}, Window{time.Second, 2, 1}},
		{"a takeover at once", []Interval{{at(5), at(15)}, {at(15), at(25)}}, Window{0, 2, 1}},
		{"one ending at from, one starting at to", []Interval{{at(5), at(10)}, {at(20), at(25)}}, Window{Leaderless: 10 * time.Second}},
		{"a term inside a longer one", []Interval{{at(5), at(25)}, {at(12), at(14)}}, Window{0, 2, 1}},
	} {
		if got := Across(tc.ivs, from, to); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
