package shard

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// assignerRecord is the assigner lease's record as stored now.
func (f *fleet) assignerRecord() lease.Record {
	b, _ := f.store.Bytes(assignerKey(simGroup))
	r, _ := driver.DecodeJSON(b)
	return r
}

// reassign makes the assigner's worker leave and start again, so that the
// group has a new assigner, its lease's token above 1, and returns that
// lease's record.
func (f *fleet) reassign() lease.Record {
	boss := f.assigner()
	f.leave(boss)
	f.start(boss)
	f.settle("a new assigner", time.Now(), 0)
	return f.assignerRecord()
}

// verdict stops every worker and fails the test, saying after what, if
// the oracle saw two owners of a shard or an epoch that did not increase,
// or the group is not balanced over its live workers.
func (f *fleet) verdict(after string) {
	f.t.Helper()
	f.t.Logf("assigner %s, token %d", f.assigner(), f.assignerRecord().Token)
	balanced, counts := f.o.Balanced(f.live()), f.o.Counts(f.live())
	f.stopAll()
	if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 || !balanced {
		f.t.Errorf("%s: %d overlaps, %d epochs not increasing, balanced %t (counts %v); first: %s", after, overlaps, backwards, balanced, counts, first)
	}
}

// TestDeletedAssignerRecordKeepsTheGroupGoing (red team #5; rules 10, 12):
// the assigner lease's record is deleted (a lifecycle rule on the group's
// prefix, a person "resetting" it). The assigner's next renewal finds it
// gone, and its liveness term ends with its assigner term. Its worker's
// next term must not write a token at or below the one it saw (the
// engine's rule 10 holds only for one Lease, so a worker keeps one across
// its terms), and its Gens must be above those the group applied, or the
// running workers take its fence for a restore and never acknowledge it:
// the group halts. After a deploy of the other workers (new processes,
// which have seen nothing), epochs still increase and the group settles.
func TestDeletedAssignerRecordKeepsTheGroupGoing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := phasedFleet(t, 12, 3, 0)
		was := f.reassign()
		f.store.Delete(assignerKey(simGroup))
		time.Sleep(10 * f.ttl)
		now := f.assignerRecord()
		balanced := f.o.Balanced(f.live())
		t.Logf("assigner %s (token %d) before the delete, %s (token %d) after", was.Holder, was.Token, now.Holder, now.Token)
		if !balanced || now.Token <= was.Token {
			t.Errorf("10 TTL after the delete: balanced %t (counts %v), the assigner lease's token went from %d to %d", balanced, f.o.Counts(f.live()), was.Token, now.Token)
		}
		// A deploy: every other worker stops, and a new process of it
		// starts.
		for _, id := range f.live() {
			if id != now.Holder {
				f.leave(id)
				f.start(id)
				time.Sleep(f.renew())
			}
		}
		time.Sleep(5 * f.ttl)
		f.verdict("after a deploy of the other workers")
	})
}

// TestRestartedAssignerWritesAboveAppliedGens (red team #5, the restarted
// process; rule 12): the assigner lease's record is deleted, and every
// worker is restarted, one after another, so that no process has seen
// the lease's earlier tokens and its next assigner takes it with token 1.
// Its Gens must still be above those the group applied, read from the
// assignment and the acknowledgements, or the shards it gives start at
// epochs below earlier ones.
func TestRestartedAssignerWritesAboveAppliedGens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := phasedFleet(t, 12, 3, 3)
		was := f.reassign()
		f.store.Delete(assignerKey(simGroup))
		for _, id := range f.live() {
			f.leave(id)
			f.start(id)
			time.Sleep(f.renew())
		}
		time.Sleep(10 * f.ttl)
		t.Logf("assigner lease token %d before the delete", was.Token)
		f.verdict("the assigner lease's record deleted, every worker restarted")
	})
}

// TestBreakOfAssignerLeaseFreesNoLiveTerm (red team #2; rule 12): an
// operator breaks the group's assigner lease (leasehold break --force)
// just after its holder renewed it. The holder learns of it only at its
// next renewal, and its shards take their time to stop; the worker that
// takes the freed lease must not free the broken holder's liveness term's
// shards at once as those of a term that had ended, but wait for that
// term's liveness to lapse or leave.
func TestBreakOfAssignerLeaseFreesNoLiveTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := phasedFleet(t, 24, 4, 4)
		boss := f.assigner()
		// Just after the assigner renewed: its next renewal is a renew
		// interval away.
		before, _ := f.store.Bytes(assignerKey(simGroup))
		for {
			time.Sleep(10 * time.Millisecond)
			if now, _ := f.store.Bytes(assignerKey(simGroup)); !bytes.Equal(now, before) {
				break
			}
		}
		if _, err := f.breakAssigner(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * f.ttl)
		if f.overlapped() {
			overlaps, _, first := f.o.Violations()
			t.Errorf("break of the assigner lease (held by %s, now %s): %d shard starts while another worker ran the shard; first: %s", boss, f.assigner(), overlaps, first)
		}
		f.stopAll()
	})
}

