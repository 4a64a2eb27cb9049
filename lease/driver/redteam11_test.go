package driver_test

// Red team 11: restores that a token under another holder did not catch.
// After a Lease reads a restore it takes no record at once, nor before
// its count ends, until the live holder's TTL (or the restored record's,
// if longer) has passed since (casLease.seen.horizon).

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// TestRedteam11RestoredTakeoverAboveTheLiveToken (rule 1; the claim of
// 2329058's driver change: "a contender that took over a restored body
// with a live holder's token and released it; another Lease that had read
// the live holder's record must not take the released one at once").
// The same history as the case it closes (cas_test.go, "token under
// another holder", sim seed 6000727864), but d's takeover of the restored
// body writes token 3, not c's 2: d's Lease had tried token 2 before, a
// write that failed with its read-back (it never landed; d never saw c's
// record), and never writes a token it tried again (rule 10). e, which
// read c's term 2, reads d's released record at token 3, above every
// token it has seen, and takes it at once, while c leads.
//
//	0 s      b acquires (token 1) and stops renewing; c, d, e read it
//	         every second
//	16.2 s   d's takeover of b's record (token 2) fails, and so does its
//	         read-back: d's count restarts at 17 s
//	27.5 s   c takes b's record over (token 2); e reads it at 27.55 s;
//	         at 27.6 s a restore puts b's body back (d read it at 27 s
//	         and reads it again at 28 s: d never sees c's record)
//	32.1 s   d takes b's body over with token 3, and releases it
//	32.3 s   e takes the released record at once (token 4); c, whose
//	         next renewal is due at 33.1 s and whose renew deadline is
//	         35.9 s, still leads
//
// e saw the restore itself: from 28 s to 31 s it read b's body back at
// token 1, below c's 2 (a restore by noteToken's own rule, waited out
// while it lasted). Then one record at a token above the highest e has
// seen wipes that knowledge, and its release is free at once: the check
// compares the token equal to the highest only. A Lease that has seen a
// restore under a token it read held (c's 2, last read at 27.55 s) could
// keep that holder's TTL from its last sight as a horizon before which
// no released record is taken at once, whatever its token. (Had e not
// read between 27.55 s and 32.3 s, nothing it read would tell this from
// c releasing token 2 and d taking 3 at once: not claimed here.)
func TestRedteam11RestoredTakeoverAboveTheLiveToken(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		began := time.Now()
		at := func(d time.Duration) { advance(d - time.Since(began)) }
		b, c, d, e := openLease(t, store, "b"), openLease(t, store, "c"), openLease(t, store, "d"), openLease(t, store, "e")
		mustAcquire(t, b)
		lapsed, _ := store.Bytes("job")
		tick := func(who ...lease.Lease) {
			for _, l := range who {
				mustObserve(t, l)
			}
		}
		for s := 100 * time.Millisecond; s < 15200*time.Millisecond; s += time.Second {
			at(s)
			tick(c, d, e)
		}
		// d's takeover, whose write and read-back fail: token 2 tried.
		at(15200 * time.Millisecond)
		store.Delay("d", time.Second)
		done := async(func() error { _, err := d.Acquire(t.Context()); return err })
		at(16 * time.Second)
		store.FailNext("d", 2)
		if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("d's Acquire: %v, want ErrUnavailable (write and read-back failed)", err)
		}
		store.Heal("d")
		if rec, _ := c.Observe(t.Context()); rec.Token != 1 || rec.Holder != "b" {
			t.Fatalf("record after d's failed takeover: %s/%d, want b's token 1", rec.Holder, rec.Token)
		}
		for s := 17 * time.Second; s < 27500*time.Millisecond; s += time.Second {
			at(s)
			tick(c, d, e)
		}
		at(27500 * time.Millisecond)
		tc := mustAcquire(t, c)
		cAt := time.Since(began)
		at(27550 * time.Millisecond)
		if rec := mustObserve(t, e); rec.Holder != "c" || rec.Token != 2 {
			t.Fatalf("e read %s/%d, want c's token 2", rec.Holder, rec.Token)
		}
		at(27600 * time.Millisecond)
		store.Put("job", lapsed) // a restore: c's record is hidden
		for s := 28 * time.Second; s < 32100*time.Millisecond; s += time.Second {
			at(s)
			tick(d, e)
		}
		at(32100 * time.Millisecond)
		td := mustAcquire(t, d)
		if td.Token <= tc.Token {
			t.Fatalf("d took the restored body with token %d, want above c's %d (the premise)", td.Token, tc.Token)
		}
		if err := d.Release(t.Context(), td); err != nil {
			t.Fatal(err)
		}
		at(32300 * time.Millisecond)
		te, err := e.Acquire(t.Context())
		if err == nil {
			t.Errorf("e took d's released record (token %d) at once at %v, with token %d, while c leads: c took token %d at %v, its renew deadline %v, its next renewal %v",
				td.Token, time.Since(began), te.Token, tc.Token, cAt, cAt+ttl*9/16, cAt+ttl*3/8)
			return
		}
		t.Logf("e refused: %v", err)
	})
}

