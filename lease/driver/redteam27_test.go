package driver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// ambiguousReleaseTo has a hand ta to successor with a write that reaches
// the store and whose response is lost, and whose read-back then fails:
// its outcome is unknown. ReleaseTo's first call is its write: with a 1s
// delay it starts at 0s and its read-back at 1s.
func ambiguousReleaseTo(t *testing.T, store *memlease.Store, a lease.Lease, ta lease.Term, successor string) {
	t.Helper()
	id := a.Options().Identity
	store.LoseResponses(id, 1)
	store.Delay(id, time.Second)
	done := async(func() error { return a.(lease.Handoffer).ReleaseTo(t.Context(), ta, successor) })
	advance(500 * time.Millisecond)
	store.FailNext(id, 1) // the read-back
	err := <-done
	store.Heal(id)
	if !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("ReleaseTo whose response and read-back failed: %v, want ErrUnavailable (outcome unknown)", err)
	}
	if r := mustObserve(t, openLease(t, store, "probe")); r.Successor() != successor {
		t.Fatalf("the handoff did not land: %+v", r)
	}
}

// TestRedTeam27HandoffSeenLandedIsWrittenOver (RT27-1): a handoff whose
// answer was lost and whose read-back failed, then seen landed by any read
// of the holder's Lease (an Observe), is taken by the next write of the
// term for a write of its tenure whose answer was lost (from() starts on
// it: driver.casLease.landed, a held record): Renew and Keep succeed over
// it and undo the handoff, ReleaseTo of another contender hands it again,
// and Release writes a released record over it, which a third contender
// then takes at once. Handoffer's doc: Renew and Keep of a term handed off
// return ErrLost, Release returns nil and leaves the handoff, and no third
// contender takes the lease in between.
func TestRedTeam27HandoffSeenLandedIsWrittenOver(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(t *testing.T, a lease.Lease, ta lease.Term) error
	}{
		{"Renew", func(t *testing.T, a lease.Lease, ta lease.Term) error { _, err := a.Renew(t.Context(), ta); return err }},
		{"Keep", func(t *testing.T, a lease.Lease, ta lease.Term) error {
			return a.(lease.Keeper).Keep(t.Context(), ta, ttl)
		}},
		{"ReleaseTo another", func(t *testing.T, a lease.Lease, ta lease.Term) error {
			return a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "c")
		}},
		{"Release", func(t *testing.T, a lease.Lease, ta lease.Term) error { return a.Release(t.Context(), ta) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a, c := openLease(t, store, "a"), openLease(t, store, "c")
				ta := mustAcquire(t, a)
				ambiguousReleaseTo(t, store, a, ta, "b")
				mustObserve(t, a) // the holder sees its handoff landed
				mustObserve(t, c) // c's count of the handoff starts
				err := tc.after(t, a, ta)
				r := mustObserve(t, c)
				if r.Successor() != "b" || r.Holder != "a" || !r.Held() {
					t.Errorf("%s of the handed term after its handoff was seen landed (%v) wrote over the handoff: the record is %+v, want a's handoff to b", tc.name, err, r)
				}
				if tc.name != "Release" && !errors.Is(err, lease.ErrLost) {
					t.Errorf("%s of the handed term: %v, want ErrLost", tc.name, err)
				}
				if tc.name == "Release" && err != nil {
					t.Errorf("Release of the handed term: %v, want nil", err)
				}
				if tc, err := c.Acquire(t.Context()); err == nil {
					t.Errorf("c, a third contender, took the lease handed to b at once (token %d), before a TTL of its sight of the handoff", tc.Token)
				}
			})
		})
	}
}

// TestRedTeam27HandoffRetriedAfterLostAnswer (holds): a handoff whose
// answer was lost and whose read-back failed, then, with no read between,
// ReleaseTo of the same successor again is nil, of another is ErrLost,
// Renew is ErrLost, and Release is nil: the handoff stays.
func TestRedTeam27HandoffRetriedAfterLostAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		after   func(t *testing.T, a lease.Lease, ta lease.Term) error
		wantErr error
	}{
		{"ReleaseTo again", func(t *testing.T, a lease.Lease, ta lease.Term) error {
			return a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b")
		}, nil},
		{"ReleaseTo another", func(t *testing.T, a lease.Lease, ta lease.Term) error {
			return a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "c")
		}, lease.ErrLost},
		{"Renew", func(t *testing.T, a lease.Lease, ta lease.Term) error { _, err := a.Renew(t.Context(), ta); return err }, lease.ErrLost},
		{"Keep", func(t *testing.T, a lease.Lease, ta lease.Term) error {
			return a.(lease.Keeper).Keep(t.Context(), ta, ttl)
		}, lease.ErrLost},
		{"Release", func(t *testing.T, a lease.Lease, ta lease.Term) error { return a.Release(t.Context(), ta) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a, b, c := openLease(t, store, "a"), openLease(t, store, "b"), openLease(t, store, "c")
				ta := mustAcquire(t, a)
				ambiguousReleaseTo(t, store, a, ta, "b")
				mustObserve(t, c)
				err := tc.after(t, a, ta)
				if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Errorf("%s after a handoff whose outcome was unknown: %v, want %v", tc.name, err, tc.wantErr)
				}
				if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
					t.Errorf("c's Acquire of the lease handed to b: %v, want ErrHeld", err)
				}
				tb := mustAcquire(t, b)
				if tb.Token <= ta.Token {
					t.Errorf("b's token %d after a's %d", tb.Token, ta.Token)
				}
			})
		})
	}
}

