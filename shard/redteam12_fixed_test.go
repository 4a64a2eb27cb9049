package shard

// Red team 12's attacks that broke a rule, fixed: a term whose task never
// started released a record naming its worker's live liveness term; an
// unvouched acknowledgement's Gens were not counted; shard/gens at the
// bound of Gens stopped every worker that took the lease.

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestRedTeam12LateAcquireReleasesOwnLiveTerm (rule 12, two owners; fixed):
// a worker X wins the assigner lease, but Acquire's answer reaches it
// only after the term's renew deadline (RenewDeadline after the write was
// sent: a lost answer read back, a process stalled). runner.lead calls
// Config.Annotate first, which writes X's live liveness term in shard/term,
// then ends the term before its task starts (DeadlinePassed) and releases
// the lease, within a TTL of the write, with those annotations. The
// assigner task never ran, so its context.AfterFunc(actx, end) was never
// registered: X's liveness term goes on, its shards running, and X
// campaigns again. The record now says, released, that X's live term
// held the assigner lease and ended with it. B takes the released record
// at once (X's next attempts fail for a few seconds) and, by design, frees
// that term's shards at once (assigner.ended: no acknowledgement, no
// expiry count) and gives them to itself while X runs them.
//
//	go test ./shard -run TestRedTeam12LateAcquireReleasesOwnLiveTerm
func TestRedTeam12LateAcquireReleasesOwnLiveTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctl := &rt12AcquireCtl{block: map[string]bool{}, late: map[string]time.Duration{}, won: map[string]int{}}
		f := newFleet(t, 12)
		f.wrapStore = func(proc string, s Store) Store { return rt12CtlStore{s, proc, ctl} }
		// X's late term: released with shard/term naming X's live term;
		// then X's attempts fail, B's pass.
		x, b, since := rt12ReleasedByX(t, f, func(x, b string) {
			ctl.set(func(c *rt12AcquireCtl) {
				c.block[b] = true
				c.late[x] = f.renewDeadline() + time.Second
			})
		})
		for f.assigner() != b {
			if time.Since(since) > 8*f.ttl {
				t.Fatalf("%s did not take the lease", b)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(2 * f.ttl)
		ctl.set(func(c *rt12AcquireCtl) { c.block[x] = false })
		time.Sleep(4 * f.ttl)
		f.verdict(fmt.Sprintf("%s's assigner term past its deadline before its task started, released; %s took the lease", x, b))
	})
}

// TestRedTeam12SlowAcquireReleasesOwnLiveTerm (rule 12, two owners; fixed):
// the hole of TestRedTeam12LateAcquireReleasesOwnLiveTerm through store
// faults alone, no process stall: every worker's assigner lease has a
// CallTimeout of 5 s (TTL 15 s, RenewDeadline 8.4 s: valid, below the
// RenewDeadline). X's calls of that lease take 4.5 s each, and its
// acquiring write's answer is lost: the engine reads it back (4.5 s
// more) and reports the term 9 s after the write was sent, past its
// renew deadline; the runner releases it (within the TTL) with X's live
// liveness term in shard/term, X's task never run. B's calls of the lease
// fail until then (a partition, healed once the record reads released),
// and B takes it and frees X's running shards at once.
//
//	go test ./shard -run TestRedTeam12SlowAcquireReleasesOwnLiveTerm
func TestRedTeam12SlowAcquireReleasesOwnLiveTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 12)
		f.wrapStore = func(proc string, s Store) Store {
			return rt12AssignerClient{s, f.store.Objects(proc + "/assigner"), 5 * time.Second}
		}
		x, b, since := rt12ReleasedByX(t, f, func(x, b string) {
			f.store.Partition(b + "/assigner")
			f.store.Delay(x+"/assigner", 4500*time.Millisecond)
			f.store.LoseResponses(x+"/assigner", 1)
		})
		f.store.Heal(b + "/assigner")
		for f.assigner() != b {
			if time.Since(since) > 8*f.ttl {
				t.Fatalf("%s did not take the lease; the record: %+v", b, f.assignerRecord())
			}
			time.Sleep(10 * time.Millisecond)
		}
		f.store.Heal(x + "/assigner")
		time.Sleep(4 * f.ttl)
		f.verdict(fmt.Sprintf("%s's assigner term answered past its renew deadline, released; %s took the lease", x, b))
	})
}

