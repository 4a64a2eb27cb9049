package shard

// Red team 5, against commit 85fd0af (the fence reads every ack; waitingOn;
// namedOthersFor of the latest term; leftForGood's shard/live check): two
// sequences that halted a group, fixed since.

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
)

// rt5Faults are per-key faults (memlease's are per process): Gets of a
// key that fail with err, or hang until the call's timeout.
type rt5Faults struct {
	mu       sync.Mutex
	getErr   map[string]error // key, or proc|key -> error returned by every Get
	hangGet  map[string]bool  // key -> Get hangs until ctx ends
	failRenw map[string]int   // proc -> Renews of its liveness to fail (not landed)
	slowRenw map[string]time.Duration
}

func newRT5Faults() *rt5Faults {
	return &rt5Faults{getErr: map[string]error{}, hangGet: map[string]bool{}, failRenw: map[string]int{}, slowRenw: map[string]time.Duration{}}
}

type rt5Store struct {
	Store
	fa   *rt5Faults
	proc string
}

func (s rt5Store) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	s.fa.mu.Lock()
	err, hang := cmp.Or(s.fa.getErr[key], s.fa.getErr[s.proc+"|"+key]), s.fa.hangGet[key]
	s.fa.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, "", ctx.Err()
	}
	if err != nil {
		return nil, "", err
	}
	return s.Store.Get(ctx, key, known)
}

func (s rt5Store) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Store.Lease(key, opts)
	if err != nil {
		return l, err
	}
	return rt5Lease{l, s}, nil
}

type rt5Lease struct {
	lease.Lease
	s rt5Store
}

