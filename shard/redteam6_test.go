package shard

// Red team 6, against commit 9a3c73a (the fence written without the
// acknowledgements it cannot read for a TTL; namedOthersFor from seenAt;
// checkAck ending a term written Left): acknowledgements of an earlier
// assigner's fence with the same Gen, read late or rewritten, passed for
// the new fence's, fixed since by the fence's random low half and by a
// failed vouch counting as a failed read. The one still open, the Gens'
// limit, is in redteam6_open_test.go.

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// rt6Obs fails the Observes of a liveness record (key, or proc|key).
type rt6Obs struct {
	mu  sync.Mutex
	err map[string]error
}

func (o *rt6Obs) set(k string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		delete(o.err, k)
	} else {
		o.err[k] = err
	}
}

type rt6Store struct {
	Store
	ob   *rt6Obs
	proc string
}

func (s rt6Store) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Store.Lease(key, opts)
	if err != nil {
		return l, err
	}
	return rt6Lease{l, s, key}, nil
}

type rt6Lease struct {
	lease.Lease
	s   rt6Store
	key string
}

func (l rt6Lease) Observe(ctx context.Context) (lease.Record, error) {
	l.s.ob.mu.Lock()
	err := cmp.Or(l.s.ob.err[l.key], l.s.ob.err[l.s.proc+"|"+l.key])
	l.s.ob.mu.Unlock()
	if err != nil {
		return lease.Record{}, err
	}
	return l.Lease.Observe(ctx)
}
func (l rt6Lease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l rt6Lease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

// rt6StartProcess is rt5StartProcess with Observe faults ob too.
func (f *fleet) rt6StartProcess(id, proc string, fa *rt5Faults, ob *rt6Obs) {
	f.wrapStore = func(proc string, s Store) Store { return rt6Store{rt5Store{s, fa, proc}, ob, proc} }
	f.startProcess(id, proc)
}

// rt6Fleet is rt5Fleet with Observe faults ob too.
func rt6Fleet(t *testing.T, n, m, candidates int, fa *rt5Faults, ob *rt6Obs) *fleet {
	f := newFleet(t, n)
	f.candidates = candidates
	for range m {
		f.next++
		id := idOf(f.next)
		f.rt6StartProcess(id, id, fa, ob)
	}
	f.settle("start", time.Now(), 0)
	return f
}

// rt6WaitFence waits up to 3 TTL for an assignment to be stored, and
// returns it.
func rt6WaitFence(t *testing.T, f *fleet) *assignment {
	t.Helper()
	for limit := time.Now().Add(3 * f.ttl); ; time.Sleep(f.renew() / 64) {
		if b, ok := f.store.Bytes(assignmentKey(simGroup)); ok {
			a, err := decodeAssignment(b)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
		if time.Now().After(limit) {
			t.Fatal("no fence within 3 TTL")
		}
	}
}

var errArchived = errors.New("sim: 403 InvalidObjectState: the object is archived")

// rt6Ack decodes id's acknowledgement as stored.
func rt6Ack(t *testing.T, f *fleet, id string) ack {
	t.Helper()
	b, _ := f.store.Bytes(ackKey(simGroup, id))
	k, err := decodeAck(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestRedTeam6UnreadAckRewrittenPassesForTheFence: assigner A1 (token 1)
// fences; the victim acknowledges it and applies A1's later Gens without
// acknowledging again, then can no longer read the assignment (it runs
// its shards: its liveness renews). A1 crashes; the assigner lease's
// record and the assignment are deleted; A1's process restarts and wins
// the lease with token 1 again, but cannot read the victim's
// acknowledgement (archived) for a TTL, so it writes its fence without
// it. A restore puts the victim's hello back, and its checkAck writes its
// latest again at a new version. When the fence's Gen was token<<32, the
// same as A1's, that acknowledgement of A1's fence passed for the new
// one's: the plan gave A1's Gens again (epochs not increasing), and, with
// a third worker's shards moved out of order, started shards the victim
// still ran (overlap). The fence's low half is random now, and an
// acknowledgement counts only if it names the fence's Gen.
func TestRedTeam6UnreadAckRewrittenPassesForTheFence(t *testing.T) {
	for _, tc := range []struct {
		name           string
		restore, third bool
	}{{"control", false, false}, {"restore", true, false}, {"control, a third worker left", false, true}, {"restore, a third worker left", true, true}} {
		restore := tc.restore
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa := newRT5Faults()
				m := 2
				if tc.third {
					m = 3
				}
				f := rt5Fleet(t, 9, m, 1, fa)
				boss, victim := "w0001", "w0002"
				if f.assigner() != boss {
					t.Fatalf("assigner %q", f.assigner())
				}
				if tc.third {
					// Its shards go to the others, out of the order a plan
					// from no owners would give them in.
					f.leave("w0003")
					f.settle("leave", time.Now(), f.o.Starts())
				}
				k := rt6Ack(t, f, victim)
				t.Logf("victim %s ack: token %#x applied %#x seen %#x; owns %v", victim, k.Token, k.Applied, k.Seen, f.o.Shards(victim))
				if k.Applied>>32 != 1 || k.Seen != k.Applied {
					t.Skipf("the victim's ack is not the first fence's")
				}
				// The victim can no longer read the assignment (it keeps its
				// shards: its liveness renews), and the new assigner process
				// cannot read the victim's acknowledgement.
				fa.mu.Lock()
				fa.getErr[victim+"|"+assignmentKey(simGroup)] = lease.ErrUnavailable
				fa.getErr[boss+"#2|"+ackKey(simGroup, victim)] = errArchived
				if tc.third { // the retired worker's ack, archived for good
					fa.getErr[ackKey(simGroup, "w0003")] = errArchived
				}
				fa.mu.Unlock()
				f.crash(boss)
				f.store.Delete(assignerKey(simGroup))
				f.store.Delete(assignmentKey(simGroup))
				f.o.Restart(boss)
				f.candidates = 10
				f.rt5StartProcess(boss, boss+"#2", fa)
				// The fence is written without the victim's ack, a TTL on.
				for limit := time.Now().Add(3 * f.ttl); ; time.Sleep(f.renew() / 16) {
					if _, ok := f.store.Bytes(assignmentKey(simGroup)); ok {
						break
					}
					if time.Now().After(limit) {
						t.Fatal("no fence within 3 TTL")
					}
				}
				b, _ := f.store.Bytes(assignmentKey(simGroup))
				a, err := decodeAssignment(b)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("assignment gen %#x fence %v", a.Gen, a.Fence)
				if restore {
					// A restore of an earlier version of the victim's ack
					// (its hello); its checkAck writes its latest back.
					f.store.Put(ackKey(simGroup, victim), ack{Token: k.Token, Lease: k.Lease, After: k.After}.encode())
				}
				fa.mu.Lock()
				delete(fa.getErr, boss+"#2|"+ackKey(simGroup, victim))
				fa.mu.Unlock()
				time.Sleep(4 * f.ttl)
				t.Logf("victim owns %v, %s owns %v", f.o.Shards(victim), boss, f.o.Shards(boss))
				fa.mu.Lock()
				delete(fa.getErr, victim+"|"+assignmentKey(simGroup))
				fa.mu.Unlock()
				time.Sleep(2 * f.ttl)
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}

// TestRedTeam6VouchFailureBeforeTheFence: before the fence, the read of
// an acknowledgement succeeded but the read of its worker's liveness
// record (vouch) failed, and readAcks still reported that it had read
// every one: the fence was written at once, with the Gen of the crashed
// assigner's fence (its lease record and the assignment deleted, the same
// token again), and in the next round the acknowledgement of that fence
// counted as acknowledging this one. One failed liveness read, no other
// fault. A failed vouch now counts as a failed read, and the fence's Gen
// has a random low half.
func TestRedTeam6VouchFailureBeforeTheFence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fail  bool
		third bool
	}{{"control", false, false}, {"vouch fails", true, false}, {"control, a third worker left", false, true}, {"vouch fails, a third worker left", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa, ob := newRT5Faults(), &rt6Obs{err: map[string]error{}}
				m := 2
				if tc.third {
					m = 3
				}
				f := rt6Fleet(t, 9, m, 1, fa, ob)
				boss, victim := "w0001", "w0002"
				if f.assigner() != boss {
					t.Fatalf("assigner %q", f.assigner())
				}
				if tc.third {
					f.leave("w0003")
					f.settle("leave", time.Now(), f.o.Starts())
					// The retired worker's ack: deleted by a cleanup.
					f.store.Delete(ackKey(simGroup, "w0003"))
				}
				k := rt6Ack(t, f, victim)
				t.Logf("victim %s ack: token %#x applied %#x seen %#x; owns %v", victim, k.Token, k.Applied, k.Seen, f.o.Shards(victim))
				if k.Applied>>32 != 1 || k.Seen != k.Applied {
					t.Skipf("the victim's ack is not the first fence's")
				}
				if tc.fail {
					ob.set(boss+"#2|"+memberKey(simGroup, victim), lease.ErrUnavailable)
				}
				// For a while, the victim cannot read the assignment (it runs
				// its shards meanwhile: its liveness renews), so it does not
				// say, reading the new fence, that it has seen Gens above it.
				fa.mu.Lock()
				fa.getErr[victim+"|"+assignmentKey(simGroup)] = lease.ErrUnavailable
				fa.mu.Unlock()
				f.crash(boss)
				f.store.Delete(assignerKey(simGroup))
				f.store.Delete(assignmentKey(simGroup))
				f.o.Restart(boss)
				f.candidates = 10
				f.rt6StartProcess(boss, boss+"#2", fa, ob)
				a := rt6WaitFence(t, f)
				ob.set(boss+"#2|"+memberKey(simGroup, victim), nil)
				t.Logf("fence gen %#x", a.Gen)
				time.Sleep(2 * f.ttl)
				t.Logf("victim owns %v, %s owns %v", f.o.Shards(victim), boss, f.o.Shards(boss))
				fa.mu.Lock()
				delete(fa.getErr, victim+"|"+assignmentKey(simGroup))
				fa.mu.Unlock()
				time.Sleep(2 * f.ttl)
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}
