package shard

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestUnreadableAssignmentDoesNotFreezeTheGroup: an assignment object that
// cannot be read must not stop the assigner, which holds the group's lease
// and so can write a fence over it: a crash is handled as ever, its shards
// running elsewhere well within the simulation's bound, with no shard on
// two workers. The object is made unreadable as a DynamoDB restore leaves
// a head item whose parts a later write deleted (memlease's Store.Tear: an
// earlier version listed, every read of it lease.ErrCorrupt), or by bytes
// that are no assignment, under a live assigner, together with the
// assigner's crash (its successor reads the object first), or while no
// worker runs, before the group starts or after every worker left: then
// no term can begin unless the object names none of its worker's terms.
// 600 shards: over 3 KiB, the size at which DynamoDB's Objects keeps the
// assignment in parts.
func TestUnreadableAssignmentDoesNotFreezeTheGroup(t *testing.T) {
	const shards = 600
	key := assignmentKey(simGroup)
	// restore puts back, torn, the version the assignment had before the
	// join of a fourth worker replaced it.
	restore := func(f *fleet) func() {
		_, v, err := f.store.Objects("test").Get(t.Context(), key, "")
		if err != nil {
			t.Fatal(err)
		}
		f.join()
		f.settle("join", time.Now(), f.o.Starts())
		return func() { f.store.Tear(key, v) }
	}
	garbage := func(f *fleet) func() {
		return func() { f.store.Put(key, []byte("not an assignment")) }
	}
	worker := func(f *fleet) string {
		for _, id := range f.live() {
			if id != f.assigner() {
				return id
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name string
		// unreadable returns the function that makes the object unreadable,
		// called just after the victim's crash.
		unreadable func(f *fleet) func()
		victim     func(f *fleet) string
	}{
		{"a restore of the head of a multi-part object, a worker's crash", restore, worker},
		{"a restore of the head of a multi-part object, the assigner's crash", restore, (*fleet).assigner},
		{"bytes that are no assignment, a worker's crash", garbage, worker},
		{"bytes that are no assignment, the assigner's crash", garbage, (*fleet).assigner},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := phasedFleet(t, shards, 3, 0)
				unreadable := tc.unreadable(f)
				since := time.Now()
				f.crash(tc.victim(f))
				unreadable()
				took, _ := f.settle("crash", since, f.o.Starts())
				t.Logf("crash → its shards running elsewhere: %.2f TTL", took.Seconds()/f.ttl.Seconds())
				if f.overlapped() {
					t.Error("a shard ran on two workers at once")
				}
				f.stopAll()
			})
		})
	}
	// Every term below begins while the object cannot be read: it must
	// name no term of its worker (termFloor), or no term would say hello,
	// nor campaign, nor so let an assigner write the fence that replaces
	// the object (seeds 24, 54, 130, 178, 212, 364, 515, 834, 904 and 971
	// of TestRandomFaults with the assignment in parts: a head restored,
	// the assigner leaving, and every other worker's term begun anew).
	for _, tc := range []struct {
		name string
		// unreadable makes the object unreadable while no worker runs:
		// before any has, or after all left.
		unreadable func(f *fleet)
	}{
		{"bytes that are no assignment, before the group starts", func(f *fleet) { garbage(f)() }},
		{"a torn head, before the group starts", func(f *fleet) { f.store.Tear(key, "a version whose parts were deleted") }},
		{"a restore of the head of a multi-part object while the group is stopped", func(f *fleet) {
			for range 3 {
				f.join()
			}
			f.settle("start", time.Now(), 0)
			tear := restore(f)
			for _, id := range f.live() {
				f.leave(id)
			}
			tear()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, shards)
				tc.unreadable(f)
				for range 3 {
					f.join()
				}
				f.settle("start", time.Now(), 0)
				if f.overlapped() {
					t.Error("a shard ran on two workers at once")
				}
				f.stopAll()
			})
		})
	}
}
