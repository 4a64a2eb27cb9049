package shard

// Rule 12 against a restored acknowledgement (and liveness record) of an
// earlier term of a worker whose token is greater than its live term's
// (its records were deleted between): sequences a red team reproduced on
// 2bfaec6, each of which put two owners on a shard. assigner.dead took
// such a term, vouched for by a liveness record, for a later one, and
// freed the live term's shards a TTL after reading it, or at once when the
// record's token was above the live term's, while the live term renewed.
// It now frees them only when the later term's liveness took over the
// record that named the live term (ack.After), or when the liveness
// record, read at every listed version, has named other terms for a TTL.
// Each test also waits for the group to balance again.

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// restoredGreaterTermFleet builds the state of
// TestRestoredGreaterTermDoesNotHaltTheFence with the assigner surviving
// elsewhere: 7 shards over three candidates; the victim's term D (high
// half 2, liveness token 1) is recorded (earlier), then the assigner and
// the victim crash, the victim's liveness record, acknowledgement and the
// assignment are deleted, and the victim starts again (not campaigning):
// its live term L gets high half 1, liveness token 1, below D. The other
// survivor becomes the assigner, fences, and gives L its share (4 of 7:
// the victim is the lower identity of the two). It returns the victim,
// the survivor, D's acknowledgement and the victim's process name.
func restoredGreaterTermFleet(t *testing.T) (f *fleet, victim, other string, earlier []byte, proc string) {
	f = settledFleet(t, 7, 3, 3)
	boss := f.assigner()
	var rest []string
	for _, id := range f.ids() {
		if id != boss {
			rest = append(rest, id)
		}
	}
	victim, other = rest[0], rest[1]
	f.crash(victim)
	f.store.Delete(memberKey(simGroup, victim))
	f.o.Restart(victim)
	f.startProcess(victim, victim+"#2")
	for f.ackToken(victim)>>32 != 2 {
		time.Sleep(f.renew() / 16)
	}
	time.Sleep(2 * f.ttl)
	f.settle("the restart", time.Now(), f.o.Starts())
	earlier, _ = f.store.Bytes(ackKey(simGroup, victim))
	if k, _ := decodeAck(earlier); termHigh(k.Token) != 2 || k.Lease != 1 || k.Left {
		t.Fatalf("%s's term D: token %d, liveness %d, left %v; want high half 2, liveness 1, not left", victim, k.Token, k.Lease, k.Left)
	}
	f.crash(boss)
	f.crash(victim)
	f.store.Delete(memberKey(simGroup, victim))
	f.store.Delete(ackKey(simGroup, victim))
	f.store.Delete(assignmentKey(simGroup))
	f.o.Restart(victim)
	f.candidates = 2 // the victim's new process does not campaign
	proc = victim + "#3"
	f.startProcess(victim, proc)
	for f.ackToken(victim)>>32 != 1 {
		time.Sleep(f.renew() / 16)
	}
	f.settle("the assigner's crash", time.Now(), f.o.Starts())
	if a := f.assigner(); a != other {
		t.Fatalf("assigner %q, want %q", a, other)
	}
	t.Logf("victim %s owns %v, %s owns %v; L=%#x D=%#x", victim, f.o.Shards(victim), other, f.o.Shards(other), f.ackToken(victim), mustToken(t, earlier))
	return f, victim, other, earlier, proc
}

func mustToken(t *testing.T, b []byte) uint64 {
	k, err := decodeAck(b)
	if err != nil {
		t.Fatal(err)
	}
	return k.Token
}

func (f *fleet) redVerdict(t *testing.T) {
	t.Helper()
	f.settle("after the restores", time.Now(), f.o.Starts())
	f.stopAll()
	hole(t, f, "")
}

// hole reports whether the oracle saw two owners or an epoch out of order
// (where says at which phase), failing t if so.
func hole(t *testing.T, f *fleet, where string) bool {
	overlaps, backwards, first := f.o.Violations()
	if overlaps == 0 && backwards == 0 {
		return false
	}
	t.Errorf("HOLE%s: %d overlaps, %d epochs not increasing; first: %s", where, overlaps, backwards, first)
	return true
}

