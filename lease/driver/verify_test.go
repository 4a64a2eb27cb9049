package driver_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// checkedDriver is a working CAS driver on one record, whose store answers
// Verify with the errors in verdicts, one per call (nil after the last).
type checkedDriver struct {
	rec      lease.Record
	n        int
	verdicts []error
	verifies int
	writes   int
}

func (d *checkedDriver) Verify(context.Context) error {
	d.verifies++
	if len(d.verdicts) == 0 {
		return nil
	}
	err := d.verdicts[0]
	d.verdicts = d.verdicts[1:]
	return err
}

func (d *checkedDriver) Get(context.Context) (lease.Record, error) {
	if d.rec.Version == "" {
		return lease.Record{}, lease.ErrNoRecord
	}
	return d.rec, nil
}

func (d *checkedDriver) Create(ctx context.Context, r lease.Record) (string, error) {
	return d.Replace(ctx, r, "")
}

func (d *checkedDriver) Replace(_ context.Context, r lease.Record, version string) (string, error) {
	d.writes++
	if version != d.rec.Version {
		return "", driver.ErrConflict
	}
	d.n++
	r.Version = strconv.Itoa(d.n)
	d.rec = r
	return r.Version, nil
}

var unsafeStore = fmt.Errorf("%w: answered 200 to If-None-Match: * on an object that exists", lease.ErrUnsafeStore)

func TestCASVerifiesBeforeFirstWrite(t *testing.T) {
	t.Run("UnsafeStoreIsRefusedAndNothingWritten", func(t *testing.T) {
		d := &checkedDriver{verdicts: []error{unsafeStore, unsafeStore}}
		l, err := driver.NewCAS(d, lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			_, err := l.Acquire(t.Context())
			if !errors.Is(err, lease.ErrUnsafeStore) || lease.Retryable(err) || err.Error() != unsafeStore.Error() {
				t.Errorf("Acquire %d on a store that fails its check: %v, want the driver's error, matching lease.ErrUnsafeStore, not retryable", i+1, err)
			}
		}
		if d.writes != 0 || d.verifies != 2 {
			t.Errorf("the engine wrote %d times and asked Verify %d times, want no write and one Verify per Acquire", d.writes, d.verifies)
		}
	})
	t.Run("BreakOnAnUnsafeStoreWritesNothing", func(t *testing.T) {
		d := &checkedDriver{rec: lease.Record{Holder: "b", Token: 1, TTL: ttl, Nonce: "n", Version: "7"}, verdicts: []error{unsafeStore}}
		l, err := driver.NewCAS(d, lease.Options{Identity: "operator", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := l.Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.(lease.Breaker).Break(t.Context(), rec); !errors.Is(err, lease.ErrUnsafeStore) || d.writes != 0 {
			t.Errorf("Break on a store that fails its check: %v after %d writes, want lease.ErrUnsafeStore and no write", err, d.writes)
		}
	})
	t.Run("UndecidedCheckIsAskedAgain", func(t *testing.T) {
		d := &checkedDriver{verdicts: []error{fmt.Errorf("%w: 503 SlowDown", lease.ErrUnavailable)}}
		l, err := driver.NewCAS(d, lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(t.Context()); !errors.Is(err, lease.ErrUnavailable) || d.writes != 0 {
			t.Fatalf("Acquire whose check failed to answer: %v after %d writes, want lease.ErrUnavailable and no write", err, d.writes)
		}
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire once the store passed: %v", err)
		}
		if _, err := l.Renew(t.Context(), term); err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if d.verifies != 2 || d.writes != 2 {
			t.Errorf("Verify asked %d times for %d writes, want 2 (the undecided check, then the passed one) and never after a pass", d.verifies, d.writes)
		}
	})
	t.Run("ReadsAndRefusalsDoNotVerify", func(t *testing.T) {
		d := &checkedDriver{rec: lease.Record{Holder: "b", Token: 1, TTL: ttl, Nonce: "n", Version: "7"}}
		l, err := driver.NewCAS(d, lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Observe(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("Acquire of a held lease: %v, want lease.ErrHeld", err)
		}
		if d.verifies != 0 {
			t.Errorf("Verify asked %d times by a contender that never wrote, want 0", d.verifies)
		}
	})
	t.Run("TheLeaseIsAVerifier", func(t *testing.T) {
		d := &checkedDriver{verdicts: []error{unsafeStore}}
		l, err := driver.NewCAS(d, lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		v, ok := l.(driver.Verifier)
		if !ok {
			t.Fatalf("%T is not a driver.Verifier", l)
		}
		if err := v.Verify(t.Context()); !errors.Is(err, lease.ErrUnsafeStore) {
			t.Errorf("Verify: %v, want the driver's verdict", err)
		}
		if err := v.Verify(t.Context()); err != nil {
			t.Errorf("Verify again: %v, want the driver's next verdict, nil", err)
		}
		if other, ok := mustNotVerify(t).(driver.Verifier); !ok || other.Verify(t.Context()) != nil {
			t.Errorf("a lease over a driver that cannot check its store: Verifier %t, want one whose Verify returns nil", ok)
		}
	})
}

// mustNotVerify returns a lease over a driver that is not a Verifier.
func mustNotVerify(t *testing.T) lease.Lease {
	t.Helper()
	l, err := driver.NewCAS(&stubDriver{}, lease.Options{Identity: "a", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
