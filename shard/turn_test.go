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

// TestSleepWokenWinsOverDueTimer: a worker woken by a change of assigner
// while its next read is already due (a read, or shards slow to stop,
// took until then) hurries, every time; a select between the two would
// pick at random, and a simulated run would not replay.
func TestSleepWokenWinsOverDueTimer(t *testing.T) {
	s := &session{wake: make(chan struct{}, 1)}
	for i := range 100 {
		s.wake <- struct{}{}
		if !s.sleep(t.Context(), 0) {
			t.Fatalf("try %d: sleep with a wake signalled and its timer due returned not woken", i+1)
		}
	}
}
