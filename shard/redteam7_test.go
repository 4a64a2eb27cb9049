package shard

// Red team 7, against commit 24660d0 (the fence's Gen has a random low
// half; allAcknowledged counts only an acknowledgement that names the
// fence's Gen; a failed vouch before the fence counts as a failed read):
// what held, and the status of fenced shards, which it found wrong and
// the assignment's FenceGen mends. The halt it found, older, is in
// redteam7_open_test.go.

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// rt7Source is a rand.Source whose draws can be forced to the top or the
// bottom of the range of random32's bits (the high 32 of Uint64), from
// the moment mode is set: the fence's low half is random32()>>2.
type rt7Source struct {
	src  rand.Source
	mode atomic.Int32 // 0 as drawn, 1 high 32 bits all ones, 2 high 32 bits zero
}

func (s *rt7Source) Uint64() uint64 {
	v := s.src.Uint64()
	switch s.mode.Load() {
	case 1:
		return v | 0xFFFFFFFF<<32
	case 2:
		return v & (1<<32 - 1)
	}
	return v
}

// rt7Fleet is rt6Fleet with a forcible Rand per process (srcs[id]).
func rt7Fleet(t *testing.T, n, m, candidates int, fa *rt5Faults, ob *rt6Obs) (*fleet, map[string]*rt7Source) {
	f := newFleet(t, n)
	f.candidates = candidates
	srcs := map[string]*rt7Source{}
	f.source = func(id string) rand.Source {
		if s, ok := srcs[id]; ok {
			return s
		}
		return nil
	}
	for range m {
		f.next++
		id := idOf(f.next)
		srcs[id] = &rt7Source{src: rand.NewPCG(f.seed, 1<<32|uint64(f.next))}
		f.rt6StartProcess(id, id, fa, ob)
	}
	f.settle("start", time.Now(), 0)
	return f, srcs
}

// rt7Assignment decodes the stored assignment (nil if none).
func rt7Assignment(t *testing.T, f *fleet) *assignment {
	t.Helper()
	b, ok := f.store.Bytes(assignmentKey(simGroup))
	if !ok {
		return nil
	}
	a, err := decodeAssignment(b)
	if err != nil {
		return nil
	}
	return a
}

// rt7WaitFenceAbove waits up to 10 TTL for a fence with a Gen above gen to
// be stored, or a later write of its term (which names it: FenceGen), and
// returns the fence as that write names it.
func rt7WaitFenceAbove(t *testing.T, f *fleet, gen uint64) *assignment {
	t.Helper()
	for limit := time.Now().Add(10 * f.ttl); ; time.Sleep(f.renew() / 128) {
		// The fence itself, or a later write of its term, which names it
		// (FenceGen): a poll may come only after the plan that follows it.
		if a := rt7Assignment(t, f); a != nil && a.FenceGen > gen {
			fence := *a
			fence.Gen, fence.Fence = a.FenceGen, true
			return &fence
		}
		if time.Now().After(limit) {
			f.stopAll() // so that the bubble's goroutines end before the test does
			t.Fatalf("no fence above %#x within 10 TTL", gen)
		}
	}
}

// TestRedTeam7StatusFencedEpochs: ReadStatus marks Fenced the shards whose
// epoch is an assigner's fence Gen (fenceEpoch: low half 0), and the CLI
// warns that their commands may run under an earlier, lower
// LEASEHOLD_TOKEN. Since 24660d0 a fence's Gen has a random low half:
// after an assigner change, the shards kept through the fence carry the
// fence's Gen as their epoch, their commands still run under the earlier
// epoch, and ReadStatus did not say so; the assignment now names its
// term's fence (FenceGen).
func TestRedTeam7StatusFencedEpochs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 9, 3, 3)
		before := rt7Assignment(t, f)
		boss := f.assigner()
		f.crash(boss)
		fence := rt7WaitFenceAbove(t, f, before.Gen)
		f.settle("assigner change", time.Now(), f.o.Starts())
		st, err := ReadStatus(t.Context(), f.store.Objects("status"), simGroup, lease.Options{Identity: "status"})
		if err != nil {
			t.Fatal(err)
		}
		var want, got []int
		for _, m := range st.Members {
			for _, sh := range m.Shards {
				if sh.Epoch == fence.Gen {
					want = append(want, sh.Index)
				}
			}
			got = append(got, m.Fenced...)
		}
		slices.Sort(want)
		slices.Sort(got)
		t.Logf("fence gen %#x (low half %#x); shards at the fence's epoch %v; Fenced %v", fence.Gen, fence.Gen&(1<<32-1), want, got)
		if len(want) == 0 {
			t.Skip("no shard kept through the fence")
		}
		if !slices.Equal(want, got) {
			t.Errorf("shards %v run since before the fence under earlier epochs, but ReadStatus marks %v Fenced (fenceEpoch takes only a low half of 0 for a fence)", want, got)
		}
		f.stopAll()
	})
}

