package shard

// Red team 4, against commit 04e73d0 (ack.After, shard/live, readNames):
// the sequences it found that broke rule 12 or halted a worker, fixed
// since, and those that held. The ones still open are in
// redteam4_open_test.go, behind the redteam tag.

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// rt4Victim returns a worker of f that is not the assigner.
func rt4Victim(t *testing.T, f *fleet) string {
	boss := f.assigner()
	for _, id := range f.ids() {
		if id != boss {
			return id
		}
	}
	t.Fatal("no worker besides the assigner")
	return ""
}

// rt4AfterRenewal waits until id's liveness record changes (a renewal).
func rt4AfterRenewal(f *fleet, id string) {
	before, _ := f.store.Bytes(memberKey(simGroup, id))
	for {
		time.Sleep(time.Millisecond)
		now, _ := f.store.Bytes(memberKey(simGroup, id))
		if string(now) != string(before) {
			return
		}
	}
}

// rt4Record decodes id's liveness record as stored.
func rt4Record(t *testing.T, f *fleet, id string) lease.Record {
	t.Helper()
	b, _ := f.store.Bytes(memberKey(simGroup, id))
	r, err := driver.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rt4Break breaks id's liveness record as leasehold break --force does
// (lease.Breaker), as an operator.
func rt4Break(t *testing.T, f *fleet, id string) {
	t.Helper()
	l, err := f.store.Open(memberKey(simGroup, id), lease.Options{Identity: "operator", TTL: f.ttl})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := l.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.(lease.Breaker).Break(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// TestRedTeam4BrokenRecordLostAcquireAnswer: an operator breaks the
// liveness record of a worker whose term T1 is cut off (its calls hang:
// it runs its shards until its renew deadline, counted from its last
// renewal). A second process of the worker acquires the broken record;
// that write lands but its answer is lost and the read back fails, so the
// lease keeps it as its own unseen acquisition. Its next Acquire takes
// that record over at once (ownUnseen). It dropped lease/broken from the
// annotations it carries, the record being held, so that nameTerm wrote
// shard/after = T1's name and the assigner freed T1's shards at once
// while T1 still ran them; the mark of the Lease's own unseen acquisition
// is kept now (lease/driver's Acquire), and T1's shards move only once
// the record has named other terms for a TTL.
func TestRedTeam4BrokenRecordLostAcquireAnswer(t *testing.T) { rt4BrokenRecord(t, true) }

// TestRedTeam4BrokenRecord: the control of the test above, without the
// lost answer: the second process's term says After "" (the record was
// broken), and T1's shards move only once the record has named other
// terms for a TTL. Held.
func TestRedTeam4BrokenRecord(t *testing.T) { rt4BrokenRecord(t, false) }

func rt4BrokenRecord(t *testing.T, lose bool) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 7, 3, 3)
		victim := rt4Victim(t, f)
		t1 := f.ackToken(victim)
		t.Logf("victim %s term %#x owns %v", victim, t1, f.o.Shards(victim))
		rt4AfterRenewal(f, victim)
		old := f.workers[victim]
		f.partition(victim, true) // T1 hangs: its shards run until its renew deadline
		rt4Break(t, f, victim)
		if r := rt4Record(t, f, victim); r.Annotations.Get(liveAnnotation) != liveName(t1) || r.Annotations.Get(lease.AnnotationBroken) == "" {
			t.Fatalf("broken record %v", r.Annotations)
		}
		// The second process: its first write (the acquisition) lands
		// but its answer is lost, and the read back fails.
		proc := victim + "#2"
		if lose {
			f.store.Delay(proc, 100*time.Millisecond)
			f.store.LoseResponses(proc, 1)
		}
		f.gone = append(f.gone, old)
		f.startProcess(victim, proc)
		for lose {
			if _, w := f.store.Calls(proc); w > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if lose {
			f.store.Partition(proc) // the read back fails
			time.Sleep(500 * time.Millisecond)
			f.store.Heal(proc)
		}
		for f.ackToken(victim) == t1 {
			time.Sleep(f.renew() / 16)
		}
		b, _ := f.store.Bytes(ackKey(simGroup, victim))
		k, _ := decodeAck(b)
		t.Logf("new term %#x After %q (T1's name %q); record %v", k.Token, k.After, liveName(t1), rt4Record(t, f, victim).Annotations)
		time.Sleep(2 * f.ttl)
		old.cancel()
		f.stopAll()
		hole(t, f, "")
	})
}

