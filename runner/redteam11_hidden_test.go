package runner_test

// Red team 11: two renewals sent a renew interval after the previous was
// sent (2329058), the first landing late, both hidden between two reads of
// a follower: two leaders. Fixed by sending each renewal a renew interval
// after the previous returned, as before 2329058.

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// lateLanding is a holder's lease whose first renewal reaches the store
// late (delay: held that long before it is applied, then answered at
// once, well within CallTimeout), and whose second renewal is hidden as
// soon as it lands by a restore that puts back the acquisition's body
// (the simulation's restore of a body of the current term).
type lateLanding struct {
	lease.Lease
	store    *memlease.Store
	identity string
	delay    time.Duration
	first    atomic.Pointer[[]byte] // the acquisition's body, put back after the second renewal
	n        atomic.Int32
	restored atomic.Int64 // ns since began
	began    time.Time
}

func (l *lateLanding) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	switch l.n.Add(1) {
	case 1:
		l.store.Delay(l.identity, l.delay)
		go func() { advance(time.Millisecond); l.store.Heal(l.identity) }()
	case 2:
		nt, err := l.Lease.Renew(ctx, t)
		if err == nil {
			l.store.Put("job", *l.first.Load())
			l.restored.Store(int64(time.Since(l.began)))
		}
		return nt, err
	}
	return l.Lease.Renew(ctx, t)
}

// TestRedteam11TwoRenewalsHiddenBetweenTwoReads (rules 1, 2, 3; fails on
// 2329058, passes with its runner change reverted). Defaults: TTL 15 s,
// renew interval R = 5.625 s, renew deadline D = 8.4375 s.
//
// a acquires at 0 (W0). Its first renewal W1 is sent at 5.625 s and
// reaches the store 2 s later (7.625 s), answered at once. Since 2329058
// the second, W2, is sent R after W1 was *sent*, at 11.25 s, and lands at
// once; a restore then puts W0's body back (same bytes, same version).
// W1's body was in the store only from 7.625 s to 11.25 s, 3.6 s, less
// than R: b, a contender whose reads are never more than R apart (0.1 s,
// 5 s, 7.5 s, 13 s), reads W0's version at each, an unbroken run from
// 0.1 s, and takes it over at 15.2 s, by rule 2 rightly. a counts W2 from
// 11.25 s (it was sent when due) and leads until 11.25 + D = 19.7 s, or
// until its third renewal (16.875 s) finds b's record: two leaders from
// 15.2 s.
//
// lease/driver's doc proves that a follower never takes over a live
// holder from "2. The holder sends a renewal R after the previous one
// returned, so two successful writes of a term are applied at least R
// apart": then at most one successful write lies between two reads of a
// follower, and it counts from no later than e1 + R. Sent R after the
// previous was sent, two successful writes land R - (the first's landing
// delay) apart, both fit between two reads, and the second counts from
// e1 + 2R (+ D = 21/16 TTL). Before 2329058, W2 went at 7.625 + R =
// 13.25 s, and b's read at 13 s saw W1's body.
func TestRedteam11TwoRenewalsHiddenBetweenTwoReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		ll := &lateLanding{Lease: openLease(t, store, "a"), store: store, identity: "a", delay: 2 * time.Second, began: began}
		j := newJournal()
		stopA := start(t, runner.Config{Lease: ll, Task: j.task("a"), OnDemoted: j.demoted("a"), Logger: testLogger(t, began)})
		advance(10 * time.Millisecond)
		if j.leader() != "a" {
			t.Fatal("a does not lead")
		}
		first, _ := store.Bytes("job")
		ll.first.Store(&first)
		b := openLease(t, store, "b")
		var bTerm lease.Term
		var bAt time.Duration
		reads := []time.Duration{100 * time.Millisecond, 5 * time.Second, 7500 * time.Millisecond, 13 * time.Second, 15200 * time.Millisecond}
		for at := 20 * time.Second; at < 60*time.Second; at += 5 * time.Second {
			reads = append(reads, at) // a follower reading on, no more than R apart
		}
		for _, at := range reads {
			advance(at - time.Since(began))
			lt, err := b.Acquire(context.Background())
			var held *lease.HeldError
			switch {
			case err == nil:
				bTerm, bAt = lt, time.Since(began)
			case errors.As(err, &held):
				t.Logf("%v: b reads %s's record (token %d), waits %v more", time.Since(began), held.Record.Holder, held.Record.Token, held.Wait)
			default:
				t.Logf("%v: b's Acquire: %v", time.Since(began), err)
			}
			if err == nil {
				break
			}
		}
		if bTerm.Token == 0 {
			t.Logf("b never took the lease over: nothing overlapped")
			return
		}
		advance(10 * time.Second)
		_ = stopA()
		t.Logf("W2 hidden at %v; b took the lease over at %v with token %d", time.Duration(ll.restored.Load()), bAt, bTerm.Token)
		j.checkTakeover(t, began, bAt)
	})
}

