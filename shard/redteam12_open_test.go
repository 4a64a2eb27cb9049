//go:build redteam12open

package shard

// Red team 12, open: the Gens limit go doc ./shard states (every record
// of the later Gens lost, the assigner lease's record restored with them,
// the worker that applied them cut off), and a group whose records a
// person put at the bound of Gens (maxToken), whose assigner then writes
// nothing (no epoch repeats, no worker stops), so that no shard moves. Run with
//   go test -tags redteam12open ./shard -run TestRedTeam12

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

var (
	rt12From  = flag.Uint64("rt12from", 0, "TestRedTeam12Seeds: the first seed")
	rt12Count = flag.Int("rt12count", 0, "TestRedTeam12Seeds: how many seeds")
)

// TestRedTeam12GensLimitCutOff (rule 12, epochs; the documented Gens
// limit, reproduced): the assigner lease's record (shard/gens 1), the
// assignment and both acknowledgements restored as they were at the first
// fence, after three more assigner terms (shard/gens 4); the assigner
// crashed, the only other worker that applied the later Gens cut off (its
// calls hang; not crashed, not restarted: the doc's limit says "gone
// (crashed, or restarted)"), a new process joins and takes the lease with
// shard/gens above the restored 1 (its token, 3 here, the record's 1 + 1
// being lower), below 4: it gives the cut-off worker's shards at epochs
// below those they ran with (shard 0: epoch 2<<32|..., after 4<<32|...).
// Nothing the new assigner can read names the later Gens; the fix of
// 5383847 rests on the lease's record, which the restore took back.
//
//	go test -tags redteam12open ./shard -run TestRedTeam12GensLimitCutOff
func TestRedTeam12GensLimitCutOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := rt12Limit(t)
		f.verdict("the assigner lease's record, the assignment and the acknowledgements restored, the only other worker cut off")
	})
}

// TestRedTeam12GensHaltSurvivesBreakAndRestart (liveness; open): after
// shard/gens 2147483647 has stopped every worker, the operator does what
// the tools offer: leasehold break --force on the assigner lease (which
// keeps the record's annotations, shard/gens with them), and restarts
// every worker. Each fails again at its first assigner term; leasehold
// status shows nothing of shard/gens, and the error names a lease token
// that is not the record's.
//
//	go test -tags redteam12open ./shard -run TestRedTeam12GensHaltSurvivesBreakAndRestart
func TestRedTeam12GensHaltSurvivesBreakAndRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 0)
		rt12EditAssigner(f, "2147483647")
		time.Sleep(8 * f.ttl)
		failed := rt12Failed(f)
		t.Logf("after the edit: failed %v", failed)
		if _, err := f.breakAssigner(); err != nil {
			t.Fatal(err)
		}
		t.Logf("broken: shard/gens %q", f.assignerRecord().Annotations.Get(gensAnnotation))
		for id := range failed {
			f.workers[id].live = false
			f.gone = append(f.gone, f.workers[id])
			delete(f.workers, id)
			f.start(id)
		}
		time.Sleep(8 * f.ttl)
		again := rt12Failed(f)
		balanced := f.o.Balanced(f.live())
		t.Logf("after the break and the restarts: failed %v, counts %v, shard/gens %q", again, f.o.Counts(f.live()), f.assignerRecord().Annotations.Get(gensAnnotation))
		for id := range again {
			f.workers[id].live = false
		}
		f.stopAllTolerant()
		if len(again) != 0 || !balanced {
			t.Errorf("after leasehold break --force and a restart of every worker: %d of 3 failed again (%v), balanced %t", len(again), again, balanced)
		}
	})
}

// TestRedTeam12GensTimeBomb (liveness; open): shard/gens edited to
// 2147483646 (or an acknowledgement's Seen, or an assignment's Gen, with
// that high half: raise notes it, and the next term goes above): the next
// assigner takes 2^31-1, the bound, and runs, and the group looks well;
// at the next change of assigner (a deploy), every worker fails for good.
//
//	go test -tags redteam12open ./shard -run TestRedTeam12GensTimeBomb
func TestRedTeam12GensTimeBomb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 0)
		rt12EditAssigner(f, "2147483646")
		time.Sleep(6 * f.ttl)
		t.Logf("after the edit: assigner %s gens %q, failed %v, counts %v", f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation), rt12Failed(f), f.o.Counts(f.live()))
		rt12ChangeAssigner(t, f, "shard/gens 2147483646")
	})
}

