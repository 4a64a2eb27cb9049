package driver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// unanswered runs write on a, whose answer and read-back are both lost
// (the write lands), and returns its error.
func unanswered(t *testing.T, store *memlease.Store, id string, write func() error) error {
	t.Helper()
	_, w0 := store.Calls(id)
	store.Delay(id, ttl/100)
	store.LoseResponses(id, 1)
	done := make(chan error)
	go func() { done <- write() }()
	for _, w := store.Calls(id); w <= w0; _, w = store.Calls(id) {
		time.Sleep(ttl / 1000)
	}
	store.Partition(id) // the read-back fails
	err := <-done
	store.Heal(id)
	return err
}

// TestRedteam8RenewRevivesOwnLandedRelease: a's Release lands but its
// answer and read-back are lost; a read then finds the record released
// (cas.go's landed = the release). Renew of the same term is then written
// by casLease.from on the released record's version and succeeds: the
// released lease is held again under the same token, with no new
// acquisition. lease.Lease's Renew contract: ErrLost when the lease was
// "taken over, released or deleted". Before from/landed, Renew wrote on
// the term's version, conflicted, read the release back and said ErrLost.
func TestRedteam8RenewRevivesOwnLandedRelease(t *testing.T) {
	for _, op := range []string{"Renew", "Keep"} {
		t.Run(op, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a := openLease(t, store, "a")
				tn := mustAcquire(t, a)
				if err := unanswered(t, store, "a", func() error { return a.Release(t.Context(), tn) }); !errors.Is(err, lease.ErrUnavailable) {
					t.Fatalf("Release with answer and read-back lost: %v, want ErrUnavailable", err)
				}
				if r := mustObserve(t, a); !r.Released || r.Token != tn.Token {
					t.Fatalf("record after the lost release: %+v, want released, token %d", r, tn.Token)
				}
				var err error
				switch op {
				case "Renew":
					_, err = a.Renew(t.Context(), tn)
				case "Keep":
					err = a.(lease.Keeper).Keep(t.Context(), tn, 2*ttl)
				}
				r := mustObserve(t, a)
				if !errors.Is(err, lease.ErrLost) || !r.Released {
					t.Errorf("%s of a term whose release was seen landed: err %v, record held=%v token %d ttl %v; want ErrLost and the record left released", op, err, r.Held(), r.Token, r.TTL)
				}
			})
		})
	}
}
