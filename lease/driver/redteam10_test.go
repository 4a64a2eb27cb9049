package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
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
