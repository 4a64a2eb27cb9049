package driver_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
)

// The engine's tests run on memlease inside synctest bubbles: its fault
// hooks make the store fail on cue, and fake time makes every instant exact.
// CallTimeout is the default, TTL/5 = 3s.
const ttl = 15 * time.Second

// bubble runs f in a synctest bubble with a fresh store.
func bubble(t *testing.T, f func(t *testing.T, store *memlease.Store)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) { f(t, memlease.NewStore()) })
}

// openLease opens the lease "job" in store for identity.
func openLease(t *testing.T, store *memlease.Store, identity string) lease.Lease {
	t.Helper()
	l, err := store.Open("job", lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatalf("Open for %s: %v", identity, err)
	}
	return l
}

func mustAcquire(t *testing.T, l lease.Lease) lease.Term {
	t.Helper()
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatalf("%s: Acquire: %v, want a term", l.Options().Identity, err)
	}
	return term
}

func mustRenew(t *testing.T, l lease.Lease, term lease.Term) lease.Term {
	t.Helper()
	nt, err := l.Renew(t.Context(), term)
	if err != nil {
		t.Fatalf("%s: Renew of token %d: %v, want a term", l.Options().Identity, term.Token, err)
	}
	return nt
}

func mustObserve(t *testing.T, l lease.Lease) lease.Record {
	t.Helper()
	r, err := l.Observe(t.Context())
	if err != nil {
		t.Fatalf("%s: Observe: %v, want the record", l.Options().Identity, err)
	}
	return r
}

// wantHeld checks that err is a *HeldError naming holder, and returns it.
func wantHeld(t *testing.T, what string, err error, holder string) *lease.HeldError {
	t.Helper()
	var he *lease.HeldError
	if !errors.Is(err, lease.ErrHeld) || !errors.As(err, &he) {
		t.Fatalf("%s: %v, want a *lease.HeldError matching lease.ErrHeld", what, err)
	}
	if he.Record.Holder != holder {
		t.Errorf("%s: held by %q, want %q", what, he.Record.Holder, holder)
	}
	return he
}

// takeOver has l poll Acquire every second, refused by holder each time,
// until it wins; it returns the term and how long after the first poll the
// win came. It gives up after a few TTLs, so an engine that never lets a
// term lapse fails instead of polling forever.
func takeOver(t *testing.T, l lease.Lease, holder string) (lease.Term, time.Duration) {
	t.Helper()
	first := time.Now()
	for time.Since(first) <= 4*ttl {
		term, err := l.Acquire(t.Context())
		if err == nil {
			return term, time.Since(first)
		}
		wantHeld(t, l.Options().Identity+"'s Acquire", err, holder)
		advance(time.Second)
	}
	t.Fatalf("%s still refused %v after its first look at a record nobody renews", l.Options().Identity, time.Since(first))
	return lease.Term{}, 0
}

// async runs f in a goroutine and returns a channel for its error.
func async(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// ambiguousAcquire has l (identity id) make an Acquire whose write reaches
// the store and whose response is lost, and whose read-back then fails: its
// outcome is unknown. memlease decides a call's fault when the call starts,
// and with a 1s delay a's calls start at 0s (read), 1s (write) and 2s (read
// back), so the faults are set in between.
func ambiguousAcquire(t *testing.T, store *memlease.Store, l lease.Lease, id string) {
	t.Helper()
	store.LoseResponses(id, 1) // affects writes only
	store.Delay(id, time.Second)
	done := async(func() error { _, err := l.Acquire(t.Context()); return err })
	advance(1500 * time.Millisecond)
	store.FailNext(id, 1) // the read-back
	err := <-done
	store.Heal(id)
	if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrHeld) {
		t.Fatalf("Acquire whose response and read-back failed: %v, want ErrUnavailable (outcome unknown)", err)
	}
}