// TestRestoreThenRestoreBack: D's acknowledgement is restored over L's;
// once the assigner has read it (vouched: the record's liveness token 1 ≥
// D's), L's own acknowledgement is restored back, so L's checkAck finds
// nothing greater. The assigner takes D for the latest term but must not
// free L's shards while L renews the record that names it.
func TestRestoreThenRestoreBack(t *testing.T) {
	for _, back := range []time.Duration{0, 1, 2, 3} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, victim, _, earlier, _ := restoredGreaterTermFleet(t)
				own, _ := f.store.Bytes(ackKey(simGroup, victim))
				time.Sleep(back * f.renew() / 4)
				f.store.Put(ackKey(simGroup, victim), earlier)
				time.Sleep(f.renew() / 2) // two or so listings: the assigner reads it
				f.store.Put(ackKey(simGroup, victim), own)
				time.Sleep(3 * f.ttl)
				t.Logf("after: victim owns %v, L ack %#x", f.o.Shards(victim), f.ackToken(victim))
				f.redVerdict(t)
			})
		})
	}
}

// TestSingleRestoreOfAGreaterTerm: one restore only, D's acknowledgement
// over L's, at 16 phases across L's cycle of four assignment reads per
// check of its acknowledgement (4R = 1.5 TTL): a restore just after a
// check is found only at the next, up to 1.5 TTL later, so L's shards
// must not be freed before L ends. No other fault: L renews throughout.
func TestSingleRestoreOfAGreaterTerm(t *testing.T) {
	holes := 0
	for phase := range 16 {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, victim, _, earlier, _ := restoredGreaterTermFleet(t)
				time.Sleep(time.Duration(phase) * f.renew() / 4)
				f.store.Put(ackKey(simGroup, victim), earlier)
				time.Sleep(3 * f.ttl)
				f.settle("after the restore", time.Now(), f.o.Starts())
				f.stopAll()
				if hole(t, f, fmt.Sprintf(" at phase %d/16 of 4R", phase)) {
					holes++
				}
			})
		})
	}
	t.Logf("%d of 16 phases overlapped", holes)
}

// TestRestoredRecordFreesNotAtOnce: the victim's term D had liveness
// token 2 (its first term was cut off and lapsed); then the assigner and
// the victim crash and the victim's records and the assignment are
// deleted, so the victim's live term L gets liveness token 1, high half 1.
// A restore puts back D's liveness record (token 2, holder the victim) and
// D's acknowledgement. The assigner vouches for D (the record's token 2 ≥
// D's), but D's liveness token above L's does not say that D's lease went
// on from L's: L runs its shards until its next renewal finds the record
// changed (up to R), and stops at its renew deadline, so they are freed
// only after a TTL of reads of the record naming D.
func TestRestoredRecordFreesNotAtOnce(t *testing.T) { restoredRecord(t, true) }

// TestRestoredAckOnlyAboveTheRecord: as above without the
// liveness record's restore. Held: vouch refuses D (the live record's token
// 1 is below D's liveness token 2), so the assigner never takes D for the
// worker's latest term, and L, finding D at its next check, ends.
func TestRestoredAckOnlyAboveTheRecord(t *testing.T) { restoredRecord(t, false) }