// short is the TTL of b and d in twoTTLs.
const short = 3 * time.Second

// twoTTLs opens b and d with a TTL of 3 s, c and e with the test's, lets b
// take the lease, and has c and d read b's record every second from 0.1 s
// to 3.1 s. It returns at, which advances to an instant since it began,
// c, d and e, and b's record as b wrote it (lapsed at 3.1 s).
func twoTTLs(t *testing.T, store *memlease.Store) (at func(time.Duration), c, d, e lease.Lease, lapsed []byte) {
	began := time.Now()
	at = func(d time.Duration) { advance(d - time.Since(began)) }
	open := func(id string, ttl time.Duration) lease.Lease {
		l, err := store.Open("job", lease.Options{Identity: id, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	c, d, e = open("c", ttl), open("d", short), open("e", ttl)
	mustAcquire(t, open("b", short))
	lapsed, _ = store.Bytes("job")
	for s := 100 * time.Millisecond; s < 3200*time.Millisecond; s += time.Second {
		at(s)
		mustObserve(t, c)
		mustObserve(t, d)
	}
	return at, c, d, e, lapsed
}

// TestRedteam11RestoreWaitedOutForTheRestoredTTL (rules 1, 2; the claim of
// 2329058's driver change, in a fleet whose TTLs differ: the record
// carries its holder's TTL and renew interval, and a contender waits the
// holder's, as recorded). b (TTL 3 s) acquires and lapses; c (TTL 15 s)
// takes b's record over at 3.2 s with token 2, and e (TTL 15 s) reads it;
// a restore puts b's body back at 3.3 s; d (TTL 3 s), whose reads of b's
// body ran unbroken since 0.1 s (a second apart, within b's renew
// interval), takes it over with token 2 at 4.1 s and releases it. e reads
// the released record at c's token under d: a restore (noteToken), waited
// out, but for the TTL of that record, d's 3 s, not for c's 15 s: e takes
// the lease at 7.2 s while c, whose renew deadline is 11.6 s and whose
// first renewal is due at 8.8 s, leads. What may still be live is the
// holder at the highest token the Lease has seen (c), so the wait should
// be that record's TTL (and the same holds for a restore whose token went
// backward, the rule before 2329058).
func TestRedteam11RestoreWaitedOutForTheRestoredTTL(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		began := time.Now()
		at, c, d, e, lapsed := twoTTLs(t, store)
		at(3200 * time.Millisecond)
		tc := mustAcquire(t, c)
		cAt := time.Since(began)
		at(3250 * time.Millisecond)
		if rec := mustObserve(t, e); rec.Holder != "c" {
			t.Fatalf("e read %s's record, want c's", rec.Holder)
		}
		at(3300 * time.Millisecond)
		store.Put("job", lapsed) // a restore hides c's record
		at(4100 * time.Millisecond)
		td := mustAcquire(t, d)
		if td.Token != tc.Token {
			t.Fatalf("d took the restored body with token %d, want c's %d (the premise)", td.Token, tc.Token)
		}
		if err := d.Release(t.Context(), td); err != nil {
			t.Fatal(err)
		}
		for s := 4200 * time.Millisecond; s < cAt+ttl*3/8; s += time.Second {
			at(s)
			te, err := e.Acquire(t.Context())
			if err == nil {
				t.Errorf("e took the lease at %v (token %d), waiting out d's released record at c's token for d's TTL (%v); c took token %d at %v and leads until its first renewal at %v (its renew deadline %v)",
					time.Since(began), te.Token, short, tc.Token, cAt, cAt+ttl*3/8, cAt+ttl*9/16)
				return
			}
			wantHeld(t, "e's Acquire", err, "d")
		}
	})
}

// TestRedteam11RestoreHorizonRecordDeleted (rule 1): the horizon holds
// when the record is gone. As in cas_test.go's "token under another
// holder" (sim seed 6000727864): c takes b's lapsed term 1 over (token 2)
// and e reads c's record; a restore puts b's body back, d (which never
// saw c's record) takes it over with token 2 and releases it, and e reads
// that released record at c's token under d: a restore, its horizon c's
// TTL from that read. Then the record is deleted (a lifecycle rule, a
// person). The last record e read was released, so its absence alone is
// not waited out (heldTTL): only the horizon keeps e from taking the key
// as free while c, which wrote token 2 at e's read, may still lead. e
// must be refused, with a Wait that runs to the horizon, at every
// Acquire until the horizon has passed, and take the key (token 3) at
// once when it has.
func TestRedteam11RestoreHorizonRecordDeleted(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		e, tc, td := restoreUnderAnotherHolder(t, store)
		if td.Token != tc.Token {
			t.Fatalf("d took the restored body with token %d, want c's %d (the premise)", td.Token, tc.Token)
		}
		if rec := mustObserve(t, e); rec.Holder != "d" || rec.Token != tc.Token || !rec.Released {
			t.Fatalf("e read %s/%d released %t, want d's released record at token %d", rec.Holder, rec.Token, rec.Released, tc.Token)
		}
		horizon := time.Now().Add(ttl) // c's TTL (and d's) from e's read of the restore
		advance(ttl / 10)
		store.Delete("job")
		// e tries every tenth of a TTL, and a millisecond before the horizon.
		for left := time.Until(horizon); left > 0; left = time.Until(horizon) {
			te, err := e.Acquire(t.Context())
			if err == nil {
				t.Fatalf("e took the deleted key as free (token %d) %v before the horizon of the restore it read, while c (token %d) may lead", te.Token, left, tc.Token)
			}
			if held := wantHeld(t, "e's Acquire of the deleted key before the horizon", err, ""); held.Wait != left {
				t.Errorf("Wait = %v, %v before the horizon: want the time to the horizon", held.Wait, left)
			}
			advance(max(min(ttl/10, left-time.Millisecond), time.Millisecond))
		}
		te, err := e.Acquire(t.Context())
		if err != nil {
			t.Fatalf("e's Acquire of the deleted key at the horizon: %v, want a term", err)
		}
		if te.Token != tc.Token+1 {
			t.Errorf("e's term: token %d, want %d (above c's)", te.Token, tc.Token+1)
		}
	})
}