func TestCASLostResponse(t *testing.T) {
	t.Run("AcquireAppliedIsWon", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			store.LoseResponses("a", 1)
			term, err := a.Acquire(t.Context())
			if err != nil {
				t.Fatalf("Acquire whose response was lost after the store applied it: %v, want won (the read-back finds a's nonce)", err)
			}
			if r := mustObserve(t, b); r.Holder != "a" || r.Token != term.Token || r.Version != term.Version {
				t.Errorf("record %+v, want a's term %+v", r, term)
			}
			mustRenew(t, a, term)
		})
	})
	t.Run("AcquireThatConflictedIsHeld", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			store.LoseResponses("a", 1)
			store.Delay("a", time.Second)
			done := async(func() error { _, err := a.Acquire(t.Context()); return err })
			// a's read found no record at 1s; its create arrives at 2s,
			// after b's.
			advance(1500 * time.Millisecond)
			tb := mustAcquire(t, b)
			err := <-done
			he := wantHeld(t, "a's Acquire whose create conflicted and whose response was lost", err, "b")
			if he.Record.Token != tb.Token || he.Wait != ttl {
				t.Errorf("HeldError {Token %d, Wait %v}, want b's token %d and a full TTL to wait", he.Record.Token, he.Wait, tb.Token)
			}
			store.Heal("a")
			if r := mustObserve(t, a); r.Holder != "b" || r.Version != tb.Version {
				t.Errorf("record %+v, want b's untouched", r)
			}
		})
	})
	t.Run("RenewAppliedIsRenewed", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a := openLease(t, store, "a")
			ta := mustAcquire(t, a)
			store.LoseResponses("a", 1)
			nt, err := a.Renew(t.Context(), ta)
			if err != nil {
				t.Fatalf("Renew whose response was lost after the store applied it: %v, want renewed", err)
			}
			if nt.Token != ta.Token || nt.Version == ta.Version || mustObserve(t, a).Version != nt.Version {
				t.Errorf("renewed term %+v, want token %d at the stored, new version", nt, ta.Token)
			}
			mustRenew(t, a, nt) // the next renewal works from the new term
		})
	})
	t.Run("AmbiguousRenewRetriedWithTheOldTerm", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ta := mustAcquire(t, a)
			store.LoseResponses("a", 1)
			store.Delay("a", time.Second)
			done := async(func() error { _, err := a.Renew(t.Context(), ta); return err })
			advance(500 * time.Millisecond) // the write started at 0s
			store.FailNext("a", 1)          // the read-back, at 1s
			err := <-done
			store.Heal("a")
			if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrLost) {
				t.Fatalf("Renew whose response and read-back failed: %v, want ErrUnavailable (outcome unknown, retry)", err)
			}
			landed := mustObserve(t, b)
			if landed.Holder != "a" || landed.Version == ta.Version {
				t.Fatalf("record %+v, want a's renewal applied at a new version", landed)
			}
			// The caller retries with the term it has; the engine finds
			// its own renewal and writes on top of it. Taking the landed
			// write as the new term would be wrong: others have watched
			// its version since it landed, before the retry was sent.
			nt := mustRenew(t, a, ta)
			if nt.Token != ta.Token || nt.Version == landed.Version || mustObserve(t, b).Version != nt.Version {
				t.Errorf("retried renewal %+v, want token %d at a version newer than the landed write's %q, and stored", nt, ta.Token, landed.Version)
			}
		})
	})
	t.Run("AmbiguousReleaseThenReleaseAgain", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ta := mustAcquire(t, a)
			store.LoseResponses("a", 1)
			store.Delay("a", time.Second)
			done := async(func() error { return a.Release(t.Context(), ta) })
			advance(500 * time.Millisecond)
			store.FailNext("a", 1)
			err := <-done
			store.Heal("a")
			if !errors.Is(err, lease.ErrUnavailable) {
				t.Fatalf("Release whose response and read-back failed: %v, want ErrUnavailable", err)
			}
			if err := a.Release(t.Context(), ta); err != nil {
				t.Errorf("Release again of the term it had released unseen: %v, want nil", err)
			}
			if r := mustObserve(t, b); r.Holder != "a" || r.Token != ta.Token || !r.Released {
				t.Errorf("record %+v, want a's, released, with token %d", r, ta.Token)
			}
		})
	})
	t.Run("ReleaseAppliedIsReleased", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a := openLease(t, store, "a")
			ta := mustAcquire(t, a)
			store.LoseResponses("a", 1)
			if err := a.Release(t.Context(), ta); err != nil {
				t.Errorf("Release whose response was lost after the store applied it: %v, want nil", err)
			}
			if r := mustObserve(t, a); !r.Released {
				t.Errorf("record %+v, want released", r)
			}
		})
	})
}

func TestCASAmbiguousAcquire(t *testing.T) {
	t.Run("RetakenAtOnceBySameLease", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ambiguousAcquire(t, store, a, "a")
			left := mustObserve(t, b)
			if left.Holder != "a" || left.Token != 1 {
				t.Fatalf("record %+v, want a's applied write with token 1", left)
			}
			// The next Acquire finds a's own last write and takes it at
			// once, with a new token.
			start := time.Now()
			term := mustAcquire(t, a)
			if waited := time.Since(start); waited != 0 || term.Token != left.Token+1 {
				t.Errorf("Acquire after the unknown outcome: token %d after %v, want token %d at once", term.Token, waited, left.Token+1)
			}
		})
	})
	t.Run("OthersWaitTheFullTTL", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b := openLease(t, store, "a"), openLease(t, store, "b")
			ambiguousAcquire(t, store, a, "a")
			// a goes away. b sees a's leftover record and must wait a TTL.
			if term, waited := takeOver(t, b, "a"); waited != ttl || term.Token != 2 {
				t.Errorf("b took the leftover record over after %v with token %d, want after exactly the TTL (%v, polling every second) with token 2", waited, term.Token, ttl)
			}
		})
	})
	t.Run("SameIdentityOtherLeaseWaitsTheFullTTL", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a := openLease(t, store, "a")
			ambiguousAcquire(t, store, a, "a")
			// A restarted process with the same identity did not write
			// the record: it must wait like anyone else.
			restarted := openLease(t, store, "a")
			if _, waited := takeOver(t, restarted, "a"); waited != ttl {
				t.Errorf("the restarted contender took its predecessor's record after %v, want the TTL (%v)", waited, ttl)
			}
		})
	})
}

