package quorumlease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

// TestRedTeam22StaleSilenceSplitsTheAnchor: a member that hung for a
// contender once is waited for again once it is up, however long ago the
// hang was, so that contenders that start together agree on the first
// member (RT19-2). b took the lease while member 1 hung for it (its read
// had no answer within CallTimeout: silent), led for three TTLs, member 1
// answering again and taken back by its renewals, and released. No
// Acquire or Observe ran in between, so b still counted member 1 as
// silent: with member 3 down (a minority), b and c tried together, c
// anchored on member 1 and b, not waiting for it, on member 2, each held
// one member, neither a majority, and each kept its member for a TTL.
func TestRedTeam22StaleSilenceSplitsTheAnchor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		for _, s := range h.stores {
			s.Delay("b", 5*time.Millisecond)
			s.Delay("c", 5*time.Millisecond)
		}
		b, c := open(t, h, "b"), open(t, h, "c")
		h.stores[0].Hang("b")
		tb := acquire(t, b) // on members 2 and 3
		h.stores[0].Heal("b")
		h.stores[0].Delay("b", 5*time.Millisecond)
		ri := b.Options().RenewInterval
		for end := time.Now().Add(3 * ttl); time.Now().Before(end); {
			b.(lease.Idler).Idle(ctx, time.Now().Add(ri))
			var err error
			if tb, err = b.Renew(ctx, tb); err != nil {
				t.Fatalf("b's renewal: %v", err)
			}
		}
		if rec := h.holderOf(t, 0); rec.Holder != "b" || !rec.Held() {
			t.Fatalf("member 1 after b's renewals: %+v, want b's again", rec)
		}
		if err := b.Release(ctx, tb); err != nil {
			t.Fatal(err)
		}
		h.stores[2].Partition("b")
		h.stores[2].Partition("c")
		var wg sync.WaitGroup
		won := map[string]error{}
		var mu sync.Mutex
		for who, l := range map[string]lease.Lease{"b": b, "c": c} {
			wg.Go(func() {
				_, err := l.Acquire(ctx)
				mu.Lock()
				won[who] = err
				mu.Unlock()
			})
		}
		wg.Wait()
		holders := map[string][]int{}
		for i := range 2 {
			if rec := h.holderOf(t, i); rec.Held() {
				holders[rec.Holder] = append(holders[rec.Holder], i+1)
			}
		}
		if len(holders) != 1 || (won["b"] == nil) == (won["c"] == nil) {
			t.Errorf("b and c tried together, member 1 up for both, member 3 down: members held by %v, b's attempt %v, c's %v; want one of them to lead", holders, won["b"], won["c"])
		}
		time.Sleep(ttl) // the calls that outlive the attempts end
	})
}

// TestRedTeam22HungMemberNotWaitedForAtAFollowersPace: a follower whose
// attempts are a renew interval apart, the sparsest a follower that keeps
// its count towards expiry reads at, waits for a hung member once, not at
// every attempt: its silence lasts a renew interval after each read of it
// that had no answer, and each attempt's read, left running, says it anew.
func TestRedTeam22HungMemberNotWaitedForAtAFollowersPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		a := open(t, h, "a")
		// A CallTimeout short of half the renew interval: a silence that
		// lasted a CallTimeout after its read would be over at each
		// attempt.
		b, err := h.Open(ctx, "job", lease.Options{Identity: "b", TTL: ttl, CallTimeout: ttl / 20})
		if err != nil {
			t.Fatal(err)
		}
		ta := acquire(t, a)
		h.stores[0].Hang("b")
		ri := b.Options().RenewInterval
		for i := range 6 {
			began := time.Now()
			if _, err := b.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
				t.Fatalf("b's attempt while a holds: %v, want lease.ErrHeld", err)
			}
			if took := time.Since(began); i > 0 && took != 0 {
				t.Errorf("b's attempt %d, a renew interval after the one before, with member 1 hung, took %v, want no wait", i+1, took)
			}
			time.Sleep(ri - time.Since(began))
			if ta, err = a.Renew(ctx, ta); err != nil {
				t.Fatalf("a's renewal: %v", err)
			}
		}
		time.Sleep(ttl) // reads left running end within CallTimeout
	})
}