// checkTakeover logs a's terms in j and fails t for each that overlaps b's
// term: b took the lease over at bAt (since began) and leads from then
// until bAt + RenewDeadline at least.
func (j *journal) checkTakeover(t *testing.T, began time.Time, bAt time.Duration) {
	t.Helper()
	for _, tm := range j.recorded() {
		t.Logf("a (token %d) led from %v to %v", tm.token, tm.start.Sub(began), tm.end.Sub(began))
		if tm.start.Sub(began) < bAt+renewDeadline && tm.end.Sub(began) > bAt {
			t.Errorf("two leaders at once: b took the lease at %v while a (token %d) led until %v", bAt, tm.token, tm.end.Sub(began))
		}
	}
}

// TestRedteam11RunnerFollowerTakesOverTwoHiddenRenewals (rules 1, 3;
// fails on 2329058, passes with its runner change reverted): the hole of
// TestRedteam11TwoRenewalsHiddenBetweenTwoReads between two Runners, with
// the follower's reads placed by the runner itself. The fleet runs at the
// largest RenewDeadline the runner accepts, TTL - RenewInterval (9.375 s
// at TTL 15 s), with CallTimeout 3.8 s, so that a renewal may land up to
// RenewDeadline - RenewInterval = 3.75 s late and still count; a's first
// renewal (sent 5.625 s) lands 3.5 s late, at 9.125 s, and its second,
// sent R after the first was sent (11.25 s), lands at once and is hidden
// by a restore of the acquisition's body. W1's body was in the store for
// 2.125 s, less than a follower's step (readStep: 2R/3 = 3.75 s, here the
// reads came at 8.81 s and 11.39 s). b, which started at 10 ms, counts the
// acquisition's version from 10 ms and takes it over at 15.01 s; a counts
// its second renewal from 11.25 s and leads until its third renewal, at
// 16.875 s, finds b's record (its deadline 20.6 s). With the renewal sent
// R after the previous answer (before 2329058) W1's body stays R = 5.625 s
// in the store and no step of the follower's misses it: the same sweep
// (delays 2.9-3.7 s, b starting 0-5.6 s after a, 4 seeds) found 18 of 560
// runs with two leaders on 2329058, none with the change reverted.
func TestRedteam11RunnerFollowerTakesOverTwoHiddenRenewals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		la, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl, CallTimeout: 3800 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ll := &lateLanding{Lease: la, store: store, identity: "a", delay: 3500 * time.Millisecond, began: began}
		j := newJournal()
		deadline := ttl - renewInterval
		stopA := start(t, runner.Config{Lease: ll, Task: j.task("a"), RenewDeadline: deadline, Logger: testLogger(t, began), Rand: rand.NewPCG(1, 1)})
		advance(10 * time.Millisecond)
		first, _ := store.Bytes("job")
		ll.first.Store(&first)
		stopB := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b"), RenewDeadline: deadline, Logger: testLogger(t, began), Rand: rand.NewPCG(1, 2)})
		advance(60 * time.Second)
		_, _ = stopA(), stopB()
		for _, tm := range j.recorded() {
			t.Logf("%s (token %d) led from %v to %v", tm.who, tm.token, tm.start.Sub(began), tm.end.Sub(began))
		}
		j.checkSafety(t)
	})
}