func TestCASTermNotIssued(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		ta := mustAcquire(t, a)
		for _, tc := range []struct {
			name string
			term lease.Term
		}{
			{name: "another contender's term", term: ta},
			{name: "zero term", term: lease.Term{}},
			{name: "no version", term: lease.Term{Holder: "b", Token: ta.Token}},
			{name: "token 0", term: lease.Term{Holder: "b", Version: ta.Version}},
		} {
			_, err := b.Renew(t.Context(), tc.term)
			var oe *lease.OptionError
			if !errors.Is(err, lease.ErrInvalid) || !errors.As(err, &oe) || oe.Field != "Term" {
				t.Errorf("%s: b.Renew: %v, want an *OptionError for Term matching ErrInvalid", tc.name, err)
			}
			if err := b.Release(t.Context(), tc.term); !errors.Is(err, lease.ErrInvalid) {
				t.Errorf("%s: b.Release: %v, want ErrInvalid", tc.name, err)
			}
		}
		if reads, writes := store.Calls("b"); reads != 0 || writes != 0 {
			t.Errorf("b made %d reads and %d writes, want none", reads, writes)
		}
		if r := mustObserve(t, a); r.Version != ta.Version {
			t.Errorf("record changed to %+v, want a's untouched", r)
		}
	})
}

func TestCASTokenCannotGrow(t *testing.T) {
	for _, released := range []bool{true, false} {
		t.Run(fmt.Sprintf("released=%t", released), func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				data := driver.EncodeJSON(lease.Record{Holder: "old", Token: math.MaxUint64, TTL: ttl, Released: released, Nonce: "n"})
				store.Put("job", data)
				a := openLease(t, store, "a")
				if !released {
					_, err := a.Acquire(t.Context())
					wantHeld(t, "first Acquire of a held record at token MaxUint64", err, "old")
					watch(t, a, ttl) // until the held record has lapsed
				}
				_, err := a.Acquire(t.Context())
				if !errors.Is(err, lease.ErrCorrupt) || !strings.Contains(err.Error(), "cannot grow") {
					t.Errorf("Acquire of a free record at token MaxUint64: %v, want ErrCorrupt saying the token cannot grow", err)
				}
				if _, writes := store.Calls("a"); writes != 0 {
					t.Errorf("a made %d writes, want none", writes)
				}
				if got, _ := store.Bytes("job"); string(got) != string(data) {
					t.Errorf("stored %s, want the record untouched", got)
				}
			})
		})
	}
}

func TestCASCallTimeout(t *testing.T) {
	t.Run("HungCallsAreUnavailableAfterCallTimeout", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a := openLease(t, store, "a")
			ta := mustAcquire(t, a)
			store.Hang("a")
			for _, tc := range []struct {
				name string
				call func() error
				took time.Duration
			}{
				{name: "Observe", call: func() error { _, err := a.Observe(t.Context()); return err }, took: 3 * time.Second},
				{name: "Acquire", call: func() error { _, err := a.Acquire(t.Context()); return err }, took: 3 * time.Second},
				// A write that times out is read back: two calls.
				{name: "Renew", call: func() error { _, err := a.Renew(t.Context(), ta); return err }, took: 6 * time.Second},
				{name: "Release", call: func() error { return a.Release(t.Context(), ta) }, took: 6 * time.Second},
			} {
				start := time.Now()
				err := tc.call()
				if !errors.Is(err, lease.ErrUnavailable) || !strings.Contains(err.Error(), "CallTimeout (3s)") {
					t.Errorf("hung %s: %v, want ErrUnavailable naming CallTimeout (3s)", tc.name, err)
				}
				if errors.Is(err, lease.ErrLost) || errors.Is(err, lease.ErrHeld) {
					t.Errorf("hung %s: %v, want an unknown outcome, not a verdict", tc.name, err)
				}
				if took := time.Since(start); took != tc.took {
					t.Errorf("hung %s returned after %v, want %v", tc.name, took, tc.took)
				}
			}
			store.Heal("a")
			mustRenew(t, a, ta)
		})
	})
	t.Run("ExplicitCallTimeout", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl, CallTimeout: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			store.Hang("a")
			start := time.Now()
			if _, err := a.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) || time.Since(start) != 500*time.Millisecond {
				t.Errorf("hung Observe: %v after %v, want ErrUnavailable after 500ms", err, time.Since(start))
			}
		})
	})
	t.Run("ParentContextEndsFirst", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a := openLease(t, store, "a")
			ta := mustAcquire(t, a)
			store.Hang("a")
			for _, tc := range []struct {
				name string
				call func(ctx context.Context) error
			}{
				{name: "Observe", call: func(ctx context.Context) error { _, err := a.Observe(ctx); return err }},
				{name: "Acquire", call: func(ctx context.Context) error { _, err := a.Acquire(ctx); return err }},
				{name: "Renew", call: func(ctx context.Context) error { _, err := a.Renew(ctx, ta); return err }},
				{name: "Release", call: func(ctx context.Context) error { return a.Release(ctx, ta) }},
			} {
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(time.Second, cancel)
				start := time.Now()
				if err := tc.call(ctx); err != context.Canceled || time.Since(start) != time.Second {
					t.Errorf("hung %s, cancelled after 1s: %v after %v, want context.Canceled itself after 1s", tc.name, err, time.Since(start))
				}
				ctx, cancel = context.WithTimeout(t.Context(), 2*time.Second)
				start = time.Now()
				if err := tc.call(ctx); err != context.DeadlineExceeded || time.Since(start) != 2*time.Second {
					t.Errorf("hung %s under a 2s deadline: %v after %v, want context.DeadlineExceeded itself after 2s", tc.name, err, time.Since(start))
				}
				cancel()
			}
		})
	})
}