// TestRestoreHorizonIsTheLongerTTL (rules 1, 2): the horizon after a
// restore is the TTL of the restored record when that is longer than the
// TTL of the record at the highest token the Lease had seen, since a Lease
// cannot tell which of two records at one token is the live holder's. e
// (TTL 15 s) first reads d's record at token 2 (TTL 3 s), a takeover of b's
// lapsed body, released at once; a restore puts b's body back, and c (TTL
// 15 s), whose reads never saw d's record, takes it over with token 2 and
// leads. e reads c's record (token 2 under another holder: a restore to
// e), then a second restore puts d's released record back. To e, that
// record is the one it saw at its highest token: only the horizon keeps
// it from taking the lease while c leads, and a horizon of the 3 s TTL of
// d's record ends long before c steps down.
func TestRestoreHorizonIsTheLongerTTL(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		began := time.Now()
		at, c, d, e, lapsed := twoTTLs(t, store)
		at(3200 * time.Millisecond)
		if err := d.Release(t.Context(), mustAcquire(t, d)); err != nil {
			t.Fatal(err)
		}
		released, _ := store.Bytes("job")
		at(3250 * time.Millisecond)
		if rec := mustObserve(t, e); rec.Holder != "d" || rec.Token != 2 {
			t.Fatalf("e read %s/%d, want d's token 2", rec.Holder, rec.Token)
		}
		at(3300 * time.Millisecond)
		store.Put("job", lapsed) // a restore hides d's writes from c
		at(3400 * time.Millisecond)
		tc := mustAcquire(t, c)
		if tc.Token != 2 {
			t.Fatalf("c took b's body with token %d, want 2 (the premise)", tc.Token)
		}
		cAt := time.Since(began)
		at(3500 * time.Millisecond)
		if rec := mustObserve(t, e); rec.Holder != "c" {
			t.Fatalf("e read %s's record, want c's", rec.Holder)
		}
		at(3600 * time.Millisecond)
		store.Put("job", released) // a second restore hides c's record
		for s := 3700 * time.Millisecond; s < cAt+ttl*3/8; s += time.Second {
			at(s)
			te, err := e.Acquire(t.Context())
			if err == nil {
				t.Errorf("e took the lease at %v (token %d) while c leads: c took token %d at %v, its first renewal due at %v",
					time.Since(began), te.Token, tc.Token, cAt, cAt+ttl*3/8)
				return
			}
			wantHeld(t, "e's Acquire", err, "d")
		}
	})
}
