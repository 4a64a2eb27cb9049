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
// assigner's crash (its successor reads the object first), or before the
// group starts. 600 shards: over 3 KiB, the size at which DynamoDB's
// Objects keeps the assignment in parts.
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
	t.Run("before the group starts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFleet(t, shards)
			f.store.Put(key, []byte("not an assignment"))
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