func TestCASFailingHolderLapsesAfterTTL(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		ta := mustAcquire(t, a)
		store.Partition("a")
		// a keeps trying to renew every TTL/5; every attempt fails.
		stop := make(chan struct{})
		var renewErrs []error
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(ttl / 5):
				}
				if _, err := a.Renew(t.Context(), ta); !errors.Is(err, lease.ErrUnavailable) {
					renewErrs = append(renewErrs, err)
				}
			}
		})
		tb, waited := takeOver(t, b, "a")
		if waited != ttl {
			t.Errorf("b took over %v after its first look, want exactly the TTL (%v, polling every second)", waited, ttl)
		}
		close(stop)
		wg.Wait()
		for _, err := range renewErrs {
			t.Errorf("a's failing renewal: %v, want ErrUnavailable", err)
		}
		store.Heal("a")
		if _, err := a.Renew(t.Context(), ta); !errors.Is(err, lease.ErrLost) {
			t.Errorf("a's Renew after b took over: %v, want ErrLost", err)
		}
		if tb.Token != ta.Token+1 {
			t.Errorf("b's token %d, want %d", tb.Token, ta.Token+1)
		}
	})
}

func TestCASWaitCountsFromFirstSight(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		ta := mustAcquire(t, a)
		wait := func(what string) time.Duration {
			t.Helper()
			_, err := b.Acquire(t.Context())
			return wantHeld(t, what, err, "a").Wait
		}
		advance(10 * time.Second)
		if w := wait("b's first look, at a 10s-old record"); w != ttl {
			t.Errorf("Wait at b's first look = %v, want the full TTL (%v): the record's age is unknowable", w, ttl)
		}
		advance(5 * time.Second)
		if w := wait("b's look 5s later"); w != ttl-5*time.Second {
			t.Errorf("Wait 5s after the first look = %v, want %v", w, ttl-5*time.Second)
		}
		mustRenew(t, a, ta)
		if w := wait("b's look after a renewed"); w != ttl {
			t.Errorf("Wait after a new version = %v, want the full TTL (%v) again", w, ttl)
		}
	})
}

func TestCASObserveCountsTowardExpiry(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		mustAcquire(t, a)
		mustObserve(t, b)
		watch(t, b, ttl)
		if _, err := b.Acquire(t.Context()); err != nil {
			t.Errorf("b's first Acquire, a TTL after its Observe saw the same version: %v, want a takeover", err)
		}
	})
}

// TestCASWatcherIsAcquiresJudgement: Wait (lease.Watcher) says what
// Acquire would make of the record read last, without writing: the
// holder's TTL at first sight, less the unbroken run of reads since, the
// full TTL again after a gap longer than the renew interval, and 0 when
// Acquire takes the record over.
func TestCASWatcherIsAcquiresJudgement(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		mustAcquire(t, a) // a then stops renewing
		w := b.(lease.Watcher)
		if got := w.Wait(mustObserve(t, b)); got != ttl {
			t.Errorf("Wait at first sight = %v, want the TTL (%v)", got, ttl)
		}
		watch(t, b, ttl/2)
		if got := w.Wait(mustObserve(t, b)); got != ttl/2 {
			t.Errorf("Wait after half a TTL of reads = %v, want %v", got, ttl/2)
		}
		advance(lease.DefaultRenewInterval(ttl) + time.Millisecond)
		if got := w.Wait(mustObserve(t, b)); got != ttl {
			t.Errorf("Wait after a gap longer than the renew interval = %v, want the TTL again (%v)", got, ttl)
		}
		watch(t, b, ttl)
		rec := mustObserve(t, b)
		if got := w.Wait(rec); got != 0 {
			t.Errorf("Wait after a TTL of unbroken reads = %v, want 0", got)
		}
		if term := mustAcquire(t, b); term.Token != rec.Token+1 {
			t.Errorf("b's Acquire when Wait said 0: token %d, want %d", term.Token, rec.Token+1)
		}
		if got := w.Wait(mustObserve(t, b)); got != ttl {
			t.Errorf("Wait of b's own term = %v, want its TTL (%v): a Lease's own term is someone's", got, ttl)
		}
	})
}

// Rule 3 counts the holder's deadline from when its write was sent: the
// store may apply the write any time after.
func TestCASSentIsWhenTheWriteWasSent(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a := openLease(t, store, "a")
		store.Delay("a", time.Second)
		start := time.Now()
		// Acquire: read from 0s to 1s, write sent at 1s, applied at 2s.
		ta := mustAcquire(t, a)
		if sent := ta.Sent.Sub(start); sent != time.Second {
			t.Errorf("Acquire's term was sent %v after the call, want 1s (after the read, before the delayed write)", sent)
		}
		// Renew: write sent at once, applied 1s later.
		start = time.Now()
		if nt := mustRenew(t, a, ta); !nt.Sent.Equal(start) {
			t.Errorf("Renew's term was sent %v after the call, want 0s", nt.Sent.Sub(start))
		}
	})
}