// TestRedTeam7FenceDisturbed: right after a new assigner's fence is
// stored, while the workers acknowledge it, the assignment is deleted
// (reconcile: rewrite at nextGen), put back as the previous assigner's
// (a restore: rewrite), made unreadable (unreadable: a fence at nextGen),
// or the new assigner's next writes lose their answers. An acknowledgement
// now counts only if it names the current Gen exactly: any sequence in
// which a worker's acknowledgement names another Gen of this term and the
// worker will not apply the current one halts the group.
func TestRedTeam7FenceDisturbed(t *testing.T) {
	for _, mode := range []string{"control", "delete", "restore", "corrupt", "lose1", "lose2", "lose3", "delete twice", "corrupt then delete", "early1", "early2", "early3", "early4", "delay"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := settledFleet(t, 9, 4, 2)
				prev, _ := f.store.Bytes(assignmentKey(simGroup))
				before := rt7Assignment(t, f)
				boss := f.assigner()
				next := "w0001"
				if boss == next {
					next = "w0002"
				}
				if len(mode) == 6 && mode[:5] == "early" || mode == "delay" {
					// The fence's own write loses its answer (or lands late):
					// from the crash on, the next assigner's next writes.
					if mode == "delay" {
						f.store.Delay(next, f.renew()/8)
					} else {
						f.store.LoseResponses(next, int(mode[5]-'0'))
					}
					f.crash(boss)
					if mode == "delay" {
						time.Sleep(2 * f.ttl)
						f.store.Delay(next, 0)
					}
					fence := rt7WaitFenceAbove(t, f, before.Gen)
					t.Logf("fence %#x", fence.Gen)
				} else if len(mode) == 5 && mode[:4] == "lose" {
					f.crash(boss)
					fence := rt7WaitFenceAbove(t, f, before.Gen)
					f.store.LoseResponses(next, int(mode[4]-'0'))
					t.Logf("fence %#x", fence.Gen)
				} else {
					f.crash(boss)
					fence := rt7WaitFenceAbove(t, f, before.Gen)
					t.Logf("fence %#x", fence.Gen)
					switch mode {
					case "delete":
						f.store.Delete(assignmentKey(simGroup))
					case "restore":
						f.store.Put(assignmentKey(simGroup), prev)
					case "corrupt":
						f.store.Put(assignmentKey(simGroup), []byte("not an assignment"))
					case "delete twice":
						f.store.Delete(assignmentKey(simGroup))
						time.Sleep(f.renew() / 6)
						f.store.Delete(assignmentKey(simGroup))
					case "corrupt then delete":
						f.store.Put(assignmentKey(simGroup), []byte("not an assignment"))
						time.Sleep(f.renew() / 6)
						f.store.Delete(assignmentKey(simGroup))
					}
				}
				limit := time.Now().Add(10 * f.ttl)
				for !f.o.Balanced(f.live()) && time.Now().Before(limit) {
					time.Sleep(f.renew() / 8)
				}
				if !f.o.Balanced(f.live()) {
					a := rt7Assignment(t, f)
					for _, id := range f.ids() {
						if b, ok := f.store.Bytes(ackKey(simGroup, id)); ok {
							k, _ := decodeAck(b)
							t.Logf("%s ack applied %#x seen %#x", id, k.Applied, k.Seen)
						}
					}
					t.Errorf("HOLE (halt): not balanced within 10 TTL: counts %v; assignment %+v", f.o.Counts(f.live()), a)
				}
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}

// TestRedTeam7LowHalfAtTheTop: an assigner whose fence's low half is the
// largest random32>>2 gives (2^30-1), its Gens counting on from it over
// several plans; then the next assigner's fence has a low half of 0. Gens
// and epochs must go on increasing: the next assigner's high half is
// above. And the same the other way round (low, then high).
func TestRedTeam7LowHalfAtTheTop(t *testing.T) {
	for _, order := range [][2]int32{{1, 2}, {2, 1}, {1, 1}} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa, ob := newRT5Faults(), &rt6Obs{err: map[string]error{}}
				f, srcs := rt7Fleet(t, 9, 4, 3, fa, ob)
				boss := f.assigner()
				for _, id := range []string{"w0001", "w0002", "w0003"} {
					srcs[id].mode.Store(order[0])
				}
				before := rt7Assignment(t, f)
				f.crash(boss)
				fence := rt7WaitFenceAbove(t, f, before.Gen)
				for _, id := range []string{"w0001", "w0002", "w0003"} {
					srcs[id].mode.Store(order[1])
				}
				srcs[f.assigner()].mode.Store(0)
				f.settle("second assigner", time.Now(), f.o.Starts())
				t.Logf("second assigner %s fence %#x", f.assigner(), fence.Gen)
				// Gens count on: a worker leaves and one joins.
				f.leave("w0004")
				f.settle("leave", time.Now(), f.o.Starts())
				mid := rt7Assignment(t, f)
				t.Logf("after the leave gen %#x", mid.Gen)
				cur := f.assigner()
				f.crash(cur)
				fence2 := rt7WaitFenceAbove(t, f, mid.Gen)
				t.Logf("third assigner %s fence %#x", f.assigner(), fence2.Gen)
				f.settle("third assigner", time.Now(), f.o.Starts())
				last := rt7Assignment(t, f)
				if !(fence.Gen > before.Gen && mid.Gen > fence.Gen && fence2.Gen > mid.Gen && last.Gen >= fence2.Gen) {
					t.Errorf("HOLE (gens): %#x, %#x, %#x, %#x, %#x do not increase", before.Gen, fence.Gen, mid.Gen, fence2.Gen, last.Gen)
				}
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}
