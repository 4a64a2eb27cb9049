package oracle

import (
	"testing"
	"testing/synctest"
	"time"
)

// step is one event of a hand-built history.
type step func(o *Oracle)

func wrote(gen, fence uint64) step { return func(o *Oracle) { o.Wrote(gen, fence) } }

func lost(what ...Loss) step {
	return func(o *Oracle) {
		for _, l := range what {
			o.Lost(l)
		}
	}
}

func ran(id string, epoch uint64) step {
	return func(o *Oracle) { o.Start(id, 0, epoch); o.End(id, 0) }
}

// wantReported plays the steps a second apart on a one-shard oracle, then
// starts the shard at epoch, and fails t unless the oracle counts that
// start as an epoch that went back, waiving none: no loss in the history
// hides the earlier epoch's term from the assigner that went back.
func wantReported(t *testing.T, epoch uint64, steps ...step) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		o := New(1)
		for _, s := range steps {
			s(o)
			time.Sleep(time.Second)
		}
		o.Start("b", 0, epoch)
		_, backwards, _ := o.Violations()
		waived, first := o.Waived()
		if backwards != 1 || waived != 0 {
			t.Errorf("backwards %d, waived %d (%s); want the epoch that went back reported", backwards, waived, first)
		}
	})
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
// hides nothing of, but the oracle counted it from A's fence and waived
// the bug.
func TestRedTeam20GensLimitRepeatedFence(t *testing.T) {
	wantReported(t, 7<<32|5,
		wrote(7<<32|3, 7<<32|3), // A's fence
		lost(AssignerLease, Assignment),
		wrote(7<<32|3, 7<<32|3), // B's fence, the same Gen
		wrote(7<<32|9, 7<<32|3),
		ran("a", 7<<32|9),
		lost(Assignment))
}

// TestRedTeam20GensLimitUnknownFence (RT20-2): with the fence unknown
// (Wrote's fence 0), the lease's loss counted from the first write of a
// Gen of the epoch's high half: red team 19's history (a term repeating
// an earlier term's token after a delete) was waived again.
func TestRedTeam20GensLimitUnknownFence(t *testing.T) {
	wantReported(t, 7<<32|5,
		wrote(7<<32|1000, 0), // A's term
		lost(AssignerLease),  // deleted: B takes token 7 again
		wrote(7<<32|3, 0),    // B's term
		wrote(7<<32|9, 0),
		ran("a", 7<<32|9),
		lost(Assignment))
}

// TestRedTeam20GensLimitLossAfterTheLowWrite (RT20-3): the losses that
// excuse a lower epoch must come before the assigner that wrote it read
// the store, so before that write. Here the assignment is lost, the next
// assigner reads B's record (token 7) and yet writes 7<<32|5, and only
// then is the lease's record lost; the shard starts at 7<<32|5 after.
// The oracle looked at the latest losses only, not at when the lower
// epoch was written, and waived it.
func TestRedTeam20GensLimitLossAfterTheLowWrite(t *testing.T) {
	wantReported(t, 7<<32|5,
		wrote(7<<32|3, 7<<32|3),
		wrote(7<<32|9, 7<<32|3),
		ran("a", 7<<32|9),
		lost(Assignment),
		wrote(7<<32|5, 7<<32|5), // read token 7 and the lease's record: a bug
		lost(AssignerLease))     // too late to excuse it
}