// Expiry waits for the holder's TTL, as recorded, not the contender's own.
func TestCASWaitsTheHoldersTTL(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		long, err := store.Open("job", lease.Options{Identity: "a", TTL: 2 * ttl})
		if err != nil {
			t.Fatal(err)
		}
		b := openLease(t, store, "b")
		mustAcquire(t, long)
		_, err = b.Acquire(t.Context())
		if he := wantHeld(t, "b's first Acquire", err, "a"); he.Wait != 2*ttl {
			t.Errorf("Wait at first sight = %v, want the holder's TTL (%v)", he.Wait, 2*ttl)
		}
		if _, waited := takeOver(t, b, "a"); waited != 2*ttl {
			t.Errorf("b (TTL %v) took over after %v, want the holder's TTL (%v)", ttl, waited, 2*ttl)
		}
	})
}

// Rule 4: memlease's version is the MD5 of the bytes, as S3's ETag is, so a
// renewal that rewrote the same bytes would look like a dead holder.
func TestCASEveryWriteChangesVersion(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		term := mustAcquire(t, a)
		versions := map[string]bool{term.Version: true}
		nonces := map[string]bool{mustObserve(t, a).Nonce: true}

		stop := make(chan struct{})
		var won []lease.Term
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(ttl / 10):
				}
				if term, err := b.Acquire(t.Context()); err == nil {
					won = append(won, term)
				}
			}
		})
		// a renews every TTL/3 for four TTLs.
		for i := 1; i <= 12; i++ {
			advance(ttl / 3)
			term = mustRenew(t, a, term)
			r := mustObserve(t, a)
			if versions[term.Version] || nonces[r.Nonce] {
				t.Errorf("renewal %d wrote version %q, nonce %q: want both new", i, term.Version, r.Nonce)
			}
			versions[term.Version], nonces[r.Nonce] = true, true
		}
		close(stop)
		wg.Wait()
		for _, w := range won {
			t.Errorf("b took over (token %d) from a holder renewing every TTL/3", w.Token)
		}
	})
}

// Rule 5: release keeps the record and its counter.
func TestCASReleaseKeepsTheRecord(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		ta := mustAcquire(t, a)
		if err := a.Release(t.Context(), ta); err != nil {
			t.Fatal(err)
		}
		data, ok := store.Bytes("job")
		r, err := driver.DecodeJSON(data)
		if !ok || err != nil || r.Holder != "a" || r.Token != ta.Token || !r.Released {
			t.Errorf("stored after Release: %s (%v), want a's record, released, with token %d", data, err, ta.Token)
		}
		if tb := mustAcquire(t, b); tb.Token != ta.Token+1 {
			t.Errorf("b's token after a's release: %d, want %d", tb.Token, ta.Token+1)
		}
	})
}

// stubDriver answers Get with a fixed record and error, and counts writes.
type stubDriver struct {
	rec    lease.Record
	err    error
	writes int
}

func (d *stubDriver) Get(context.Context) (lease.Record, error) { return d.rec, d.err }

func (d *stubDriver) Create(context.Context, lease.Record) (string, error) {
	d.writes++
	return "", driver.ErrConflict
}

func (d *stubDriver) Replace(context.Context, lease.Record, string) (string, error) {
	d.writes++
	return "", driver.ErrConflict
}

func TestNewCAS(t *testing.T) {
	if _, err := driver.NewCAS(nil, lease.Options{Identity: "a"}); !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("NewCAS(nil): %v, want ErrInvalid", err)
	}
	if _, err := driver.NewCAS(&stubDriver{}, lease.Options{}); !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("NewCAS without an identity: %v, want ErrInvalid", err)
	}
	l, err := driver.NewCAS(&stubDriver{}, lease.Options{Identity: "a"})
	if err != nil || l.Options() != (lease.Options{Identity: "a", TTL: lease.DefaultTTL, CallTimeout: lease.DefaultTTL / 5, RenewInterval: lease.DefaultTTL * 3 / 8}) {
		t.Errorf("NewCAS: options %+v, %v; want the defaults filled in", l.Options(), err)
	}
}

func TestCASChecksDriverRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    *stubDriver
		want error
	}{
		{name: "token 0", d: &stubDriver{rec: lease.Record{Holder: "x", TTL: ttl, Nonce: "n", Version: "v"}}, want: lease.ErrCorrupt},
		{name: "no nonce", d: &stubDriver{rec: lease.Record{Holder: "x", Token: 1, TTL: ttl, Version: "v"}}, want: lease.ErrCorrupt},
		{name: "store missing", d: &stubDriver{err: fmt.Errorf("no such bucket: %w", lease.ErrNotFound)}, want: lease.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := driver.NewCAS(tc.d, lease.Options{Identity: "a", TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Acquire(t.Context()); !errors.Is(err, tc.want) {
				t.Errorf("Acquire: %v, want %v", err, tc.want)
			}
			if _, err := l.Observe(t.Context()); !errors.Is(err, tc.want) {
				t.Errorf("Observe: %v, want %v", err, tc.want)
			}
			if tc.d.writes != 0 {
				t.Errorf("the engine wrote %d times, want never", tc.d.writes)
			}
		})
	}
}

