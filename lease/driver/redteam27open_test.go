//go:build redteam27open

package driver_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// handedThenTakenOver: a (token 1) hands the lease to b, which has read
// the handoff and then stops reading (paused, or gone for a while); c
// waits the handoff out and takes the lease over (token 2). It returns
// the bytes of a's last renewal and of its handoff, and c's live term.
func handedThenTakenOver(t *testing.T, store *memlease.Store, a, b, c lease.Lease) (renewal, handoff []byte, tc lease.Term) {
	t.Helper()
	ta := mustAcquire(t, a)
	mustObserve(t, b)
	mustObserve(t, c)
	renewal, _ = store.Bytes("job")
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
		t.Fatalf("ReleaseTo b: %v", err)
	}
	handoff, _ = store.Bytes("job")
	if r := mustObserve(t, b); r.Successor() != "b" {
		t.Fatalf("b read %+v, want a's handoff", r)
	}
	tc, _ = takeOver(t, c, "a")
	return renewal, handoff, tc
}

// TestRedTeam27RestoredHandoffUnderALiveHolder (RT27-2, open: build tag
// redteam27open): a's handoff to b
// put back (a restore from a backup) while c, which took the lease after
// b did not come, leads: b, whose reads stopped at that handoff, takes it
// at once, with c's token, while c still leads. A restored held record is
// safe (the control): b waits it out, and c's next renewal finds it and
// stops first; a handoff record, held, is taken at once as a released one,
// so every handoff record is as dangerous to restore as a released one
// (driver's doc: "A released record, or one of another term, put back
// under a live holder cannot be told by a contender that never saw the
// newer record"), and Handoffer's "every other contender sees it held,
// ... as a holder that crashed right after a renewal would" does not make
// the handoff as safe as a renewal.
func TestRedTeam27RestoredHandoffUnderALiveHolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handoff bool
		fresh   bool // b restarted: a new process with the same identity
		sawC    bool // b read c's term before the restore
	}{
		{"handoff, b paused", true, false, false},
		{"handoff, b restarted", true, true, false},
		{"handoff, b saw c's term (holds)", true, false, true},
		{"renewal (control, holds)", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a, b, c := openLease(t, store, "a"), openLease(t, store, "b"), openLease(t, store, "c")
				renewal, handoff, termC := handedThenTakenOver(t, store, a, b, c)
				if tc.sawC {
					mustObserve(t, b)
				}
				if tc.handoff {
					store.Put("job", handoff)
				} else {
					store.Put("job", renewal)
				}
				if tc.fresh {
					b = openLease(t, store, "b")
				}
				tb, err := b.Acquire(t.Context())
				if err == nil {
					t.Errorf("b took the restored record at once (token %d) while c leads (token %d, taken %v ago): two leaders", tb.Token, termC.Token, time.Since(termC.Sent))
					if tb.Token <= termC.Token {
						t.Errorf("b's token %d is not above c's %d", tb.Token, termC.Token)
					}
					return
				}
				if !errors.Is(err, lease.ErrHeld) {
					t.Fatalf("b's Acquire of the restored record: %v", err)
				}
				if _, err := c.Renew(t.Context(), termC); !errors.Is(err, lease.ErrLost) {
					t.Errorf("c's renewal over the restored record: %v, want ErrLost", err)
				}
			})
		})
	}
}
