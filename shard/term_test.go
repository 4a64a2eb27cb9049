package shard

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/driver"
)

// settledFleet starts m workers sharing n shards, the first candidates of
// them campaigning to be the assigner, and waits until they are balanced.
func settledFleet(t *testing.T, n, m, candidates int) *fleet {
	f := newFleet(t, n)
	f.candidates = candidates
	for range m {
		f.join()
	}
	f.settle("start", time.Now(), 0)
	return f
}

// livenessToken returns the token of id's liveness record.
func (f *fleet) livenessToken(id string) uint64 {
	f.t.Helper()
	b, _ := f.store.Bytes(memberKey(simGroup, id))
	r, err := driver.DecodeJSON(b)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Token
}

// TestRestartAfterTheMemberRecordWasDeleted: a worker whose liveness term
// k crashed, its liveness record deleted (a person "resetting" it, a
// lifecycle rule), and which is started again within a TTL, gets token 1
// from its liveness lease again. Its new term is a term of its own all the
// same (termToken): with k = 1 it does not take the crashed term's shards
// as its own and start them under their old epochs; with k ≥ 2 the
// assigner does not keep them for the dead term k for ever, but gives them
// back to the new term once the dead one has certainly stopped. With the
// worker's acknowledgement and the assignment deleted too, the new term
// finds no record of term k and its token falls below k's again: reading
// k named in the assignment the assigner writes again, it ends, and the
// next term begins above k (session.laterNamed).
func TestRestartAfterTheMemberRecordWasDeleted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		k      uint64
		others bool // delete the acknowledgement and the assignment too
	}{
		{"k = 1", 1, false},
		{"k = 2", 2, false},
		{"k = 2, its acknowledgement and the assignment deleted too", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := settledFleet(t, 12, 3, 1)
				victim := "w0003"
				for f.livenessToken(victim) < tc.k {
					// Its calls fail past its renew deadline: the term ends,
					// and the next one begins once they no longer fail.
					f.partition(victim, false)
					time.Sleep(f.ttl)
					f.heal(victim)
					f.settle("the next term", time.Now(), f.o.Starts())
				}
				if got := f.livenessToken(victim); got != tc.k {
					t.Fatalf("%s's liveness token before the crash: %d; want %d", victim, got, tc.k)
				}
				f.crash(victim)
				f.store.Delete(memberKey(simGroup, victim))
				time.Sleep(f.ttl / 4)
				if tc.others { // just before the restart: the assigner writes it again soon
					f.store.Delete(ackKey(simGroup, victim))
					f.store.Delete(assignmentKey(simGroup))
				}
				f.o.Restart(victim)
				f.startProcess(victim, victim+"-restarted")
				took, _ := f.settle("restart", time.Now(), f.o.Starts())
				t.Logf("restart after the delete → balanced in %.2f TTL", took.Seconds()/f.ttl.Seconds())
				f.stopAll()
				if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 {
					t.Errorf("%d overlaps, %d epochs not increasing; first: %s", overlaps, backwards, first)
				}
			})
		})
	}
}

// TestFenceWaitsForTermsItCannotName: a new assigner that read an
// assignment restored to one that does not name a worker's current term
// waits, before it gives out the shards that term runs, for that term's
// acknowledgement of its fence or for its liveness's expiry, even when
// what it lists of the worker says nothing of that term: its
// acknowledgement restored to one of an earlier term that left (the
// liveness record names a later term: leftForGood), the sequence of seed
// 3597 of TestRandomFaults; or its liveness record deleted (the worker is
// watched for its acknowledgement's key, and an absent liveness key counts
// towards expiry), while it is cut off and runs its shards until its renew
// deadline. Both were limits the package doc admitted. With its
// acknowledgement deleted too (seed 234, shrunk), nothing the new assigner
// lists names the term; the acknowledgements of the others, read before
// the fence, say that an assignment later than the one read was written,
// so the fence waits until no identity its listings have not shown can
// run a term (judge.unknownExpired).
func TestFenceWaitsForTermsItCannotName(t *testing.T) {
	for _, tc := range []struct {
		name string
		hide func(f *fleet, id string, left []byte)
	}{
		{"its acknowledgement restored to an earlier term's that left", func(f *fleet, id string, left []byte) {
			f.store.Put(ackKey(simGroup, id), left)
		}},
		{"its liveness record deleted while it is cut off", func(f *fleet, id string, _ []byte) {
			f.partition(id, true) // it runs its shards until its renew deadline
			f.store.Delete(memberKey(simGroup, id))
		}},
		{"its liveness record and its acknowledgement deleted while it is cut off", func(f *fleet, id string, _ []byte) {
			f.partition(id, true)
			f.store.Delete(memberKey(simGroup, id))
			f.store.Delete(ackKey(simGroup, id))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := settledFleet(t, 12, 2, 2)
				old, _ := f.store.Bytes(assignmentKey(simGroup)) // names no term of w0003
				hidden := f.join()
				f.settle("join", time.Now(), f.o.Starts())
				f.leave(hidden) // a graceful restart: this term says it left
				left, _ := f.store.Bytes(ackKey(simGroup, hidden))
				f.start(hidden)
				f.settle("restart", time.Now(), f.o.Starts())
				f.crash(f.assigner())
				time.Sleep(f.ttl * 7 / 8) // just before the other candidate takes over
				f.store.Put(assignmentKey(simGroup), old)
				tc.hide(f, hidden, left)
				time.Sleep(2 * f.ttl)
				f.heal(hidden)
				f.settle("the assigner's crash", time.Now(), f.o.Starts())
				f.stopAll()
				if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 {
					t.Errorf("%d overlaps, %d epochs not increasing; first: %s", overlaps, backwards, first)
				}
			})
		})
	}
}