// TestCASFailedTakeoverIsUnavailable: a takeover write that never reached
// the store is a store failure to retry, not a refusal by the old holder.
func TestCASFailedTakeoverIsUnavailable(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		mustAcquire(t, a)
		_, err := b.Acquire(t.Context())
		wantHeld(t, "b's first look", err, "a")
		watch(t, b, ttl)
		store.Delay("b", time.Second) // b's read starts at 0s, its write at 1s
		done := async(func() error { _, err := b.Acquire(t.Context()); return err })
		advance(500 * time.Millisecond)
		store.FailNext("b", 1) // the takeover write
		if err := <-done; !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrHeld) {
			t.Fatalf("takeover whose write failed: %v, want ErrUnavailable and not ErrHeld", err)
		}
		store.Heal("b")
		// Token 2 was tried: whatever the error said, it may have landed
		// (TestCASTokenTriedIsNeverWrittenAgain), so the retry skips it.
		if term := mustAcquire(t, b); term.Token != 3 {
			t.Fatalf("b's retried takeover got token %d, want 3", term.Token)
		}
	})
}

// TestCASOwnTermIsNotTakenOver: a record this Lease wrote and reported is
// someone's live term (two Runners on one Lease), or a hold (Keep): a
// second Acquire on the same Lease waits for it like anyone's, also after
// a renewal that did not land. Only an Acquire whose answer was lost is
// taken over at once.
func TestCASOwnTermIsNotTakenOver(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a := openLease(t, store, "a")
		term := mustRenew(t, a, mustAcquire(t, a))
		_, err := a.Acquire(t.Context())
		wantHeld(t, "a second Acquire on the holder's Lease", err, "a")
		store.FailNext("a", 1) // the renewal's write; its read-back succeeds
		if _, err := a.Renew(t.Context(), term); !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("renewal whose write failed: %v, want ErrUnavailable", err)
		}
		_, err = a.Acquire(t.Context())
		wantHeld(t, "Acquire after a renewal that did not land", err, "a")
		if err := a.(lease.Keeper).Keep(t.Context(), term, 2*ttl); err != nil {
			t.Fatal(err)
		}
		_, err = a.Acquire(t.Context())
		wantHeld(t, "Acquire by the Lease that kept the record", err, "a")
		watch(t, a, ttl)
		_, err = a.Acquire(t.Context())
		wantHeld(t, "Acquire a TTL into a hold of two", err, "a")
		watch(t, a, ttl)
		if again := mustAcquire(t, a); again.Token != term.Token+1 {
			t.Fatalf("taking the lapsed hold: token %d, want %d", again.Token, term.Token+1)
		}
	})
}

// TestCASLostAcquireTakenBack: an Acquire whose write landed but whose
// answer was lost left a record nobody acts on: the next Acquire on the
// same Lease takes it over at once, within its TTL, before any other
// record was seen.
func TestCASLostAcquireTakenBack(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprintf("late=%t", late), func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a := openLease(t, store, "a")
				acquireAnswerLost(t, store, a)
				if late { // a TTL after the write: another contender may have judged it lapsed
					advance(ttl)
					_, err := a.Acquire(t.Context())
					wantHeld(t, "Acquire a TTL after its unseen write", err, "a")
					return
				}
				if got := mustAcquire(t, a); got.Token != 2 {
					t.Fatalf("taking back its own unseen record: token %d, want 2", got.Token)
				}
			})
		})
	}
}

// TestCASTokenNeverBelowHighestWritten: a write whose outcome was unknown
// may have stored its token; after a delete, the next token is above it.
func TestCASTokenNeverBelowHighestWritten(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a := openLease(t, store, "a")
		ta := mustAcquire(t, a)
		if err := a.Release(t.Context(), ta); err != nil {
			t.Fatal(err)
		}
		acquireAnswerLost(t, store, a)
		store.Delete("job")
		tb := mustAcquire(t, openLease(t, store, "b"))
		if tb.Token != 1 {
			t.Errorf("a new contender's Acquire after the delete: token %d, want 1: it knows only what it reads", tb.Token)
		}
		store.Delete("job")
		ta3 := mustAcquire(t, a)
		if ta3.Token <= ta.Token+1 {
			t.Errorf("a's Acquire after the delete: token %d, want more than %d, the token of its unresolved write", ta3.Token, ta.Token+1)
		}
	})
}

// watch has l observe the record every TTL/10 for d, so that its reads
// count towards expiry.
func watch(t *testing.T, l lease.Lease, d time.Duration) {
	t.Helper()
	for range 10 * d / ttl {
		advance(ttl / 10)
		if _, err := l.Observe(t.Context()); err != nil {
			t.Fatalf("%s: Observe: %v", l.Options().Identity, err)
		}
	}
}

// advance lets the bubble's fake clock run for d.
func advance(d time.Duration) { <-time.After(d) }

// TestCASDeletedRecord: a record deleted under its holder ends the term at
// once: Renew and Release report lease.ErrLost, not lease.ErrUnavailable,
// which the holder would retry until its renew deadline.
func TestCASDeletedRecord(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a := openLease(t, store, "a")
		ta := mustAcquire(t, a)
		store.Delete("job")
		_, err := a.Renew(t.Context(), ta)
		if !errors.Is(err, lease.ErrLost) || errors.Is(err, lease.ErrUnavailable) || !strings.Contains(err.Error(), "was deleted") {
			t.Errorf("Renew of a deleted record: %v, want ErrLost (and not ErrUnavailable) saying the record was deleted", err)
		}
		if err := a.Release(t.Context(), ta); !errors.Is(err, lease.ErrLost) {
			t.Errorf("Release of a deleted record: %v, want ErrLost", err)
		}
		if _, ok := store.Bytes("job"); ok {
			t.Errorf("Renew or Release of a deleted record wrote one")
		}
	})
}

