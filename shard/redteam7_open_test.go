//go:build redteam

package shard

// Open (issue 34), kept out of CI: go test -tags redteam -run
// TestRedTeam7 ./shard. A halt older than the fence's random Gen: a live
// worker whose liveness record the assigner cannot read for good (a
// bucket policy, a 403) while its acknowledgement can be read: vouch
// fails every round, its acknowledgement is never taken in, it never
// expires, and the fence waits for it for ever.

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestRedTeam7VouchFailsForGood: the new assigner's reads of one live
// worker's liveness record fail for good (a key a bucket policy denies
// to the assigner's role; a key whose reads hang), while the worker renews
// it and its acknowledgements can be read. 24660d0 makes that failed vouch
// count as a failed read: the fence waits a TTL and is then written
// without it. But every later round vouches again, fails again, and never
// takes the worker's acknowledgement in (readAcks: continue before
// ackVer), so allAcknowledged waits for that worker, alive, for ever: the
// crashed assigner's shards never run again. The control: the same
// failure, healed after 2 TTL.
func TestRedTeam7VouchFailsForGood(t *testing.T) {
	for _, tc := range []struct {
		name         string
		forGood, ack bool
	}{{"healed", false, false}, {"for good", true, false}, {"comparison: its acknowledgement unreadable for good", true, true}} {
		forGood := tc.forGood
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa, ob := newRT5Faults(), &rt6Obs{err: map[string]error{}}
				f := rt6Fleet(t, 9, 3, 2, fa, ob)
				boss := f.assigner()
				next := "w0001"
				if boss == next {
					next = "w0002"
				}
				victim := "w0003" // not a candidate
				if tc.ack {
					fa.mu.Lock()
					fa.getErr[next+"|"+ackKey(simGroup, victim)] = errors.New("sim: 403 AccessDenied")
					fa.mu.Unlock()
				} else {
					ob.set(next+"|"+memberKey(simGroup, victim), errors.New("sim: 403 AccessDenied"))
				}
				t.Logf("crashing the assigner %s (owns %v); %s cannot read %s's liveness record", boss, f.o.Shards(boss), next, victim)
				f.crash(boss)
				time.Sleep(2 * f.ttl)
				if !forGood {
					ob.set(next+"|"+memberKey(simGroup, victim), nil)
				}
				if !rt5Balanced(f, 10*f.ttl) {
					a := rt7Assignment(t, f)
					t.Errorf("HOLE (halt): not balanced within 12 TTL of the crash: counts %v of %v; assignment gen %#x fence %v", f.o.Counts(f.live()), f.live(), a.Gen, a.Fence)
				}
				ob.set(next+"|"+memberKey(simGroup, victim), nil)
				fa.mu.Lock()
				delete(fa.getErr, next+"|"+ackKey(simGroup, victim))
				fa.mu.Unlock()
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}
