package shard

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "run TestRandomFaults with this seed only")
	seedCount = flag.Int("seeds", 100, "how many seeds TestRandomFaults runs")
)

// TestRandomFaults runs fleets through seeded schedules of joins, leaves,
// crashes, partitions (calls that hang or fail), slow calls, failed calls,
// lost answers, restores of earlier assignments, acknowledgements and
// liveness records (of any term), and deletes of the assignment and of
// acknowledgements, then heals everything and waits for balance. The oracle must see no two
// owners of a shard and no epoch that does not increase. A failure names
// its seed: go test ./shard -run TestRandomFaults -seed N.
func TestRandomFaults(t *testing.T) {
	seeds := make([]uint64, 0, *seedCount)
	for i := range *seedCount {
		seeds = append(seeds, uint64(i+1))
	}
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomFaults(t, seed) })
		})
	}
}

func randomFaults(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	f := newFleet(t, 5+rng.IntN(40))
	for range 2 + rng.IntN(6) {
		f.join()
	}
	var snapshots [][]byte
	acks, liveness := map[string][]byte{}, map[string][]byte{}
	cut := map[string]bool{}
	pick := func() string {
		live := f.live()
		if len(live) == 0 {
			return ""
		}
		return live[rng.IntN(len(live))]
	}
	var trace []string
	for range 30 {
		time.Sleep(time.Duration(rng.Int64N(int64(f.ttl))))
		if b, ok := f.store.Bytes(assignmentKey(simGroup)); ok && rng.IntN(3) == 0 {
			snapshots = append(snapshots, b)
		}
		id := pick()
		if b, ok := f.store.Bytes(ackKey(simGroup, id)); ok && id != "" {
			acks[id] = b
		}
		if b, ok := f.store.Bytes(memberKey(simGroup, id)); ok && id != "" && rng.IntN(2) == 0 {
			liveness[id] = b
		}
		var what string
		switch k := rng.IntN(14); {
		case k == 0 || len(f.live()) < 2:
			what = "join " + f.join()
		case k == 1:
			what = "leave " + id
			f.leave(id)
		case k == 2:
			what = "crash " + id
			f.crash(id)
		case k == 3 || k == 4:
			hang := k == 3
			what = fmt.Sprintf("partition %s (hang %t)", id, hang)
			f.partition(id, hang)
			cut[id] = true
		case k == 5:
			for c := range cut {
				what += "heal " + c + "; "
				f.heal(c)
				delete(cut, c)
			}
		case k == 6:
			what = "slow calls " + id
			f.store.Delay(id, f.renew()/10)
		case k == 7:
			what = "fail calls " + id
			f.store.FailNext(id, 1+rng.IntN(4))
		case k == 8:
			what = "lose answers " + id
			f.store.LoseResponses(id, 1+rng.IntN(3))
		case k == 11 && liveness[id] != nil:
			what = "restore the liveness record of " + id
			f.store.Put(memberKey(simGroup, id), liveness[id])
		case k == 12:
			what = "delete the assignment"
			f.store.Delete(assignmentKey(simGroup))
		case k == 13:
			what = "delete the acknowledgement of " + id
			f.store.Delete(ackKey(simGroup, id))
		case k == 9 && len(snapshots) > 0:
			what = "restore an assignment"
			f.store.Put(assignmentKey(simGroup), snapshots[rng.IntN(len(snapshots))])
		default:
			what = "restore acknowledgements"
			for id, b := range acks {
				f.store.Put(ackKey(simGroup, id), b)
			}
		}
		trace = append(trace, time.Now().Format(time.TimeOnly)+" "+what)
	}
	for id := range f.workers {
		f.store.Heal(id)
		f.workers[id].live = true
	}
	if len(f.workers) == 0 {
		f.join()
	}
	since := time.Now()
	limit := since.Add(20 * f.ttl)
	for !f.o.Balanced(f.live()) && time.Now().Before(limit) {
		time.Sleep(f.renew() / 16)
	}
	balanced := f.o.Balanced(f.live())
	f.stopAll()
	if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 || !balanced {
		t.Errorf("seed %d: %d overlaps, %d epochs not increasing, balanced after healing: %t; first: %s\ntrace:\n%v",
			seed, overlaps, backwards, balanced, first, trace)
	}
}