// TestCASRepeatedVersionAfterFailedReads: a version seen, lost sight of
// (failed reads, or a gap longer than the holder's renew interval), and
// seen again (a restore put its bytes back while the holder lives) is
// counted from when it was seen again, never from its first sight; a
// record whose token went backward is a restore too.
func TestCASRepeatedVersionAfterFailedReads(t *testing.T) {
	for _, tc := range []struct {
		name string
		gap  func(t *testing.T, store *memlease.Store, b lease.Lease)
	}{
		{"failed reads", func(t *testing.T, store *memlease.Store, b lease.Lease) {
			store.FailNext("b", 1)
			if _, err := b.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
				t.Fatalf("b's failed read: %v", err)
			}
		}},
		{"a gap longer than the renew interval", func(*testing.T, *memlease.Store, lease.Lease) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T, store *memlease.Store) {
				a, b := openLease(t, store, "a"), openLease(t, store, "b")
				ta := mustAcquire(t, a)
				v, _ := store.Bytes("job")
				watch(t, b, ttl) // b has watched v for a TTL...
				ta = mustRenew(t, a, ta)
				tc.gap(t, store, b) // ...then loses sight of it while a renews
				advance(ttl / 2)
				mustRenew(t, a, ta)
				store.Put("job", v) // and v comes back: same bytes, same version
				_, err := b.Acquire(t.Context())
				held := wantHeld(t, "b's Acquire of the restored version", err, "a")
				if held.Wait != ttl {
					t.Errorf("Wait = %v, want the full TTL: the count starts again", held.Wait)
				}
			})
		})
	}
	t.Run("token went backward", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			a, b, c := openLease(t, store, "a"), openLease(t, store, "b"), openLease(t, store, "c")
			if err := a.Release(t.Context(), mustAcquire(t, a)); err != nil {
				t.Fatal(err)
			}
			released, _ := store.Bytes("job")
			mustAcquire(t, b)
			mustObserve(t, c)          // c sees b's token 2...
			store.Put("job", released) // ...and then a's released term 1, restored
			_, err := c.Acquire(t.Context())
			if held := wantHeld(t, "c's Acquire of a restored record with a lower token", err, "a"); held.Wait != ttl {
				t.Errorf("Wait = %v, want the full TTL: b may still act", held.Wait)
			}
			watch(t, c, ttl) // a restored record is waited out, not forever
			if got := mustAcquire(t, c); got.Token != 3 {
				t.Errorf("c's takeover of the restored record a TTL later: token %d, want 3", got.Token)
			}
		})
	})
	// sim seed 6000727864: b's lapsed term 1 was put back under c's term
	// 2; d, which had counted b's record before, took it over with token 2
	// (it never saw c's) and released it. e, which saw c's term 2, must not
	// take that released record at once while c may still lead.
	t.Run("token under another holder", func(t *testing.T) {
		bubble(t, func(t *testing.T, store *memlease.Store) {
			e, _, _ := restoreUnderAnotherHolder(t, store)
			_, err := e.Acquire(t.Context())
			if held := wantHeld(t, "e's Acquire of a released record at c's token under d", err, "d"); held.Wait != ttl {
				t.Errorf("Wait = %v, want the full TTL: c may still act", held.Wait)
			}
		})
	})
}

// restoreUnderAnotherHolder plays sim seed 6000727864 up to d's release:
// b's lapsed term 1, counted out by c and d, is taken over by c (token 2),
// which e reads; a restore puts b's body back, and d, which never saw c's
// term, takes it over with token 2 again and releases it. It returns e and
// c's and d's terms.
func restoreUnderAnotherHolder(t *testing.T, store *memlease.Store) (e lease.Lease, tc, td lease.Term) {
	t.Helper()
	b, c, d := openLease(t, store, "b"), openLease(t, store, "c"), openLease(t, store, "d")
	e = openLease(t, store, "e")
	mustAcquire(t, b)
	lapsed, _ := store.Bytes("job")
	for range 11 { // c and d count b's term 1 out
		advance(ttl / 10)
		mustObserve(t, c)
		mustObserve(t, d)
	}
	tc = mustAcquire(t, c) // c's term 2
	if rec := mustObserve(t, e); rec.Holder != "c" || rec.Token != tc.Token {
		t.Fatalf("e read %s/%d, want c's token %d", rec.Holder, rec.Token, tc.Token)
	}
	store.Put("job", lapsed)
	td = mustAcquire(t, d) // d never saw c's term: token 2 again
	if err := d.Release(t.Context(), td); err != nil {
		t.Fatal(err)
	}
	return e, tc, td
}