// TestRedTeam12AckSeenTimeBomb (liveness; open): the same through an
// acknowledgement, a record the package doc says "says what it likes"
// (a copy from another group, a tool's write): a worker's, as stored,
// its Seen edited to a high half of 2^31-2, which the decoder accepts.
// The assigner reads it and ends its term (raise), noting it in its
// process; each candidate that wins after does the same until one has
// noted it, and that one takes the bound, 2^31-1, for its Gens. At the
// next change of assigner every worker fails for good.
//
//	go test -tags redteam12open ./shard -run TestRedTeam12AckSeenTimeBomb
func TestRedTeam12AckSeenTimeBomb(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 0)
		// A worker's acknowledgement as stored, its Seen edited.
		id := f.live()[1]
		k := f.ackOf(id)
		k.Seen = (maxToken - 1) << 32
		if _, err := decodeAck(k.encode()); err != nil {
			t.Fatal(err)
		}
		f.store.Put(ackKey(simGroup, id), k.encode())
		time.Sleep(8 * f.ttl)
		t.Logf("after the acknowledgement: assigner %s gens %q, failed %v, counts %v", f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation), rt12Failed(f), f.o.Counts(f.live()))
		rt12ChangeAssigner(t, f, "an acknowledgement with Seen of high half 2^31-2")
	})
}

// rt12ChangeAssigner makes one change of assigner in f (a deploy: the
// assigner's worker leaves and comes back), waits 8 TTLs, stops the group
// and fails t, its error opening with cause, unless no worker failed and
// the group is balanced.
func rt12ChangeAssigner(t *testing.T, f *fleet, cause string) {
	t.Helper()
	boss := f.assigner()
	f.leave(boss)
	f.start(boss)
	time.Sleep(8 * f.ttl)
	failed := rt12Failed(f)
	balanced := f.o.Balanced(f.live())
	t.Logf("after the assigner %s left and came back: assigner %s gens %q, failed %v, counts %v", boss, f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation), failed, f.o.Counts(f.live()))
	for id := range failed {
		f.workers[id].live = false
	}
	f.stopAllTolerant()
	if len(failed) != 0 || !balanced {
		t.Errorf("%s, then one change of assigner: %d of 3 workers failed for good (%v), balanced %t", cause, len(failed), failed, balanced)
	}
}

// TestRedTeam12GensAnnotationHaltsGroup (liveness; open): the assigner
// lease's record edited so that shard/gens says 2^31-1 or more (an
// operator, a tool, a record copied from elsewhere; below 2^63, the bound
// gensOf parses to). Every worker that then wins the lease takes a high
// half above the bound, and fails for good in assign's checkTokenFits,
// its first renewal (made at once) and release writing a higher shard/gens
// still for the next: one after another, every worker of the group stops
// with an error (2147483647, 2147483648: 3 of 3), and a restart fails
// again (TestRedTeam12GensHaltSurvivesBreakAndRestart). At
// 9223372036854775807 the first winner fails, writing 2^63, which the
// next parses as no number and ignores (1 of 3). The error blames "the
// assigner lease's token 2147483650", while the token is 4: the operator,
// reading the token, finds nothing wrong, and leasehold status shows no
// shard/gens. A value that is not a number, or one of 2^63 and above, is
// ignored ("names none"); these are not. Before 5383847 shard/gens did
// not exist, and raise kept Gens at the bound instead of failing.
//
//	go test -tags redteam12open ./shard -run TestRedTeam12GensAnnotationHaltsGroup
func TestRedTeam12GensAnnotationHaltsGroup(t *testing.T) {
	rt12GensValues(t, []string{"2147483647", "2147483648", "9223372036854775807"})
}

// TestRedTeam12Seeds runs TestRandomFaults's schedules for a range of seeds
// that does not start at 1 (-rt12from, -rt12count, -classes).
func TestRedTeam12Seeds(t *testing.T) {
	if *rt12Count == 0 {
		t.Skip("-rt12count not set")
	}
	on := map[string]bool{}
	for _, c := range strings.Split(*classFlag, ",") {
		if c != "" {
			on[c] = true
		}
	}
	for i := range *rt12Count {
		seed := *rt12From + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			var v verdict
			synctest.Test(t, func(t *testing.T) { v = randomFaults(t, seed, 0, on, nil, false) })
			if v.failed {
				t.Error(v.report)
			}
		})
	}
}
