package shard

import (
	"bytes"
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
		boss := f.assigner()
		// A group that has run a while: its assigner's token is above 1.
		f.leave(boss)
		f.start(boss)
		f.settle("a new assigner", time.Now(), 0)
		was := f.assignerRecord()
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
		balanced = f.o.Balanced(f.live())
		counts := f.o.Counts(f.live())
		f.stopAll()
		if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 || !balanced {
			t.Errorf("after a deploy of the other workers: %d overlaps, %d epochs not increasing, balanced %t (counts %v); first: %s", overlaps, backwards, balanced, counts, first)
		}
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
		boss := f.assigner()
		f.leave(boss)
		f.start(boss)
		f.settle("a new assigner", time.Now(), 0)
		was := f.assignerRecord()
		f.store.Delete(assignerKey(simGroup))
		for _, id := range f.live() {
			f.leave(id)
			f.start(id)
			time.Sleep(f.renew())
		}
		time.Sleep(10 * f.ttl)
		now := f.assignerRecord()
		balanced, counts := f.o.Balanced(f.live()), f.o.Counts(f.live())
		f.stopAll()
		t.Logf("assigner lease token %d before the delete, %d after", was.Token, now.Token)
		if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 || !balanced {
			t.Errorf("the assigner lease's record deleted, every worker restarted: %d overlaps, %d epochs not increasing, balanced %t (counts %v); first: %s", overlaps, backwards, balanced, counts, first)
		}
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
		op, err := f.store.Open(assignerKey(simGroup), lease.Options{Identity: "operator", TTL: f.ttl})
		if err != nil {
			t.Fatal(err)
		}
		// Just after the assigner renewed: its next renewal is a renew
		// interval away.
		before, _ := f.store.Bytes(assignerKey(simGroup))
		for {
			time.Sleep(10 * time.Millisecond)
			if now, _ := f.store.Bytes(assignerKey(simGroup)); !bytes.Equal(now, before) {
				break
			}
		}
		rec, err := op.Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := op.(lease.Breaker).Break(t.Context(), rec); err != nil {
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
