package shard

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestForeignAckOrphansNoShard (red team #6; rules 8, 12): an
// acknowledgement object that no term of the worker wrote (a copy from
// another group or bucket, a tool's write), naming a term above the live
// one's, must not make the assigner free the live term's shards while it
// runs them, nor keep them for a term that no process runs, nor stop the
// group: a crash of the assigner afterwards is handled as ever, and the
// group settles over its live workers with no overlap.
func TestForeignAckOrphansNoShard(t *testing.T) {
	for _, c := range []struct{ name, ack string }{
		{"token 2^64-1", `{"leasehold_shard_ack":1,"token":18446744073709551615,"applied":0,"nonce":"0123456789abcdef"}`},
		{"token 2^62 of liveness token 1", `{"leasehold_shard_ack":1,"token":4611686018427387904,"lease":1,"applied":0,"nonce":"0123456789abcdef"}`},
		{"the largest term, left", `{"leasehold_shard_ack":1,"token":9223372032559808512,"lease":2147483647,"applied":0,"left":true,"nonce":"0123456789abcdef"}`},
		{"an earlier version's, left", `{"leasehold_shard_ack":1,"token":1099511627776,"applied":0,"left":true,"nonce":"0123456789abcdef"}`},
		{"applied 2^64-1", `{"leasehold_shard_ack":1,"token":4294967296,"lease":1,"applied":18446744073709551615,"nonce":"0123456789abcdef"}`},
	} {
		// The crash of the assigner makes its successor read the
		// acknowledgement anew; another worker's is a change it handles.
		for _, assigner := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, crash the assigner %t", c.name, assigner), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					f := phasedFleet(t, 12, 3, 3)
					boss, live := f.assigner(), slices.DeleteFunc(f.live(), func(id string) bool { return id == f.assigner() })
					victim, other := live[0], live[1]
					if assigner {
						other = boss
					}
					mine := f.o.Shards(victim)
					f.store.Put(ackKey(simGroup, victim), []byte(c.ack))
					time.Sleep(3 * f.ttl)
					f.crash(other)
					time.Sleep(10 * f.ttl)
					balanced, counts := f.o.Balanced(f.live()), f.o.Counts(f.live())
					f.stopAll()
					overlaps, _, first := f.o.Violations()
					if overlaps != 0 || !balanced {
						t.Errorf("an acknowledgement %s for live worker %s (shards %v), then a crash of %s: 10 TTL later balanced %t (shards per worker %v), %d overlaps; first: %s", c.ack, victim, mine, other, balanced, counts, overlaps, first)
					}
				})
			})
		}
	}
}