// rt12ReleasedByX starts three workers in f and lets them settle; of the
// two that do not hold the assigner lease, it calls arm with X and B (to
// set up the faults), then makes the assigner's worker leave and waits
// (at most 4 TTLs) until the assigner lease's record says released by X.
// It returns X, B and when the assigner left.
func rt12ReleasedByX(t *testing.T, f *fleet, arm func(x, b string)) (x, b string, since time.Time) {
	t.Helper()
	for range 3 {
		f.join()
		time.Sleep(f.phase(f.renew()))
	}
	f.settle("start", time.Now(), 0)
	boss := f.assigner()
	others := slices.DeleteFunc(f.live(), func(id string) bool { return id == boss })
	x, b = others[0], others[1]
	arm(x, b)
	f.leave(boss)
	since = time.Now()
	for {
		r := f.assignerRecord()
		if r.Holder == x && r.Released {
			t.Logf("%v after the leave: the record, released by %s (token %d): shard/term %q; %s runs %v", time.Since(since), x, r.Token, r.Annotations.Get(termAnnotation), x, f.o.Shards(x))
			return x, b, since
		}
		if time.Since(since) > 4*f.ttl {
			t.Fatalf("no release by %s: record %+v", x, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRedTeam12UnvouchedAckGensIgnored (rule 12, epochs; fixed; found by
// the simulation at seed 13266, all classes, beyond the 5,000 run: go
// test ./shard -run '^TestRandomFaults$' -seed 13266 shrinks it to 13
// steps, and fails on main too): readAcks drops an acknowledgement whose
// worker's liveness record is gone (vouch: errUnvouched), and with it the
// Gens it names (Applied, Seen), which known(), later() and raise never
// see. The package doc's limit says Gens go back only when "the
// assignment and every acknowledgement that named them were deleted or
// restored ... and the workers that applied them are gone"; here the
// acknowledgement that names them is in the store, unchanged, and read,
// and the worker that applied them is alive (not cut off) throughout.
//
// Two workers; the assigner's worker leaves and comes back three times
// (shard/gens 4), the other, X, acknowledging each fence (its
// acknowledgement says Applied 4<<32|...). Then: the assigner lease's
// record deleted (a lifecycle rule), X's liveness record deleted (its
// next renewal ends its term; its next term waits the vanished record out,
// a TTL, before it says hello), the assignment restored to the first one
// written, the assigner killed and its acknowledgement deleted with its
// records (as the sim's restart class does). A new process takes the
// lease and writes its fence at high half 2, ignoring X's
// acknowledgement ("its worker's liveness record cannot have been
// acquired by the term it names"); it judges X's key absent for a TTL and
// gives X's shards at epochs below those X ran them with (shard 0: epoch
// 2<<32|..., after 4<<32|...). With X cut off as well the result is the
// same (the sim's schedule).
//
//	go test ./shard -run TestRedTeam12UnvouchedAckGensIgnored
func TestRedTeam12UnvouchedAckGensIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := phasedFleet(t, 12, 2, 1)
		boss := f.assigner()
		x := slices.DeleteFunc(f.live(), func(id string) bool { return id == boss })[0]
		earlyAssignment, _ := f.store.Bytes(assignmentKey(simGroup))
		f.candidates = f.next
		for range 3 {
			f.leave(boss)
			f.start(boss)
			f.settle("a new term of the assigner", time.Now(), 0)
		}
		k := f.ackOf(x)
		t.Logf("shard/gens %s; %s's acknowledgement: applied %#x seen %#x", f.assignerRecord().Annotations.Get(gensAnnotation), x, k.Applied, k.Seen)
		f.store.Delete(assignerKey(simGroup))
		f.leaseFaults.Add(1)
		f.touch(x)
		f.store.Delete(memberKey(simGroup, x))
		f.store.Put(assignmentKey(simGroup), earlyAssignment)
		f.crash(boss)
		f.store.Delete(ackKey(simGroup, boss))
		f.store.Delete(memberKey(simGroup, boss))
		f.candidates = f.next + 1
		f.join()
		time.Sleep(8 * f.ttl)
		k2 := f.ackOf(x)
		t.Logf("%s's acknowledgement now: applied %#x seen %#x; assigner %s gens %q", x, k2.Applied, k2.Seen, f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation))
		f.verdict("the assigner lease's record and X's liveness record deleted, the assignment restored, the assigner killed; X alive, its acknowledgement intact")
	})
}
