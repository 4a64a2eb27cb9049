package shard

// Red team 13, fixed (the assigner now writes nothing at the bound:
// atBound): Gens kept at the bound (maxToken, 1cf2ef6's gensOf
// clamp and raise's "keeping this term's Gens") make epochs go backward
// at the next change of assigner. Every term at the bound takes the same
// high half, maxToken, and its fence's low half is 30 fresh random bits
// (fence): half the time below the low half the previous term at the
// bound reached. A restarted fleet (a deploy: every process new, nothing
// in genSeen) starts its shards at the new fence's epochs, below the
// epochs the same shards ran with before (rule 12: epochs strictly
// increase). Before 1cf2ef6 the group halted there instead (liveness);
// the clamp traded that for a safety failure. The tests run with the
// package's (no build tag since 7323448); alone:
//
//	go test ./shard -run TestRedTeam13

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// rt13Deploys runs a settled group of three, applies edit to the group's
// records (a person, a tool, a stray record), waits 6 TTL, then restarts
// the whole fleet rounds times (every worker leaves, new processes under
// the same identities start), and returns the oracle's violations.
func rt13Deploys(t *testing.T, seed uint64, edit func(f *fleet), rounds int) (overlaps, backwards int, first string) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 0)
		f.seed = seed // the fence's random low halves of the processes started from here
		edit(f)
		time.Sleep(6 * f.ttl)
		t.Logf("edited: assigner %s gens %q, failed %v, counts %v", f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation), rt12Failed(f), f.o.Counts(f.live()))
		for r := range rounds {
			for _, id := range f.ids() {
				f.leave(id)
			}
			for _, id := range []string{"w0001", "w0002", "w0003"} {
				f.start(id)
			}
			time.Sleep(6 * f.ttl)
			t.Logf("deploy %d: assigner %s gens %q, failed %v, counts %v", r, f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation), rt12Failed(f), f.o.Counts(f.live()))
		}
		for id := range rt12Failed(f) {
			f.workers[id].live = false
		}
		f.stopAllTolerant()
		overlaps, backwards, first = f.o.Violations()
	})
	return
}

func rt13Check(t *testing.T, edit func(f *fleet)) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			o, b, first := rt13Deploys(t, seed, edit, 3)
			if o != 0 || b != 0 {
				t.Errorf("%d overlaps, %d epochs not increasing; first: %s", o, b, first)
			}
		})
	}
}

// TestRedTeam13BoundEpochsBackward (rule 12, epochs): shard/gens edited
// to 2147483647 (the value TestRedTeam12GensAnnotationHaltsGroup now
// passes with, checked only within 8 TTL of one assigner), then three
// deploys: shards start at epochs below those they ran with.
func TestRedTeam13BoundEpochsBackward(t *testing.T) {
	rt13Check(t, func(f *fleet) { rt12EditAssigner(f, "2147483647") })
}

// TestRedTeam13BelowBoundEpochsBackward (rule 12, epochs): shard/gens
// 2147483646, a value TestRedTeam12GensAnnotationOddValues says the group
// goes on with: the next term takes the bound, and the deploys after it
// go backward as above.
func TestRedTeam13BelowBoundEpochsBackward(t *testing.T) {
	rt13Check(t, func(f *fleet) { rt12EditAssigner(f, "2147483646") })
}

// TestRedTeam13StrayAckEpochsBackward (rule 12, epochs): no lease record
// touched: one stray acknowledgement (an identity with no liveness
// record, a copy from another group or a tool's write; 1cf2ef6 counts an
// unvouched acknowledgement's Gens, a.unvouched) with Seen of high half
// 2^31-2. The assigner ends its term (raise), the next takes the bound,
// and the deploys after go backward as above. At 62cd8d9 (before the
// unvouched Gens were counted) the stray acknowledgement is ignored, and
// this test passes (shard/gens 2, 3, 4 across the deploys).
func TestRedTeam13StrayAckEpochsBackward(t *testing.T) {
	rt13Check(t, func(f *fleet) {
		k := f.ackOf(f.live()[1])
		k.Seen = (maxToken - 1) << 32
		if _, err := decodeAck(k.encode()); err != nil {
			f.t.Fatal(err)
		}
		f.store.Put(ackKey(simGroup, "ghost"), k.encode())
	})
}
