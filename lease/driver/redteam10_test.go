package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
)

// TestRedteam10OneLeaseAcquireBesideItsOwnRenewals (rule 14; attacks
// that held on 0f1d4ba). Two callers on one CAS Lease value: a holds a
// term and renews it; b, on the same Lease, Acquires beside it.
//
//   - a's renewal lands with its answer lost and its read-back cut off (an
//     unknown outcome, pending): b's Acquire reads that renewal, a version
//     this Lease never saw answered, and is refused (its count starts
//     there); a's next Renew goes on from it.
//   - a renews every renew interval for three TTLs while b Acquires every
//     second: b is never granted the live term's record.
//   - a's Acquire hangs in the store (holding the Lease's one Acquire
//     slot): b's Acquire, whose context ends while it waits for the slot,
//     returns the context's error at once, and once a's Acquire gave up
//     (CallTimeout), b's next Acquire runs: nothing is left holding the
//     slot.
func TestRedteam10OneLeaseAcquireBesideItsOwnRenewals(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		l := openLease(t, store, "a")
		tm := mustAcquire(t, l)

		store.LoseResponses("a", 1)
		store.Delay("a", time.Second)
		renewed := async(func() error { _, err := l.Renew(t.Context(), tm); return err })
		advance(500 * time.Millisecond) // the write started at 0 s; the read-back starts at 1 s
		store.FailNext("a", 1)
		if err := <-renewed; err == nil || errors.Is(err, lease.ErrLost) {
			t.Fatalf("Renew whose answer and read-back were lost: %v, want an unknown outcome", err)
		}
		store.Heal("a")
		if _, err := l.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("Acquire on the holder's own Lease after its unanswered renewal landed: %v, want lease.ErrHeld", err)
		}
		tm = mustRenew(t, l, tm)

		for i := range 3 * 8 {
			advance(time.Second)
			if got, err := l.Acquire(t.Context()); err == nil {
				t.Fatalf("Acquire at %d s granted token %d while term %d renews", i, got.Token, tm.Token)
			}
			if i%5 == 4 {
				tm = mustRenew(t, l, tm)
			}
		}
		if err := l.Release(t.Context(), tm); err != nil {
			t.Fatal(err)
		}

		store.Hang("a")
		hung := async(func() error { _, err := l.Acquire(t.Context()); return err })
		advance(100 * time.Millisecond)
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		began := time.Now()
		reads, writes := store.Calls("a")
		if _, err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Acquire waiting for the slot until its context ended: %v, want context.DeadlineExceeded", err)
		}
		if d := time.Since(began); d > 200*time.Millisecond {
			t.Errorf("Acquire waiting for the slot returned %v after its context ended", d-200*time.Millisecond)
		}
		if r, w := store.Calls("a"); r != reads || w != writes {
			t.Errorf("an Acquire beside a hung one on the same Lease called the store (%d reads, %d writes): want it to wait for the slot", r-reads, w-writes)
		}
		if err := <-hung; err == nil {
			t.Fatal("the hung Acquire won")
		}
		store.Heal("a")
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Errorf("Acquire after the hung one gave up: %v, want the released lease", err)
		}
	})
}

// TestRedteam10TokenOfAWriteReplacedBeforeItsReadBack (rule 10, and
// lease.Acquire's "the token it writes is greater than every token this
// Lease has read or written"; failed on 207b0b0, fixed in 8a4151d). old holds the lease
// (token 1) and renews once, then stops. a watches the renewal for a TTL
// and Acquires it: the write of token 2 lands, its answer is lost, and
// before the read-back a restore puts back a body of old's term: its
// first record ("an older body": the Acquire reports it held), or the
// renewal a read ("the body it read", the same bytes, so the same
// version: the Acquire reports the write failed, to retry). Either way
// the engine forgets the token it wrote: write notes want.Token only when
// the read-back failed (got.Version == ""), not when it found a record,
// though the write may have landed and been replaced since, as here. a
// takes the restored record over with token 2 again (at once, for the
// body it read, whose count went on): the Lease wrote a token at or below
// one it had written before.
//
// Simulation: of 8 "token did not increase" seeds of a focused run (base
// 1796530880655940900, -kinds once,run -faults outage,restore-hang,
// restore-under,late-answer,fail-writes, with the oracle's restore-under
// waiver judged by version; see the report), 6 are this: e.g.
// 1796530880655941330 (an older body) and 1796530880655941711 (the very
// version the write was conditional on, put back by restore-under). Noting
// want.Token on every failed write makes all 6 pass; noting it only when
// the read-back found another version leaves 1796530880655941711
// failing. The cost: a token skipped after a write that never reached the
// store (TestCASFailedTakeoverIsUnavailable wants 2 there, and would get 3).
func TestRedteam10TokenOfAWriteReplacedBeforeItsReadBack(t *testing.T) {
	for _, tc := range []struct {
		name       string
		restoreOld bool
		want       error
	}{
		{"an older body", true, lease.ErrHeld},
		{"the body it read", false, lease.ErrUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				old, a := openLease(t, store, "old"), openLease(t, store, "a")
				ot := mustAcquire(t, old)
				first, _ := store.Bytes("job")
				advance(time.Second)
				mustRenew(t, old, ot) // old then stops renewing
				renewal, _ := store.Bytes("job")
				mustObserve(t, a)
				watch(t, a, ttl) // a has seen the renewal unchanged for a TTL
				// a's requests reach the store 1 s after they are sent: the
				// read at 1 s, the write at 2 s (applied, its answer lost),
				// the read-back at 3 s.
				store.Delay("a", time.Second)
				store.LoseResponses("a", 1)
				done := async(func() error { _, err := a.Acquire(t.Context()); return err })
				advance(2500 * time.Millisecond)
				if r := record(t, store); r.Holder != "a" || r.Token != 2 {
					t.Fatalf("record after a's write: %s/%d, want a/2", r.Holder, r.Token)
				}
				if tc.restoreOld {
					store.Put("job", first) // a restore: old's first record
				} else {
					store.Put("job", renewal) // a restore: the record a read
				}
				if err := <-done; !errors.Is(err, tc.want) {
					t.Fatalf("Acquire whose read-back found old's restored record: %v, want %v", err, tc.want)
				}
				store.Heal("a")
				got, _ := takeOver(t, a, "old")
				if got.Token <= 2 {
					t.Errorf("a took the restored record over with token %d, after its own write of token 2 had landed: want more than 2", got.Token)
				}
			})
		})
	}
}

// record reads the record in store as a raw observer.
func record(t *testing.T, store *memlease.Store) lease.Record {
	t.Helper()
	b, ok := store.Bytes("job")
	if !ok {
		t.Fatal("no record")
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