// TestNewTermIsNotBuried: a worker that left, whose liveness record has
// stood released for longer than a TTL (its liveness judged expired), starts
// again under its identity and acquires its liveness at once. A listing
// sent before that acquisition still judges it expired, and shows its
// acknowledgement changed (here rewritten, as a restore of
// acknowledgements does); the assigner reads that acknowledgement after
// the listing, and gets the new term's hello. That term is not the expired
// one (assigner.expired): burying it, as seed 2254 of TestRandomFaults
// did, left the worker out of the group for good, and the group never
// balanced. The assigner's calls are slow, an eighth of a renew interval,
// so that the hello falls between its listing and its read in one trial of
// every three or so; the trials shift the rewrite by a twenty-fourth of a
// renew interval each.
func TestNewTermIsNotBuried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 1)
		f.store.Delay("w0001", f.renew()/8)
		victim := "w0002"
		for trial := range 12 {
			f.leave(victim)
			time.Sleep(f.ttl + f.renew() + f.renew()*time.Duration(trial)/24)
			b, _ := f.store.Bytes(ackKey(simGroup, victim))
			k, err := decodeAck(b)
			if err != nil {
				t.Fatal(err)
			}
			f.store.Put(ackKey(simGroup, victim), k.encode())
			time.Sleep(f.renew() / 8)
			f.start(victim)
			since := time.Now()
			for !f.o.Balanced(f.live()) {
				if time.Since(since) > 6*f.ttl {
					t.Fatalf("trial %d: not balanced within 6 TTL of %s's new term: counts %v", trial, victim, f.o.Counts(f.live()))
				}
				time.Sleep(f.renew() / 16)
			}
		}
		f.stopAll()
	})
}

// ackToken returns the term token of id's acknowledgement as stored, 0
// if there is none.
func (f *fleet) ackToken(id string) uint64 {
	b, _ := f.store.Bytes(ackKey(simGroup, id))
	k, _ := decodeAck(b)
	return k.Token
}

// TestRestoredGreaterTermDoesNotHaltTheFence: a worker's term whose token
// fell below an earlier term's (its liveness record, its acknowledgement
// and the assignment deleted before it began, so that nothing named the
// earlier term) finds that earlier term's acknowledgement restored over
// its own. A new assigner reads it (the record vouches for it: its
// liveness token is 1, as the new term's is) and takes the greater token
// for the worker's latest term, which never acknowledges the fence and
// whose liveness never expires, since the new term renews the record; the
// fence names no term of the worker, so the new term never learns of it.
// The group halted, nothing running anywhere (seed 3869 of
// TestRandomFaults, whose new term was the new assigner's own worker; seed
// 1853's assigner buried the earlier term instead, and the new term wrote
// its acknowledgement back over the burial for ever). The new term, reading
// its acknowledgement back after the restore refused its write, ends, and
// the next begins above the term it found (session.laterAcked).
func TestRestoredGreaterTermDoesNotHaltTheFence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 12, 3, 3)
		victim := "w0003"
		if f.assigner() == victim {
			victim = "w0002"
		}
		// A term whose high half its floor raised above its liveness
		// token: killed, its record deleted, started again.
		f.crash(victim)
		f.store.Delete(memberKey(simGroup, victim))
		f.o.Restart(victim)
		f.startProcess(victim, victim+"#2")
		for f.ackToken(victim)>>32 != 2 { // its hello
			time.Sleep(f.renew() / 16)
		}
		time.Sleep(2 * f.ttl)
		f.settle("the restart", time.Now(), f.o.Starts())
		earlier, _ := f.store.Bytes(ackKey(simGroup, victim))
		if k, _ := decodeAck(earlier); termHigh(k.Token) != 2 || k.Lease != 1 {
			t.Fatalf("%s's term before the second restart: token %d, liveness %d; want high half 2, liveness 1", victim, k.Token, k.Lease)
		}
		// The assigner crashes, and so does the victim, whose records are
		// all deleted: the next term's token falls below the earlier one's.
		boss := f.assigner()
		f.crash(boss)
		f.crash(victim)
		f.store.Delete(memberKey(simGroup, victim))
		f.store.Delete(ackKey(simGroup, victim))
		f.store.Delete(assignmentKey(simGroup))
		f.o.Restart(victim)
		f.startProcess(victim, victim+"#3")
		for f.ackToken(victim)>>32 != 1 { // its hello
			time.Sleep(f.renew() / 16)
		}
		f.store.Put(ackKey(simGroup, victim), earlier)
		took, _ := f.settle("the assigner's crash", time.Now(), f.o.Starts())
		t.Logf("balanced %.2f TTL after the restore", took.Seconds()/f.ttl.Seconds())
		f.stopAll()
		if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 {
			t.Errorf("%d overlaps, %d epochs not increasing; first: %s", overlaps, backwards, first)
		}
	})
}