// TestCASFailedReadRestartsCount: a read that fails restarts the count
// even when the reads around it follow each other within the holder's renew
// interval (rule 2: only an unbroken run of successful reads counts), so
// that the count never leans on what the follower did not see.
func TestCASFailedReadRestartsCount(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		a, b := openLease(t, store, "a"), openLease(t, store, "b")
		mustAcquire(t, a)      // a then stops renewing: it has hung
		mustObserve(t, b)      // b's count starts here...
		watch(t, b, ttl/5)     // ...and goes on, reads a tenth of a TTL apart;
		store.FailNext("b", 1) // one of b's reads fails,
		if _, err := b.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("b's failed read: %v", err)
		}
		watch(t, b, ttl-ttl/5) // and the next ones, as close, succeed
		_, err := b.Acquire(t.Context())
		held := wantHeld(t, "b's Acquire a TTL after its first read, a read having failed", err, "a")
		// The count starts again at the first read after the failure, a
		// tenth of a TTL after it, 0.3 TTL into the watch.
		if want := ttl * 3 / 10; held.Wait != want {
			t.Errorf("Wait = %v, want %v: the count starts again after the failed read", held.Wait, want)
		}
	})
}

// acquireAnswerLost has a make an Acquire whose write is stored but whose
// outcome stays unknown: it reads at 0s, writes at 1s (stored, the answer
// lost) and reads back at 2s, cut off by a partition.
func acquireAnswerLost(t *testing.T, store *memlease.Store, a lease.Lease) {
	t.Helper()
	store.Delay("a", time.Second)
	store.LoseResponses("a", 1)
	done := async(func() error { _, err := a.Acquire(t.Context()); return err })
	advance(1500 * time.Millisecond)
	store.Partition("a")
	if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("Acquire whose answer was lost: %v, want ErrUnavailable", err)
	}
	store.Heal("a")
}

// lapsedToA has old acquire the lease and stop renewing, and a watch its
// record unchanged for a TTL; it returns both Leases and the record's
// bytes, for a restore.
func lapsedToA(t *testing.T, store *memlease.Store) (old, a lease.Lease, lapsed []byte) {
	t.Helper()
	old, a = openLease(t, store, "old"), openLease(t, store, "a")
	mustAcquire(t, old)
	lapsed, _ = store.Bytes("job")
	mustObserve(t, a)
	watch(t, a, ttl)
	return old, a, lapsed
}

// TestCASOneLeaseIsOneContender: two Acquires on one Lease value (two
// Runners sharing it, DESIGN rule 14) that both read the lapsed record of
// another holder before either wrote. The first's write lands; a restore
// then puts the lapsed record back (sim seed 5000004462, restore-under),
// and the second's write, conditional on that record's version, lands on
// it. Run at once, both Acquires returned a term, with one token: two
// callers on one Lease led at once, and the token did not increase. The
// Lease takes its Acquires one at a time, so the second reads after the
// first has written, and waits the restored record out.
func TestCASOneLeaseIsOneContender(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		_, a, lapsed := lapsedToA(t, store)
		// a's requests reach the store 1s after they are sent: the first
		// Acquire reads at 1s and writes at 2s, the second, sent at 0.5s,
		// reads at 1.5s and writes at 2.5s.
		store.Delay("a", time.Second)
		first := async(func() error { _, err := a.Acquire(t.Context()); return err })
		advance(500 * time.Millisecond)
		second := async(func() error { _, err := a.Acquire(t.Context()); return err })
		advance(1750 * time.Millisecond)
		store.Put("job", lapsed) // at 2.25s: a restore of old's record
		errs := []error{<-first, <-second}
		store.Heal("a")
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if !errors.Is(err, lease.ErrHeld) {
				t.Errorf("Acquire: %v, want a term or lease.ErrHeld", err)
			}
		}
		if won != 1 {
			r := mustObserve(t, a)
			t.Errorf("%d of two Acquires on one Lease won (errors %v; the record holds token %d): want exactly one", won, errs, r.Token)
		}
	})
}

// TestCASTokenTriedIsNeverWrittenAgain: an Acquire whose write lands, its
// answer lost, and whose read-back finds an earlier record that a restore
// put back meanwhile, has tried to write its token: the next Acquire
// writes a greater one (rule 10: "the highest token this contender has
// read or tried to write"). It wrote the same token again (sim seed
// 3009680, restore-under and late answers): a token that another
// contender had meanwhile taken the record over above, and led with.
func TestCASTokenTriedIsNeverWrittenAgain(t *testing.T) {
	bubble(t, func(t *testing.T, store *memlease.Store) {
		old, a, earlier := lapsedToA(t, store)
		// a's calls reach the store 1s after they are sent: the read at
		// 1s, the write at 2s (it lands, its answer lost), the read-back
		// at 3s, after a restore of old's record at 2.5s.
		store.Delay("a", time.Second)
		store.LoseResponses("a", 1)
		done := async(func() error { _, err := a.Acquire(t.Context()); return err })
		advance(2500 * time.Millisecond)
		tried := mustObserve(t, old).Token
		store.Put("job", earlier)
		if err := <-done; err == nil {
			t.Fatal("Acquire whose read-back found another record: nil error")
		}
		store.Heal("a")
		watch(t, a, ttl)
		if got := mustAcquire(t, a).Token; got <= tried {
			t.Errorf("Acquire after a write of token %d landed unseen: token %d, want above it", tried, got)
		}
	})
}
