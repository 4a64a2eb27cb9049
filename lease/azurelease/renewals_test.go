package azurelease_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRenewalsShow: every renewal changes the blob's ETag (the record's
// Version), so that a follower sees it; and a follower's HeldError waits
// until a TTL after the follower first saw the blob as it is: it shrinks
// while the blob stays as it was, and grows back to a TTL when a renewal
// shows.
func TestRenewalsShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	holder, follower := e.open(nil, "jobs", "holder"), e.open(nil, "jobs", "follower")
	if !lease.RenewalsShow(holder) {
		t.Fatal("lease.RenewalsShow of an Azure lease is false")
	}
	term := e.acquire(holder)
	wait := func(what string) (lease.Record, time.Duration) {
		t.Helper()
		_, err := follower.Acquire(ctx)
		var held *lease.HeldError
		if !errors.As(err, &held) {
			t.Fatalf("%s: the follower's Acquire: %v, want a *lease.HeldError", what, err)
		}
		if held.Wait <= 0 || held.Wait > testTTL {
			t.Errorf("%s: the HeldError's Wait is %v, want within (0, %v]", what, held.Wait, testTTL)
		}
		return held.Record, held.Wait
	}
	rec, first := wait("first sight")
	time.Sleep(100 * time.Millisecond)
	if again, w := wait("the same blob again"); again.Version != rec.Version || w > first-100*time.Millisecond {
		t.Errorf("read again 100ms later: Version %q (was %q), Wait %v (was %v), want the same Version and a Wait 100ms shorter", again.Version, rec.Version, w, first)
	}
	for i := range 3 {
		var err error
		if term, err = holder.Renew(ctx, term); err != nil {
			t.Fatalf("Renew %d: %v", i+1, err)
		}
		renewed, w := wait("after a renewal")
		if renewed.Version == rec.Version {
			t.Fatalf("Renew %d left the blob's ETag at %q: the renewal does not show", i+1, rec.Version)
		}
		if w <= first-100*time.Millisecond {
			t.Errorf("after Renew %d: Wait %v, want it back near the TTL (first sight's was %v)", i+1, w, first)
		}
		if renewed.Holder != "holder" || renewed.Token != term.Token {
			t.Errorf("after Renew %d: the record names %q, token %d; want holder, token %d", i+1, renewed.Holder, renewed.Token, term.Token)
		}
		rec = renewed
	}
}
