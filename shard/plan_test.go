package shard

import (
	"testing"
)

// fakeView is a view given as sets.
type fakeView struct {
	deadTerms map[term]bool
	acked     map[term]uint64
	liveTerms []term
}

func (v fakeView) dead(t term) bool                 { return v.deadTerms[t] }
func (v fakeView) released(t term, gen uint64) bool { return v.acked[t] >= gen }
func (v fakeView) live() []term                     { return v.liveTerms }

// build returns an assignment of len(owners) shards, owners[s] being
// shard s's owner ("" for none), all terms of token 1.
func build(owners ...string) *assignment {
	a := &assignment{Gen: 1, Shards: len(owners), Slots: make([]slot, len(owners))}
	index := map[string]int{}
	for s, id := range owners {
		a.Slots[s] = slot{Owner: -1, Epoch: 1}
		if id == "" {
			continue
		}
		if _, ok := index[id]; !ok {
			index[id] = len(a.Members)
			a.Members = append(a.Members, member{ID: id, Token: 1})
		}
		a.Slots[s].Owner = index[id]
	}
	return a
}

// tally returns each owner's held and releasing shards.
func tally(a *assignment) (held, releasing map[string]int) {
	held, releasing = map[string]int{}, map[string]int{}
	for s := range a.Slots {
		t, ok := a.owner(s)
		switch {
		case !ok:
		case a.Slots[s].Releasing:
			releasing[t.ID]++
		default:
			held[t.ID]++
		}
	}
	return held, releasing
}

func terms(ids ...string) []term {
	var out []term
	for _, id := range ids {
		out = append(out, term{id, 1})
	}
	return out
}

func TestPlanFromNothing(t *testing.T) {
	next, changed := plan(build(make([]string, 10)...), fakeView{liveTerms: terms("a", "b", "c")}, 2)
	held, _ := tally(next)
	if !changed || held["a"] != 4 || held["b"] != 3 || held["c"] != 3 {
		t.Fatalf("changed %t, held %v; want 4, 3, 3", changed, held)
	}
	for s, sl := range next.Slots {
		if sl.Epoch != 2 {
			t.Fatalf("shard %d: epoch %d, want the plan's Gen 2", s, sl.Epoch)
		}
	}
}

func TestPlanJoinReleasesTheFewest(t *testing.T) {
	cur := build("a", "a", "a", "a", "a", "b", "b", "b", "b", "b")
	v := fakeView{liveTerms: terms("a", "b", "c"), acked: map[term]uint64{}}
	next, _ := plan(cur, v, 2)
	held, releasing := tally(next)
	if held["a"] != 4 || held["b"] != 3 || releasing["a"]+releasing["b"] != 3 || held["c"] != 0 {
		t.Fatalf("after a join: held %v, releasing %v; want a 4, b 3 and 3 releasing, none given yet", held, releasing)
	}
	again, changed := plan(next, v, 3)
	if changed {
		t.Fatalf("nothing acknowledged, yet the plan changed: %+v", again)
	}
	v.acked[term{"a", 1}], v.acked[term{"b", 1}] = 2, 2
	final, _ := plan(next, v, 3)
	held, releasing = tally(final)
	if held["a"] != 4 || held["b"] != 3 || held["c"] != 3 || len(releasing) != 0 {
		t.Fatalf("after the acknowledgements: held %v, releasing %v; want 4, 3, 3", held, releasing)
	}
	for s, sl := range final.Slots {
		if tm, _ := final.owner(s); tm.ID == "c" && sl.Epoch != 3 {
			t.Fatalf("shard %d given at Gen 3 has epoch %d", s, sl.Epoch)
		}
	}
}

func TestPlanSteadyIsUnchanged(t *testing.T) {
	cur := build("a", "b", "c", "a", "b", "c", "a")
	if next, changed := plan(cur, fakeView{liveTerms: terms("a", "b", "c")}, 2); changed {
		t.Fatalf("a balanced assignment was changed: %+v", next)
	}
}

func TestPlanRestartedWorkerGetsItsShardsBack(t *testing.T) {
	cur := build("a", "b", "a", "b", "a", "b", "") // b, owning most, gets the 4th
	v := fakeView{deadTerms: map[term]bool{{"a", 1}: true}, liveTerms: []term{{"a", 2}, {"b", 1}}}
	next, _ := plan(cur, v, 2)
	for _, s := range []int{0, 2, 4} {
		if tm, _ := next.owner(s); tm != (term{"a", 2}) {
			t.Fatalf("shard %d went to %v; want a's new term", s, tm)
		}
	}
}

func TestPlanLeaveMovesOnlyTheLeaversShards(t *testing.T) {
	cur := build("a", "b", "c", "a", "b", "c")
	v := fakeView{deadTerms: map[term]bool{{"c", 1}: true}, liveTerms: terms("a", "b")}
	next, _ := plan(cur, v, 2)
	moved := 0
	for s := range cur.Slots {
		was, _ := cur.owner(s)
		now, _ := next.owner(s)
		if was != now {
			moved++
		}
	}
	held, _ := tally(next)
	if moved != 2 || held["a"] != 3 || held["b"] != 3 {
		t.Fatalf("moved %d, held %v; want c's 2 shards moved, 3 each", moved, held)
	}
}

// TestPlanEndsAFence: after a fence comes an assignment that is not one,
// even with the same owners, or shards the fence gives to workers that do
// not run them would never start.
func TestPlanEndsAFence(t *testing.T) {
	cur := build("a", "b", "a", "b")
	cur.Fence = true
	next, changed := plan(cur, fakeView{liveTerms: terms("a", "b")}, 2)
	if !changed || next.Fence {
		t.Fatalf("after a fence: changed %t, fence %t; want a change that is not a fence", changed, next.Fence)
	}
}