func (l rt5Lease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	l.s.fa.mu.Lock()
	n, d := l.s.fa.failRenw[l.s.proc], l.s.fa.slowRenw[l.s.proc]
	if n > 0 {
		l.s.fa.failRenw[l.s.proc] = n - 1
	}
	delete(l.s.fa.slowRenw, l.s.proc)
	l.s.fa.mu.Unlock()
	if d > 0 {
		ctxtime.Sleep(ctx, d)
	}
	if n > 0 {
		return lease.Term{}, lease.ErrUnavailable
	}
	return l.Lease.Renew(ctx, t)
}
func (l rt5Lease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l rt5Lease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

// rt5StartProcess is fleet.startProcess with the per-key faults fa under
// the simulation's store.
func (f *fleet) rt5StartProcess(id, proc string, fa *rt5Faults) {
	f.wrapStore = func(proc string, s Store) Store { return rt5Store{s, fa, proc} }
	f.startProcess(id, proc)
}

// rt5Fleet is settledFleet with every process under fa.
func rt5Fleet(t *testing.T, n, m, candidates int, fa *rt5Faults) *fleet {
	f := newFleet(t, n)
	f.candidates = candidates
	for range m {
		f.next++
		id := idOf(f.next)
		f.rt5StartProcess(id, id, fa)
	}
	f.settle("start", time.Now(), 0)
	return f
}

func idOf(n int) string {
	return "w" + string(rune('0'+n/1000%10)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

// rt5Balanced waits up to d for the fleet to balance.
func rt5Balanced(f *fleet, d time.Duration) bool {
	limit := time.Now().Add(d)
	for !f.o.Balanced(f.live()) {
		if time.Now().After(limit) {
			return false
		}
		time.Sleep(f.renew() / 8)
	}
	return true
}

// TestRedTeam5UnreadableAckHaltsFence: one acknowledgement object that
// can be listed but never read (a retired worker's ack that a lifecycle
// rule moved to an archive tier: S3 GetObject answers 403
// InvalidObjectState for ever; or a key a bucket policy denies; or one
// whose reads hang) halted every new assigner before its fence (readAcks
// with no deadline reported false, round returned, for ever): a crashed
// worker's shards never moved. The fence now waits for unread ones for a
// TTL, and then is written without them (assigner.unread).
func TestRedTeam5UnreadableAckHaltsFence(t *testing.T) {
	for _, mode := range []string{"control", "error", "hang"} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa := newRT5Faults()
				f := rt5Fleet(t, 8, 4, 3, fa)
				retired := ackKey(simGroup, "w9999")
				f.store.Put(retired, ack{Token: 5 << 32, Left: true}.encode())
				fa.mu.Lock()
				switch mode {
				case "hang":
					fa.hangGet[retired] = true
				case "error":
					fa.getErr[retired] = errors.New("sim: 403 InvalidObjectState: the object is archived")
				}
				fa.mu.Unlock()
				time.Sleep(f.ttl)
				boss := f.assigner()
				var victim string
				for _, id := range f.ids() {
					if id != boss {
						victim = id
						break
					}
				}
				t.Logf("crashing the assigner %s and the worker %s (owns %v)", boss, victim, f.o.Shards(victim))
				f.crash(boss)
				f.crash(victim)
				if !rt5Balanced(f, 10*f.ttl) {
					t.Errorf("HOLE (liveness): not balanced within 10 TTL after the crashes: counts %v of %v; assigner %q", f.o.Counts(f.live()), f.live(), f.assigner())
				}
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}

// TestRedTeam5NewTermBuriedByReadsBeforeIt: namedOthersFor counted, for a
// term that no read had named yet, from the first read of the run
// (reads[0]), which may predate the term itself; it now counts only reads
// after the worker's latest term was first read (seenAt). The fence waits for the
// victim W (its term P cannot read the assignment, so never acknowledges
// it), so readNames reads W's record at every renewal of P, naming P, for
// over a TTL. An operator breaks W's record (P's calls hang: it stops at
// its renew deadline) and W's new process acquires it; its term L's first
// renewal, which writes shard/live = L, is slow (3 s, well within the
// renew deadline), while L says hello at once. The next round reads L's
// hello, and the record at L's acquisition, still naming P: no read has
// named L, namedOthersFor(L) = now - reads[0].at > TTL, dead(L), and bury
// writes L Left over its hello although L's process renews its liveness
// and is about to run shards. Worse, it never recovers: the assigner's
// acks[W] keeps Left (merge: a restored one takes nothing away), so L is
// never live and gets no shards; L does not end either (its checkAck takes
// a Left of its own token for a restore and writes its acknowledgement
// again: laterAcked ends a term only for a later term), and bury writes
// it Left again, every ~22 s, for as long as L lives. The worker never
// gets its share. The 0s case (first renewal at once) is the control.
func TestRedTeam5NewTermBuriedByReadsBeforeIt(t *testing.T) {
	for _, slow := range []time.Duration{0, 3 * time.Second} {
		t.Run(slow.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fa := newRT5Faults()
				f := rt5Fleet(t, 6, 3, 2, fa)
				boss, victim := f.assigner(), "w0003" // the victim does not campaign
				p := f.ackToken(victim)
				fa.mu.Lock()
				fa.getErr[victim+"|"+assignmentKey(simGroup)] = lease.ErrUnavailable
				fa.mu.Unlock()
				f.crash(boss)
				// The new assigner's fence waits for the victim, and reads its
				// record at every renewal, naming P.
				time.Sleep(2 * f.ttl)
				t.Logf("victim %s term P %#x owns %v; assigner %q", victim, p, f.o.Shards(victim), f.assigner())
				old := f.workers[victim]
				f.partition(victim, true)
				rt4Break(t, f, victim)
				proc := victim + "#2"
				fa.mu.Lock()
				fa.slowRenw[proc] = slow
				fa.mu.Unlock()
				f.gone = append(f.gone, old)
				f.rt5StartProcess(victim, proc, fa)
				for f.ackToken(victim) == p {
					time.Sleep(10 * time.Millisecond)
				}
				l := f.ackToken(victim)
				var buried bool
				for end := time.Now().Add(f.renew()); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
					b, _ := f.store.Bytes(ackKey(simGroup, victim))
					if k, err := decodeAck(b); err == nil && k.Token == l && k.Left {
						buried = true
						t.Logf("at %v after hello: L %#x written Left (record %v)", f.renew()-time.Until(end), l, rt4Record(t, f, victim).Annotations.Map())
						break
					}
				}
				if buried {
					t.Errorf("HOLE (mis-bury): the assigner wrote the live new term L %#x Left within a renew interval of its hello (first renewal %v late)", l, slow)
				}
				old.cancel()
				if !rt5Balanced(f, 10*f.ttl) {
					t.Errorf("HOLE (liveness): not balanced within 10 TTL: counts %v of %v", f.o.Counts(f.live()), f.live())
				}
				f.stopAll()
				hole(t, f, "")
			})
		})
	}
}

// TestTermWrittenLeftEnds: a term that finds its own acknowledgement
// written left, as an assigner that judged it dead writes it (bury), ends
// at its next check instead of writing its acknowledgement again, and its
// worker's next term takes part. (The assigner may already have given its
// shards away: the count that judges a term dead is what keeps that from
// happening to a live one, so this only shortens what it cannot prevent.)
func TestTermWrittenLeftEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 6, 3, 3)
		victim := rt4Victim(t, f)
		b, _ := f.store.Bytes(ackKey(simGroup, victim))
		k, err := decodeAck(b)
		if err != nil {
			t.Fatal(err)
		}
		k.Left = true
		f.store.Put(ackKey(simGroup, victim), k.encode())
		for limit := time.Now().Add(2 * f.ttl); f.ackToken(victim) == k.Token; time.Sleep(f.renew() / 16) {
			if time.Now().After(limit) {
				t.Fatalf("%s's term %#x still runs 2 TTL after its acknowledgement was written left", victim, k.Token)
			}
		}
		f.settle("the next term", time.Now(), f.o.Starts())
		f.stopAll()
	})
}
