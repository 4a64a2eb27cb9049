package oracle

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestEpochBackBeyondTheGensLimit: with no assignment write reported, an
// epoch that does not increase is waived only when the store lost both
// the assigner lease's record and the assignment after the shard's latest
// epoch started; with either loss missing, or one before that start, it
// is counted. An overlap is never waived.
func TestEpochBackBeyondTheGensLimit(t *testing.T) {
	rows := []struct {
		name   string
		before []Loss // lost before the first start
		after  []Loss // lost between the first start and the second
		waived bool
	}{
		{"both after", nil, []Loss{AssignerLease, Assignment}, true},
		{"both after, the other order", nil, []Loss{Assignment, AssignerLease}, true},
		{"the lease only", nil, []Loss{AssignerLease}, false},
		{"the assignment only", nil, []Loss{Assignment}, false},
		{"the lease before the first start", []Loss{AssignerLease}, []Loss{Assignment}, false},
		{"both before", []Loss{AssignerLease, Assignment}, nil, false},
		{"none", nil, nil, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := New(1)
				for _, l := range row.before {
					o.Lost(l)
				}
				time.Sleep(time.Second)
				o.Start("a", 0, 7<<32|9)
				o.End("a", 0)
				time.Sleep(time.Second)
				for _, l := range row.after {
					o.Lost(l)
				}
				time.Sleep(time.Second)
				o.Start("b", 0, 7<<32|5)
				o.Start("c", 0, 8<<32)
				overlaps, backwards, _ := o.Violations()
				waived, _ := o.Waived()
				want := map[bool][2]int{true: {0, 1}, false: {1, 0}}[row.waived]
				if overlaps != 1 || backwards != want[0] || waived != want[1] {
					t.Errorf("overlaps %d, backwards %d, waived %d; want 1 (never waived), %d, %d", overlaps, backwards, waived, want[0], want[1])
				}
			})
		})
	}
}

// TestEpochBackBeyondTheGensLimitByWrites: with the assignment's writes
// reported (Wrote), the assigner lease's record counts as lost since the
// first write of a Gen of the epoch's high half, even before the shard
// started with it (shard seed 89525: the record restored between the
// Gen's write and the start), and the assignment since the last write of
// a Gen at or above the epoch: an assignment that names it again, written
// after the loss, is read by the next assigner.
func TestEpochBackBeyondTheGensLimitByWrites(t *testing.T) {
	rows := []struct {
		name       string
		rewrite    bool // the assignment written again at the epoch after the losses
		leaseFirst bool // the lease lost between the Gen's write and the start
		waived     bool
	}{
		{"the lease lost before the start, after the write", false, true, true},
		{"both after the start", false, false, true},
		{"written again after the losses", true, false, false},
		{"the lease lost before the start, written again after", true, true, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := New(1)
				gen := uint64(7<<32 | 9)
				o.Wrote(gen, gen)
				time.Sleep(time.Second)
				if row.leaseFirst {
					o.Lost(AssignerLease)
					time.Sleep(time.Second)
				}
				o.Start("a", 0, gen)
				o.End("a", 0)
				time.Sleep(time.Second)
				if !row.leaseFirst {
					o.Lost(AssignerLease)
				}
				o.Lost(Assignment)
				time.Sleep(time.Second)
				if row.rewrite {
					o.Wrote(gen+1, gen)
					time.Sleep(time.Second)
				}
				o.Start("b", 0, 7<<32|5)
				_, backwards, _ := o.Violations()
				waived, _ := o.Waived()
				want := map[bool][2]int{true: {0, 1}, false: {1, 0}}[row.waived]
				if backwards != want[0] || waived != want[1] {
					t.Errorf("backwards %d, waived %d; want %d, %d", backwards, waived, want[0], want[1])
				}
			})
		})
	}
}