// capped returns build(owners...) with the group's cap set to perWorker.
func capped(perWorker int, owners ...string) *assignment {
	a := build(owners...)
	a.MaxPerWorker = perWorker
	return a
}

// checkCap fails t if a gives any term more than its cap, releasing
// shards included, or is not capped as the group is.
func checkCap(t *testing.T, a *assignment, perWorker int) {
	t.Helper()
	if a.MaxPerWorker != perWorker {
		t.Fatalf("the plan's MaxPerWorker is %d, the group's %d", a.MaxPerWorker, perWorker)
	}
	runs := map[term]int{}
	for s := range a.Slots {
		if tm, ok := a.owner(s); ok {
			runs[tm]++
			if runs[tm] > perWorker {
				t.Fatalf("%v owns %d shards (releasing ones included), above the cap %d: %+v", tm, runs[tm], perWorker, a.Slots)
			}
		}
	}
}

// TestPlanCapFewerWorkersThanSlots: 3 slots (a cap of 1) over 2 workers:
// each owns one, the third stays unowned, and the group counts as settled;
// a third worker then takes the free slot and nobody else moves.
func TestPlanCapFewerWorkersThanSlots(t *testing.T) {
	next, _ := plan(capped(1, "", "", ""), fakeView{liveTerms: terms("a", "b")}, 2)
	checkCap(t, next, 1)
	held, _ := tally(next)
	if held["a"] != 1 || held["b"] != 1 || !next.settled(terms("a", "b")) {
		t.Fatalf("held %v, settled %t; want one slot each, settled with the third unowned", held, next.settled(terms("a", "b")))
	}
	joined, _ := plan(next, fakeView{liveTerms: terms("a", "b", "c")}, 3)
	checkCap(t, joined, 1)
	for s := range next.Slots {
		was, ok := next.owner(s)
		now, _ := joined.owner(s)
		if ok && was != now {
			t.Fatalf("slot %d moved from %v to %v on a join with a slot free", s, was, now)
		}
	}
	if held, _ = tally(joined); held["c"] != 1 || !joined.settled(terms("a", "b", "c")) {
		t.Fatalf("after c joined: held %v; want c to own the free slot", held)
	}
}

// TestPlanCapMoreWorkersThanSlots: 2 slots over 3 workers: two own one
// each, the third owns none and waits; the plan then stays as it is.
func TestPlanCapMoreWorkersThanSlots(t *testing.T) {
	v := fakeView{liveTerms: terms("a", "b", "c")}
	next, _ := plan(capped(1, "", ""), v, 2)
	checkCap(t, next, 1)
	held, _ := tally(next)
	if len(held) != 2 || !next.settled(v.liveTerms) {
		t.Fatalf("held %v; want two workers with one slot each", held)
	}
	if again, changed := plan(next, v, 3); changed {
		t.Fatalf("a settled capped group was changed: %+v", again)
	}
}

// TestPlanCapLeaveGoesToTheWaiting: a worker that leaves (or crashes:
// its term dead either way) frees its slot to the worker that waits, and
// the other holder keeps its own.
func TestPlanCapLeaveGoesToTheWaiting(t *testing.T) {
	cur := capped(1, "a", "b")
	for _, what := range []string{"leave", "crash"} {
		t.Run(what, func(t *testing.T) {
			v := fakeView{deadTerms: map[term]bool{{"b", 1}: true}, liveTerms: terms("a", "c")}
			next, _ := plan(cur, v, 2)
			checkCap(t, next, 1)
			if a, _ := next.owner(0); a != (term{"a", 1}) {
				t.Fatalf("slot 0 went to %v; want a to keep it", a)
			}
			if c, _ := next.owner(1); c != (term{"c", 1}) || next.Slots[1].Epoch != 2 {
				t.Fatalf("slot 1 went to %v at epoch %d; want the waiting c, at the plan's Gen 2", c, next.Slots[1].Epoch)
			}
		})
	}
}

// TestPlanCapRestartedWorkerGetsItsSlotBack: a worker that restarts (a
// new term; the earlier one dead) gets its earlier slot back, ahead of a
// worker that waits.
func TestPlanCapRestartedWorkerGetsItsSlotBack(t *testing.T) {
	v := fakeView{deadTerms: map[term]bool{{"b", 1}: true}, liveTerms: []term{{"a", 1}, {"b", 2}, {"c", 1}}}
	next, _ := plan(capped(1, "a", "b"), v, 2)
	checkCap(t, next, 1)
	if b, _ := next.owner(1); b != (term{"b", 2}) {
		t.Fatalf("slot 1 went to %v; want b's new term", b)
	}
}

// TestPlanCapCountsReleasingShards: under a cap of 2, a worker whose
// second shard is still releasing (its function may still run) is given
// no other until it has acknowledged, though it is below its share.
func TestPlanCapCountsReleasingShards(t *testing.T) {
	cur := capped(2, "a", "a", "", "")
	cur.Slots[1].Releasing = true
	cur.Members[0].ReleaseGen = 1
	v := fakeView{liveTerms: terms("a", "b"), acked: map[term]uint64{}}
	next, _ := plan(cur, v, 2)
	checkCap(t, next, 2)
	if held, releasing := tally(next); held["a"] != 1 || releasing["a"] != 1 || held["b"] != 2 {
		t.Fatalf("held %v, releasing %v; want a to keep 1 and release 1, b to take the 2 free", held, releasing)
	}
	v.acked[term{"a", 1}] = 1
	final, _ := plan(next, v, 3)
	checkCap(t, final, 2)
	if held, releasing := tally(final); held["a"] != 2 || held["b"] != 2 || len(releasing) != 0 {
		t.Fatalf("after a acknowledged: held %v, releasing %v; want 2 each", held, releasing)
	}
}
