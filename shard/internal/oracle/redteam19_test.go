package oracle

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestRedTeam19GensLimitFromTheEpochsTerm: the Gens' limit needs the
// assigner lease's record lost after the term that wrote the epoch began,
// so that the next assigner cannot read that term's token; a loss before
// that term does not hide it. Here assigner A (token 7) writes its fence,
// the lease's record is deleted, and B, which never saw A's record,
// takes the lease with token 7 again (the limit lets tokens repeat so),
// writes its own fence and the Gen 7<<32|9 a shard starts with. The
// assignment is then deleted, and the next assigner, which reads B's
// record (token 7) and so writes Gens of high half 8 at least, starts
// the shard at 7<<32|5 instead: a real bug that no loss excuses. The
// oracle judged the lease's loss from the first write of a Gen of the
// epoch's high half, A's fence, and waived it (0928cae; counted from the
// shard's start, as before, it was reported) (RT19-5).
func TestRedTeam19GensLimitFromTheEpochsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := New(1)
		o.Wrote(7<<32|1000, 7<<32|1000) // A's fence
		time.Sleep(time.Second)
		o.Lost(AssignerLease) // deleted: B takes token 7 again
		time.Sleep(time.Second)
		o.Wrote(7<<32|3, 7<<32|3) // B's fence
		time.Sleep(time.Second)
		o.Wrote(7<<32|9, 7<<32|3)
		time.Sleep(time.Second)
		o.Start("a", 0, 7<<32|9)
		o.End("a", 0)
		time.Sleep(time.Second)
		o.Lost(Assignment)
		time.Sleep(time.Second)
		o.Start("b", 0, 7<<32|5)
		_, backwards, _ := o.Violations()
		waived, first := o.Waived()
		if backwards != 1 || waived != 0 {
			t.Errorf("backwards %d, waived %d (%s); want the epoch that went back behind B's record reported", backwards, waived, first)
		}
	})
}
