//go:build redteam

package shard

// Open (issue 34), kept out of CI: go test -tags redteam -run TestRedTeam6
// ./shard. The Gens' limit (see the package doc): an acknowledgement that
// cannot be read before the fence, the only record of an earlier
// assigner's Gens, its worker crashed: the fence is written without it
// after a TTL, and Gens with their high half may be given again. At this
// seed the fence's random low half happens to go above them, so the test
// passes; with another draw, epochs go back.

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestRedTeam6UnreadAckOfACrashedWorker: the fence written without an
// acknowledgement it could not read for a TTL takes its Gen from what it
// did read; when the worker of the unread one crashed with the assigner,
// and the assignment and the assigner lease's record are gone, nothing
// else says how high the crashed assigner's Gens went. The worker's
// liveness expires, the fence passes without it, and the next plan gives
// its shards epochs at or below those it ran them under (rule 12: each
// start of a shard carries an epoch strictly greater than every earlier
// one). outrunBeforeFence raises only once the acknowledgement is read,
// here never.
func TestRedTeam6UnreadAckOfACrashedWorker(t *testing.T) {
	for _, unreadable := range []bool{false, true} {
		name := "control"
		if unreadable {
			name = "unreadable"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa := newRT5Faults()
				f := rt5Fleet(t, 9, 3, 1, fa)
				boss, victim := "w0001", "w0002"
				if f.assigner() != boss {
					t.Fatalf("assigner %q", f.assigner())
				}
				f.leave("w0003") // its shards go to the others at Gens above the fence's
				f.settle("leave", time.Now(), f.o.Starts())
				f.store.Delete(ackKey(simGroup, "w0003")) // a retired worker's, cleaned up
				k := rt6Ack(t, f, victim)
				t.Logf("victim %s ack: applied %#x seen %#x; owns %v", victim, k.Applied, k.Seen, f.o.Shards(victim))
				if unreadable { // its reads hang (a key a policy denies, say)
					fa.mu.Lock()
					fa.hangGet[ackKey(simGroup, victim)] = true
					fa.mu.Unlock()
				}
				f.crash(boss)
				f.crash(victim)
				f.store.Delete(assignerKey(simGroup))
				f.store.Delete(assignmentKey(simGroup))
				f.o.Restart(boss)
				f.candidates = 10
				f.rt5StartProcess(boss, boss+"#2", fa)
				f.settle("the crashes", time.Now(), f.o.Starts())
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}
