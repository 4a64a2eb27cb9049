package shard

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// slotFleet starts m workers, apart, over n slots (MaxPerWorker 1), and
// waits until they are balanced: min(n, m) of them hold one slot each.
func slotFleet(t *testing.T, n, m int) *fleet {
	f := newFleet(t, n)
	f.limitPerWorker(1)
	for range m {
		f.join()
		time.Sleep(f.phase(f.renew()))
	}
	f.settle("start", time.Now(), 0)
	return f
}

// holders returns the live workers that run a slot, and those that wait.
func (f *fleet) holders() (holding, waiting []string) {
	for _, id := range f.live() {
		if len(f.o.Shards(id)) > 0 {
			holding = append(holding, id)
		} else {
			waiting = append(waiting, id)
		}
	}
	return holding, waiting
}

// TestSlotsThreeWorkersTwoSlots: 3 workers over 2 slots (leasehold run
// --holders 2 on three instances): two hold a slot each, the third waits;
// a holder that crashes (kill -9), the assigner among them, has its slot
// taken by the worker that waited within TTL + a renew interval of the
// crash (under the 1.5 TTL), and one that leaves (SIGTERM) within
// a renew interval. No worker ever runs two slots (the oracle's cap), and
// no slot runs on two workers, so never more than two run at once.
func TestSlotsThreeWorkersTwoSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := slotFleet(t, 2, 3)
		if holding, waiting := f.holders(); len(holding) != 2 || len(waiting) != 1 {
			t.Fatalf("3 workers over 2 slots: holding %v, waiting %v; want 2 and 1", holding, waiting)
		}
		var waiter string
		bosses := 0
		f.crashTrials("a holder's crash", f.ttl+f.renew(), func(trial int) string {
			holding, waiting := f.holders()
			waiter = waiting[0]
			if boss := f.assigner(); trial%2 == 0 && slices.Contains(holding, boss) {
				bosses++
				return boss
			}
			for _, id := range holding {
				if id != f.assigner() {
					return id
				}
			}
			return holding[0]
		})
		if bosses == 0 {
			t.Error("no trial crashed the assigner while it held a slot")
		}
		if holding, _ := f.holders(); !slices.Contains(holding, waiter) {
			t.Errorf("after the last crash the waiting %s holds no slot (holding %v)", waiter, holding)
		}
		holding, waiting := f.holders()
		since := time.Now()
		f.leaveLater(holding[0])
		took, _ := f.settle("a holder leaves", since, f.o.Starts())
		if now, _ := f.holders(); !slices.Contains(now, waiting[0]) || took > f.renew() {
			t.Errorf("a holder left: after %v, holding %v; want the waiting %s to hold its slot within a renew interval (%v)", took, now, waiting[0], f.renew())
		}
		t.Logf("a holder leaves → its slot held by the waiting worker after %.2f TTL", took.Seconds()/f.ttl.Seconds())
		f.stopAll()
		if overlaps, backwards, first := f.o.Violations(); overlaps+backwards+f.o.Crowded() != 0 {
			t.Errorf("%d overlaps, %d epochs not increasing, %d starts above the cap; first: %s", overlaps, backwards, f.o.Crowded(), first)
		}
	})
}