// TestNewAssignerRaisesAboveGensWorkersSaw (red team #5, found by the
// simulation at seed 748): the assigner lease's record and the
// assignment are deleted; the assigner's worker's next liveness term says
// hello over the acknowledgement that named its fence; a new process
// takes the lease with token 1, and the other worker, which ran shards at
// the old assigner's Gens without acknowledging any (it joined after the
// fence), crashes. Nothing the new assigner reads names those Gens but
// that hello, which carries the highest Gen its process saw (ack.Seen):
// without it, the new assigner gives the crashed worker's shards at
// epochs it had started them with.
func TestNewAssignerRaisesAboveGensWorkersSaw(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, boss, other := wipedPair(t)
		// The assigner's term ends, and its worker's next says hello over
		// the acknowledgement that named its fence. The assignment is
		// deleted again, as the assigner may have written it before its
		// renewal found its lease's record gone: when the new process
		// joins, only the hello names the Gens the group ran.
		before, since := f.ackOf(boss), time.Now()
		for k := f.ackOf(boss); k.Token == before.Token || k.Applied != 0; k = f.ackOf(boss) {
			if time.Since(since) > 5*f.ttl {
				t.Fatalf("5 TTL after the deletes, %s's acknowledgement is %+v, not a hello of its next term", boss, k)
			}
			time.Sleep(10 * time.Millisecond)
		}
		f.store.Delete(assignmentKey(simGroup))
		f.join()
		time.Sleep(f.renew())
		f.crash(other)
		time.Sleep(10 * f.ttl)
		f.verdict("the assigner lease's record and the assignment deleted, a new process the assigner, a worker crashed")
	})
}

// ackOf is id's acknowledgement as stored now, the zero ack if there is
// none.
func (f *fleet) ackOf(id string) ack {
	b, _ := f.store.Bytes(ackKey(simGroup, id))
	k, _ := decodeAck(b)
	return k
}

// wipedPair starts two workers, boss the assigner, and deletes the
// assigner lease's record and the assignment.
func wipedPair(t *testing.T) (f *fleet, boss, other string) {
	f = phasedFleet(t, 12, 2, 3)
	boss = f.assigner()
	other = slices.DeleteFunc(f.live(), func(id string) bool { return id == boss })[0]
	f.store.Delete(assignerKey(simGroup))
	f.store.Delete(assignmentKey(simGroup))
	return f, boss, other
}

// TestNewAssignerOutrunsGensItCouldNotRead (red team #5, the records
// gone): the assigner lease's record, the assignment and every
// acknowledgement are deleted and the assigner's worker leaves; a new
// process takes the lease with token 1, and nothing it reads names the
// Gens the other worker applied, which takes its fence for a restore.
// That worker says what it has seen (its acknowledgement, written again),
// and the assigner writes a fence above it instead of waiting for it for
// as long as it lives.
func TestNewAssignerOutrunsGensItCouldNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, boss, other := wipedPair(t)
		f.leave(boss)
		f.store.Delete(ackKey(simGroup, boss))
		f.store.Delete(ackKey(simGroup, other))
		f.join()
		time.Sleep(10 * f.ttl)
		f.verdict("every record but the workers' liveness deleted, a new process the assigner")
	})
}

// TestFenceReadsEveryAckBeforeItsGen (rule 12; found by the simulation
// at seed 1677 with the class greater): an assigner whose Gens were
// raised above its lease's token (the record had been deleted) writes its
// fence, which the workers apply and acknowledge, and is killed before it
// writes anything else; the assignment is deleted. The next assigner takes
// the lease over from it with the next token, which is the fence's high
// half (a worker that joins, and has read no Gen), and its calls are slow, so that its first round's reads of the
// acknowledgements reach the round's deadline after the first. Only those
// acknowledgements name the fence's Gen: had it written its own fence
// with the ones not yet read, its Gen would be the same as the earlier
// fence's, which the workers that applied that one ignore (it is not
// greater), and their acknowledgements of that one, read after, would
// pass for acknowledgements of its own: it would give their shards to
// others while they run them. It reads every acknowledgement before its
// fence, and raises its Gens above them.
func TestFenceReadsEveryAckBeforeItsGen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 1)
		boss := f.assigner()
		f.crash(boss)
		// The killed assigner's last write: the fence of a term whose
		// lease token was 1 and whose Gens were raised to high half 2.
		b, _ := f.store.Bytes(assignmentKey(simGroup))
		a, err := decodeAssignment(b)
		if err != nil {
			t.Fatal(err)
		}
		fence := uint64(2) << 32
		a.Gen, a.Fence, a.Expect = fence, true, time.Time{}
		for s := range a.Slots {
			a.Slots[s].Epoch = fence
		}
		f.store.Put(assignmentKey(simGroup), a.encode())
		for _, id := range f.live() {
			for since := time.Now(); f.ackOf(id).Applied != fence; time.Sleep(f.renew() / 16) {
				if time.Since(since) > 2*f.ttl {
					t.Fatalf("%s has not acknowledged the fence %#x: %+v", id, fence, f.ackOf(id))
				}
			}
		}
		f.store.Delete(assignmentKey(simGroup))
		// A new worker campaigns (it has read no Gen), every call of it
		// slow.
		f.candidates = f.next + 1
		f.store.Delay(fmt.Sprintf("w%04d", f.next+1), f.renew()/10)
		f.join()
		time.Sleep(10 * f.ttl)
		t.Logf("assigner %s, token %d; counts %v", f.assigner(), f.assignerRecord().Token, f.o.Counts(f.live()))
		balanced := f.o.Balanced(f.live())
		f.stopAll()
		if !hole(t, f, "") && !balanced {
			t.Errorf("not balanced 10 TTL after the new process started")
		}
	})
}