// TestRedTeam4ForgedAckAfterNamesLiveTerm: an acknowledgement of the
// victim written by hand (a tool, a copy) with a term token above the
// live term's, a liveness token the record vouches for (at most the
// record's), and After set to the live term's name (which its liveness
// record shows to any reader). The assigner took it for the victim's
// latest term and freed the live term's shards at once (dead: After
// named it), while the live term renewed and ran them; it now believes
// After only when a read of the liveness record found it naming that
// term and the term it took over (nameRun.took). The forged term
// says it left, so that the plan gives the live term's shards to the
// other workers (a forged term that did not leave stands for the victim,
// and the shards go to it, which nobody runs: no overlap, but idle shards
// until the live term finds the forgery at its next check and ends).
func TestRedTeam4ForgedAckAfterNamesLiveTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 7, 3, 3)
		victim := rt4Victim(t, f)
		live := f.ackToken(victim)
		lt := f.livenessToken(victim)
		forged := ack{Token: live + 1<<32, Lease: lt, After: liveName(live), Left: true}
		t.Logf("victim %s term %#x owns %v; forging term %#x After %q", victim, live, f.o.Shards(victim), forged.Token, forged.After)
		f.store.Put(ackKey(simGroup, victim), forged.encode())
		time.Sleep(3 * f.ttl)
		f.settle("after the forgery", time.Now(), f.o.Starts())
		f.stopAll()
		hole(t, f, "")
	})
}

// TestRedTeam4LongLiveNameHaltsWorker: a liveness record of a worker,
// released, whose shard/live is a long value (set by hand, within the
// annotations' bound of 1024 bytes). The worker's term that wins it
// copied the value into shard/after beside its own shard/live: the
// annotations exceeded the bound, its first renewal was refused
// (lease.ErrInvalid), and every later term ended the same way, the worker
// never getting its share. nameTerm now takes only a name liveName writes
// for After.
func TestRedTeam4LongLiveNameHaltsWorker(t *testing.T) {
	rt4HostileLiveName(t, strings.Repeat("a", 1000))
}

// TestRedTeam4MalformedLiveName: as above with a shard/live that is not a
// name (not 8 hex digits): copied into shard/after, harmless. Held.
func TestRedTeam4MalformedLiveName(t *testing.T) {
	rt4HostileLiveName(t, "not a name: ünïcode & <b>")
}

func rt4HostileLiveName(t *testing.T, value string) {
	synctest.Test(t, func(t *testing.T) {
		f := settledFleet(t, 6, 2, 2)
		id := "w0003"
		rec := lease.Record{Holder: id, Token: 1, TTL: f.ttl, Released: true, Nonce: driver.NewNonce(),
			Annotations: lease.Annotations{}.With(liveAnnotation, value)}
		if err := driver.Check(rec); err != nil {
			t.Fatal(err)
		}
		f.store.Put(memberKey(simGroup, id), driver.EncodeJSON(rec))
		f.join()
		limit := time.Now().Add(10 * f.ttl)
		for !f.o.Balanced(f.live()) && time.Now().Before(limit) {
			time.Sleep(f.renew() / 4)
		}
		if !f.o.Balanced(f.live()) {
			t.Errorf("HOLE (liveness): %s never gets its share within 10 TTL: counts %v; record %v", id, f.o.Counts(f.live()), rt4Record(t, f, id).Annotations.Map())
		}
		f.stopAll()
		hole(t, f, "")
	})
}

// TestRedTeam4RestoreOwnEarlierRecord: with D's acknowledgement taken for
// the victim's latest term (L's put back), a restore puts back an earlier
// write of L's own liveness record (it names L): L's next renewal finds
// the record gone back and L ends; the record names L meanwhile, so
// nothing frees L's shards early, and the group balances again.
func TestRedTeam4RestoreOwnEarlierRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, victim, _, earlier, _ := restoredGreaterTermFleet(t)
		key := memberKey(simGroup, victim)
		prev, _ := f.store.Bytes(key)
		rt4AfterRenewal(f, victim)
		own, _ := f.store.Bytes(ackKey(simGroup, victim))
		f.store.Put(ackKey(simGroup, victim), earlier)
		time.Sleep(f.renew() / 2)
		f.store.Put(ackKey(simGroup, victim), own)
		f.store.Put(key, prev)
		time.Sleep(3 * f.ttl)
		f.redVerdict(t)
	})
}
