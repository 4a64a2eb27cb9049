package oracle

import (
	"testing"
	"testing/synctest"
	"time"
)

// wantReported fails t unless o counted exactly one epoch that went back
// and waived none.
func wantReported(t *testing.T, o *Oracle) {
	t.Helper()
	_, backwards, _ := o.Violations()
	waived, first := o.Waived()
	if backwards != 1 || waived != 0 {
		t.Errorf("backwards %d, waived %d (%s); want the epoch that went back reported: no loss hides the epoch's term from the assigner that went back", backwards, waived, first)
	}
}

// TestRedTeam20GensLimitRepeatedFence (RT20-1): the Gens' limit is judged
// from the fence of the term that wrote the epoch, found as the first
// write with that fence's Gen. But a fence's Gen can repeat: A writes its
// fence 7<<32|3, the store loses both the lease's record and the
// assignment, and B takes token 7 again and, reading no assignment,
// writes the same fence Gen, then 7<<32|9, which a shard starts with.
// Only the assignment is lost after that; the next assigner reads B's
// record (token 7) and must write Gens of high half 8, yet the shard
// starts at 7<<32|5. The lease's loss came before B's term, which it
// hides nothing of, but the oracle counts it from A's fence and waives
// the bug.
func TestRedTeam20GensLimitRepeatedFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := New(1)
		o.Wrote(7<<32|3, 7<<32|3) // A's fence
		time.Sleep(time.Second)
		o.Lost(AssignerLease)
		o.Lost(Assignment)
		time.Sleep(time.Second)
		o.Wrote(7<<32|3, 7<<32|3) // B's fence, the same Gen
		time.Sleep(time.Second)
		o.Wrote(7<<32|9, 7<<32|3)
		time.Sleep(time.Second)
		o.Start("a", 0, 7<<32|9)
		o.End("a", 0)
		time.Sleep(time.Second)
		o.Lost(Assignment)
		time.Sleep(time.Second)
		o.Start("b", 0, 7<<32|5)
		wantReported(t, o)
	})
}

// TestRedTeam20GensLimitUnknownFence (RT20-2): with the fence unknown
// (Wrote's fence 0), the lease's loss counts from the first write of a
// Gen of the epoch's high half: red team 19's history (a term repeating
// an earlier term's token after a delete) is waived again.
func TestRedTeam20GensLimitUnknownFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := New(1)
		o.Wrote(7<<32|1000, 0) // A's term
		time.Sleep(time.Second)
		o.Lost(AssignerLease) // deleted: B takes token 7 again
		time.Sleep(time.Second)
		o.Wrote(7<<32|3, 0) // B's term
		time.Sleep(time.Second)
		o.Wrote(7<<32|9, 0)
		time.Sleep(time.Second)
		o.Start("a", 0, 7<<32|9)
		o.End("a", 0)
		time.Sleep(time.Second)
		o.Lost(Assignment)
		time.Sleep(time.Second)
		o.Start("b", 0, 7<<32|5)
		wantReported(t, o)
	})
}

// TestRedTeam20GensLimitLossAfterTheLowWrite (RT20-3): the losses that
// excuse a lower epoch must come before the assigner that wrote it read
// the store, so before that write. Here the assignment is lost, the next
// assigner reads B's record (token 7) and yet writes 7<<32|5, and only
// then is the lease's record lost; the shard starts at 7<<32|5 after.
// The oracle looks at the latest losses only, not at when the lower
// epoch was written, and waives it.
func TestRedTeam20GensLimitLossAfterTheLowWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := New(1)
		o.Wrote(7<<32|3, 7<<32|3)
		time.Sleep(time.Second)
		o.Wrote(7<<32|9, 7<<32|3)
		time.Sleep(time.Second)
		o.Start("a", 0, 7<<32|9)
		o.End("a", 0)
		time.Sleep(time.Second)
		o.Lost(Assignment)
		time.Sleep(time.Second)
		o.Wrote(7<<32|5, 7<<32|5) // read token 7 and the lease's record: a bug
		time.Sleep(time.Second)
		o.Lost(AssignerLease) // too late to excuse it
		time.Sleep(time.Second)
		o.Start("b", 0, 7<<32|5)
		wantReported(t, o)
	})
}