// TestRedTeam22AnswerOutranksAnEarlierReadsSilence: a member that answered
// is waited for from the read after, even when a read of it sent earlier,
// lost in a hang, returns after that answer with no answer of its own (a
// request lost in the hang, timed out at CallTimeout). That read's
// silence, older than the answer, made b count member 1 silent again, for
// a renew interval, right after member 1 had answered it. Two Observes
// that overlap make the two reads: a read left running by an attempt
// within a silence is not overlapped by another (the member counts silent
// until it returns: TestHungMemberNotWaitedForWhileItsReadRuns).
func TestRedTeam22AnswerOutranksAnEarlierReadsSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		a, b := open(t, h, "a"), open(t, h, "b")
		acquire(t, a)
		ct := b.Options().CallTimeout
		member1 := func() quorumlease.Member { return b.(interface{ Members() []quorumlease.Member }).Members()[0] }
		h.stores[0].Hang("b")
		lost := make(chan error, 1)
		go func() { // its read of member 1 is lost in the hang
			_, err := b.Observe(ctx)
			lost <- err
		}()
		time.Sleep(ct / 2)
		h.stores[0].Heal("b")
		if _, err := b.Observe(ctx); err != nil || member1().Err != nil {
			t.Fatalf("b's Observe once member 1 answers again: %v, member 1 %+v; want member 1 read", err, member1())
		}
		if err := <-lost; err != nil { // returns at CallTimeout, with no answer from member 1
			t.Fatal(err)
		}
		if _, err := b.Observe(ctx); err != nil {
			t.Fatal(err)
		}
		if m := member1(); m.Err != nil {
			t.Errorf("b's Observe after member 1 answered: member 1 %v, want its record: it answered the read before", m.Err)
		}
		time.Sleep(ct) // reads left running end within CallTimeout
	})
}

// TestHungMemberNotWaitedForWhileItsReadRuns: an attempt that comes once
// a hung member's silence is over, while the read an attempt within it
// left running has not returned yet, counts the member silent, as the
// package says, and does not wait for it. It waited a CallTimeout: every
// few follower attempts, one took a CallTimeout longer, and when that one
// was the takeover, crash failover with one member hanging took a fifth of
// a TTL longer (p90 1.17 TTL over 300 synctest trials, 1.03 after).
func TestHungMemberNotWaitedForWhileItsReadRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h := newMemQuorum(3)
		a, b := open(t, h, "a"), open(t, h, "b")
		acquire(t, a)
		h.stores[0].Hang("b")
		o := b.Options()
		ct, ri := o.CallTimeout, o.RenewInterval
		if ri <= ct/2 {
			t.Fatalf("defaults: RenewInterval %v, CallTimeout %v: want a silence longer than half a CallTimeout", ri, ct)
		}
		attempt := func(at time.Duration, start time.Time) time.Duration {
			time.Sleep(time.Until(start.Add(at)))
			began := time.Now()
			if _, err := b.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
				t.Fatalf("b's attempt while a holds: %v, want lease.ErrHeld", err)
			}
			return time.Since(began)
		}
		start := time.Now()
		attempt(0, start)                                  // waits out member 1: silent until ct+ri
		attempt(ct+ri-ct/2, start)                         // within the silence: its read left running until ct+ri+ct/2
		if took := attempt(ct+ri+ct/4, start); took != 0 { // the silence is over, that read still runs
			t.Errorf("b's attempt after member 1's silence, while the read of it an attempt left running had not returned, took %v, want no wait", took)
		}
		time.Sleep(ttl) // reads left running end within CallTimeout
	})
}
