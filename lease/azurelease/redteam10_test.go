package azurelease_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestRedteam10OneBlobLeaseIsOneContender (rule 14; an attack that held):
// several callers on ONE azurelease Lease value (Runners sharing it)
// Acquire the free blob at once, round after round; each round exactly
// one wins, with a token greater than every earlier one, and while it
// holds, the others' Acquires (run beside its Renew) are refused. The
// Lease does not take its Acquires one at a time, as the CAS engine's
// does since 0f1d4ba: each Acquire proposes a fresh lease ID, and Azure
// grants one lease on a blob at a time (the second AcquireLease is
// LeaseAlreadyPresent, conditional on the ETag the read returned).
func TestRedteam10OneBlobLeaseIsOneContender(t *testing.T) {
	e := newEnv(t)
	l := e.open(nil, "job", "a")
	const callers, rounds = 4, 8
	var last uint64
	for round := range rounds {
		terms := make(chan lease.Term, callers)
		errs := make(chan error, callers)
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				tm, err := l.Acquire(t.Context())
				if err != nil {
					errs <- err
					return
				}
				terms <- tm
			})
		}
		wg.Wait()
		close(terms)
		close(errs)
		var won []lease.Term
		for tm := range terms {
			won = append(won, tm)
		}
		for err := range errs {
			if !errors.Is(err, lease.ErrHeld) && !errors.Is(err, lease.ErrUnavailable) {
				t.Errorf("round %d: Acquire: %v, want a term, lease.ErrHeld or ErrUnavailable", round, err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d of %d Acquires on one Lease won: %+v", round, len(won), callers, won)
		}
		tm := won[0]
		if tm.Token <= last {
			t.Errorf("round %d: token %d after %d", round, tm.Token, last)
		}
		last = tm.Token
		// The holder renews while the others try again.
		var rwg sync.WaitGroup
		renewed := make(chan error, 1)
		rwg.Go(func() {
			var err error
			tm, err = l.Renew(t.Context(), tm)
			renewed <- err
		})
		for range callers - 1 {
			rwg.Go(func() {
				if got, err := l.Acquire(t.Context()); err == nil {
					t.Errorf("round %d: an Acquire won token %d while term %d held the lease", round, got.Token, last)
				}
			})
		}
		rwg.Wait()
		if err := <-renewed; err != nil {
			t.Fatalf("round %d: Renew: %v", round, err)
		}
		if err := l.Release(t.Context(), tm); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
	}
}