// TestRedTeam27HandoffClaimsHold (holds): the successor takes the handoff
// at once with a greater token and the old holder's late renewal is lost;
// a third contender that counted the holder's renewal for most of a TTL
// counts the handoff afresh; two processes sharing the successor's
// identity take it once between them; a Term annotated with the
// successor's key by its holder does not write a handoff.
func TestRedTeam27HandoffClaimsHold(t *testing.T) {
	t.Run("late renewal of the old holder", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ta := mustAcquire(t, a)
			if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
				t.Fatal(err)
			}
			tb := mustAcquire(t, b)
			if _, err := a.Renew(t.Context(), ta); !errors.Is(err, lease.ErrLost) {
				t.Errorf("a's late Renew: %v, want ErrLost", err)
			}
			if r := mustObserve(t, b); r.Holder != "b" || r.Token != tb.Token {
				t.Errorf("after a's late renewal: %+v, want b's term", r)
			}
		})
	})
	t.Run("handoff after a renewal whose answer was lost", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b, c := openLease(t, store, "a"), openLease(t, store, "b"), openLease(t, store, "c")
			ta := mustAcquire(t, a)
			store.LoseResponses("a", 1)
			store.Delay("a", time.Second)
			done := async(func() error { _, err := a.Renew(t.Context(), ta); return err })
			advance(500 * time.Millisecond)
			store.FailNext("a", 1) // the read-back
			if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
				t.Fatalf("Renew whose answer and read-back were lost: %v", err)
			}
			store.Heal("a")
			if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
				t.Fatalf("ReleaseTo of the term whose renewal landed unseen: %v, want nil", err)
			}
			if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
				t.Errorf("c's Acquire: %v, want ErrHeld", err)
			}
			if tb := mustAcquire(t, b); tb.Token <= ta.Token {
				t.Errorf("b's token %d after a's %d", tb.Token, ta.Token)
			}
		})
	})
	t.Run("third contender counts the handoff afresh", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, c := openLease(t, store, "a"), openLease(t, store, "c")
			ta := mustAcquire(t, a)
			watch(t, c, ttl-2*time.Second)
			if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
				t.Fatal(err)
			}
			_, took := takeOver(t, c, "a")
			if took < ttl {
				t.Errorf("c took the handoff %v after its first sight of it, want a TTL (%v)", took, ttl)
			}
		})
	})
	t.Run("successor identity in two processes", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b1, b2 := openLease(t, store, "a"), openLease(t, store, "b"), openLease(t, store, "b")
			ta := mustAcquire(t, a)
			mustObserve(t, b1)
			mustObserve(t, b2)
			if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
				t.Fatal(err)
			}
			store.Delay("b", time.Second) // both read the handoff before either writes
			e1 := async(func() error { _, err := b1.Acquire(t.Context()); return err })
			e2 := async(func() error { _, err := b2.Acquire(t.Context()); return err })
			err1, err2 := <-e1, <-e2
			if (err1 == nil) == (err2 == nil) {
				t.Errorf("two processes named b: %v and %v, want exactly one term", err1, err2)
			}
		})
	})
	t.Run("annotated term does not hand off", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ta := mustAcquire(t, a).Annotate(lease.AnnotationSuccessor, "b")
			ta = mustRenew(t, a, ta)
			if err := a.(lease.Keeper).Keep(t.Context(), ta.Annotate(lease.AnnotationSuccessor, "b"), ttl); err != nil {
				t.Fatal(err)
			}
			if r := mustObserve(t, b); r.Successor() != "" {
				t.Errorf("a Renew or Keep of a term annotated %s wrote a handoff: %+v", lease.AnnotationSuccessor, r)
			}
			if _, err := b.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
				t.Errorf("b's Acquire: %v, want ErrHeld", err)
			}
		})
	})
	t.Run("break of a handoff frees it for all", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, c := openLease(t, store, "a"), openLease(t, store, "c")
			ta := mustAcquire(t, a)
			if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
				t.Fatal(err)
			}
			got, err := c.(lease.Breaker).Break(t.Context(), mustObserve(t, c))
			if err != nil || got.Successor() != "" || got.Annotations.Get(lease.AnnotationSuccessor) != "" {
				t.Fatalf("Break of the handoff: %+v, %v", got, err)
			}
			if tc := mustAcquire(t, c); tc.Token <= ta.Token || tc.Annotations.Get(lease.AnnotationSuccessor) != "" {
				t.Errorf("c's term after the break: %+v", tc)
			}
		})
	})
}
