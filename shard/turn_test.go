package shard

import (
	"slices"
	"testing"
)

// TestInTurn: the loops of an assigner's round that stop at a deadline
// (readAcks, bury) visit the identities in order, from where the previous
// round stopped and round again, so that none waits behind the others for
// ever and a simulated run replays.
func TestInTurn(t *testing.T) {
	m := map[string]int{"w3": 0, "w1": 0, "w2": 0, "w5": 0}
	for _, tc := range []struct {
		from string
		want []string
	}{
		{"", []string{"w1", "w2", "w3", "w5"}},
		{"w1", []string{"w1", "w2", "w3", "w5"}},
		{"w3", []string{"w3", "w5", "w1", "w2"}},
		{"w4", []string{"w5", "w1", "w2", "w3"}}, // gone since: the next after it
		{"w9", []string{"w1", "w2", "w3", "w5"}},
	} {
		if got := inTurn(m, tc.from); !slices.Equal(got, tc.want) {
			t.Errorf("inTurn(from %q) = %v; want %v", tc.from, got, tc.want)
		}
	}
}