func restoredRecord(t *testing.T, withRecord bool) {
	holes := 0
	for phase := range 8 {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := settledFleet(t, 7, 3, 3)
				boss := f.assigner()
				var rest []string
				for _, id := range f.ids() {
					if id != boss {
						rest = append(rest, id)
					}
				}
				victim := rest[0]
				f.partition(victim, false)
				time.Sleep(f.ttl)
				f.heal(victim)
				f.settle("the next term", time.Now(), f.o.Starts())
				time.Sleep(f.ttl)
				if got := f.livenessToken(victim); got != 2 {
					t.Fatalf("liveness token %d, want 2", got)
				}
				dAck, _ := f.store.Bytes(ackKey(simGroup, victim))
				dRec, _ := f.store.Bytes(memberKey(simGroup, victim))
				if k, _ := decodeAck(dAck); k.Lease != 2 || k.Left {
					t.Fatalf("D: %+v", k)
				}
				f.crash(boss)
				f.crash(victim)
				f.store.Delete(memberKey(simGroup, victim))
				f.store.Delete(ackKey(simGroup, victim))
				f.store.Delete(assignmentKey(simGroup))
				f.o.Restart(victim)
				f.candidates = 2
				f.startProcess(victim, victim+"#2")
				for f.ackToken(victim)>>32 != 1 {
					time.Sleep(f.renew() / 16)
				}
				f.settle("the assigner's crash", time.Now(), f.o.Starts())
				t.Logf("victim %s owns %v; L=%#x D=%#x", victim, f.o.Shards(victim), f.ackToken(victim), mustToken(t, dAck))
				time.Sleep(time.Duration(phase) * f.renew() / 8)
				if withRecord {
					f.store.Put(memberKey(simGroup, victim), dRec)
				}
				f.store.Put(ackKey(simGroup, victim), dAck)
				time.Sleep(3 * f.ttl)
				f.settle("after the restore", time.Now(), f.o.Starts())
				f.stopAll()
				if hole(t, f, fmt.Sprintf(" at phase %d/8 of R", phase)) {
					holes++
				}
			})
		})
	}
	t.Logf("%d of 8 phases overlapped", holes)
}

// TestLivenessRecordNamesItsTerm: a term's liveness record names it
// (shard/live) from its first renewal on, and a later term whose lease
// took over that record says so in its acknowledgement (ack.After), which
// is what lets the assigner free the earlier term's shards at once.
func TestLivenessRecordNamesItsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 6, 3, 3)
		id := f.ids()[0]
		first := f.ackToken(id)
		named := func() string {
			b, _ := f.store.Bytes(memberKey(simGroup, id))
			r, err := driver.DecodeJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			return r.Annotations.Get(liveAnnotation)
		}
		if got := named(); got != liveName(first) {
			t.Fatalf("%s's liveness record names %q, want its term %#x's %q", id, got, first, liveName(first))
		}
		f.partition(id, false) // its term lapses; the next takes over the record that names it
		time.Sleep(f.ttl)
		f.heal(id)
		f.settle("the next term", time.Now(), f.o.Starts())
		b, _ := f.store.Bytes(ackKey(simGroup, id))
		k, err := decodeAck(b)
		if err != nil || k.Token == first {
			t.Fatalf("%s's acknowledgement %+v (%v): want a term after %#x", id, k, err, first)
		}
		if k.After != liveName(first) || named() != liveName(k.Token) {
			t.Errorf("term %#x: After %q, record names %q; want After %q (the term it took over), the record naming %q", k.Token, k.After, named(), liveName(first), liveName(k.Token))
		}
		f.stopAll()
		hole(t, f, "")
	})
}

// TestBrokenLivenessRecordNamesNoTermTakenOver: a record an operator
// broke (leasehold break --force) has a holder that may run until its
// next renewal: the term that wins it says it took over no term.
func TestBrokenLivenessRecordNamesNoTermTakenOver(t *testing.T) {
	w := &Worker{cfg: Config{Rand: rand.NewPCG(1, 2)}}
	prev := lease.Annotations{}.With(liveAnnotation, "0badcafe")
	for _, c := range []struct {
		ann  lease.Annotations
		want string
	}{{prev, "0badcafe"}, {prev.With(lease.AnnotationBroken, "operator"), ""}, {lease.Annotations{}, ""}} {
		got := w.nameTerm(lease.Term{Annotations: c.ann})
		if a := got.Get(afterAnnotation); a != c.want || len(got.Get(liveAnnotation)) != 8 {
			t.Errorf("nameTerm over %q: after %q, live %q; want after %q and a name of 8 hex digits", c.ann, a, got.Get(liveAnnotation), c.want)
		}
	}
}
