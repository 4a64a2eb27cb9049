package quorumlease_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

// TestRedTeamPartitionedMinorityHolderBlocksNobody: a contender that can
// reach only the first member (its region's store) takes it and can never
// complete a majority; a contender that reaches every member must still
// lead within a few TTLs (claims d and e: no livelock, a minority's
// outage costs nothing).
func TestRedTeamPartitionedMinorityHolderBlocksNobody(t *testing.T) {
	for _, later := range []time.Duration{0, ttl / 4, ttl / 2, ttl * 9 / 10, ttl, 3 * ttl / 2, 5 * ttl} {
		t.Run(later.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				f.q.stores[1].Partition("b")
				f.q.stores[2].Partition("b")
				f.start("b")
				time.Sleep(later)
				begin := time.Now()
				f.start("a")
				time.Sleep(10 * ttl)
				terms := f.stop()
				if len(terms) != 1 || terms[0].who != "a" {
					t.Fatalf("tenures %+v, want a's: b, cut off from a majority, holds the first member and no one leads", terms)
				}
				t.Logf("a led after %v", terms[0].start.Sub(begin))
			})
		})
	}
}

// TestRedTeamRenewAfterASuccessorsTerm: a holder that stalls past its
// term, while another contender leads with a greater token and releases,
// must find its term lost: a Renew that takes the freed members back and
// returns its old token after the successor's breaks fencing (claim b)
// and lease.Lease's Renew (ErrLost once the lease was taken over).
func TestRedTeamRenewAfterASuccessorsTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		a, b := open(t, h, "a"), open(t, h, "b")
		ta := acquire(t, a)
		tb := waitAcquire(t, b) // a stalls: b takes over after a's TTL
		if tb.Token <= ta.Token {
			t.Fatalf("b's token %d, a's %d", tb.Token, ta.Token)
		}
		if err := b.Release(ctx, tb); err != nil {
			t.Fatal(err)
		}
		nt, err := a.Renew(ctx, ta)
		if err == nil {
			t.Fatalf("a's Renew of its term (token %d) after b led with token %d and released: a term with token %d, want lease.ErrLost", ta.Token, tb.Token, nt.Token)
		}
		if !errors.Is(err, lease.ErrLost) {
			t.Errorf("a's Renew after b's term: %v, want lease.ErrLost", err)
		}
	})
}

// TestRedTeamTokenCannotWrap: a member record whose quorum token is the
// largest uint64 (a hostile or corrupt annotation) must not make the next
// leader's token wrap round to 0 (claim b, rule 10): the engine reports a
// token that cannot grow as lease.ErrCorrupt.
func TestRedTeamTokenCannotWrap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		for i, s := range h.stores {
			m, _ := s.Open("job", lease.Options{Identity: "mallory", TTL: ttl})
			mt, err := m.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mt = mt.Annotate("quorum/token", strconv.FormatUint(^uint64(0), 10)).Annotate("quorum/seq", "1")
			if i > 0 {
				mt = mt.Annotate("quorum/token", "7")
			}
			if err := m.Release(ctx, mt); err != nil {
				t.Fatal(err)
			}
		}
		a := open(t, h, "a")
		ta, err := a.Acquire(ctx)
		if err == nil {
			t.Fatalf("Acquire after a record with quorum token 2^64-1: token %d, want lease.ErrCorrupt", ta.Token)
		}
		if !errors.Is(err, lease.ErrCorrupt) {
			t.Errorf("Acquire after a record with quorum token 2^64-1: %v, want lease.ErrCorrupt", err)
		}
	})
}

// TestRedTeamReturningMemberTakenBackFromAStrandedContender: the leader,
// cut off from member 1 for a while, comes back to it; meanwhile a
// contender that reaches member 1 alone took it as a minority. The leader
// must hold member 1 again within a few TTLs (claim e: a returning member
// is taken back), or a second outage ends a term a quorum could keep.
func TestRedTeamReturningMemberTakenBackFromAStrandedContender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3)
		f.start("a")
		time.Sleep(ttl)
		f.q.stores[1].Partition("c")
		f.q.stores[2].Partition("c")
		f.start("c")
		f.q.stores[0].Partition("a")
		time.Sleep(3 * ttl)
		f.q.stores[0].Heal("a")
		time.Sleep(6 * ttl)
		rec := f.q.holderOf(t, 0)
		f.q.stores[2].Partition("a") // a second outage: member 3
		time.Sleep(3 * ttl)
		terms := f.stop()
		if rec.Holder != "a" {
			t.Errorf("member 1, six TTLs after a came back to it: %+v, want held by a", rec)
		}
		if len(terms) != 1 || terms[0].who != "a" || !terms[0].end.IsZero() && terms[0].end.Before(time.Now()) && len(terms) != 1 {
			t.Errorf("tenures %+v, want a's alone", terms)
		}
	})
}

// noWatch is a member lease that judges expiry itself, on the contender's
// clock, but does not say how far its count has gone (no lease.Watcher): a
// lease.Lease of another module, which New accepts.
type noWatch struct{ lease.Lease }

// TestRedTeamMemberWithoutWatcher: a member whose Lease judges expiry
// (JudgedByContender) but is no lease.Watcher must not keep a record of a
// holder that has gone for ever: its own Acquire judges when it may be
// taken. With it first in the members' order, a holder that stops
// renewing must be succeeded within a few TTLs (claim d).
func TestRedTeamMemberWithoutWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		openQ := func(who string) lease.Lease {
			return openFirstAs(t, h, who, func(l lease.Lease) lease.Lease { return noWatch{l} })
		}
		a, b := openQ("a"), openQ("b")
		ta := acquire(t, a) // and a stops
		tb := waitAcquire(t, b)
		if tb.Token <= ta.Token {
			t.Errorf("b's token %d after a's %d", tb.Token, ta.Token)
		}
	})
}

// lossy is a member whose next writes land and whose answers are then
// lost, read-back and all (the outcome is unknown: lease.ErrUnavailable).
type lossy struct {
	lease.Lease
	lose *int
}

func (l lossy) Wait(r lease.Record) time.Duration { return l.Lease.(lease.Watcher).Wait(r) }

func (l lossy) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	if err == nil && *l.lose > 0 {
		*l.lose--
		return lease.Term{}, fmt.Errorf("lossy: answer lost: %w", lease.ErrUnavailable)
	}
	return nt, err
}

// TestRedTeamObserveShowsTheAnnotationsAMajorityTook: Observe's record
// names by its Version the latest write a majority took, and a reader
// (the runner resolving an unanswered write: period.go's holdUntil takes
// the run's mark as written when the record Observe returns carries it)
// relies on its annotations being that write's. A later write that one
// member of three took (a done mark) must not show in it: a successor
// that takes the other two never sees it.
func TestRedTeamObserveShowsTheAnnotationsAMajorityTook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		lose := make([]int, 3)
		var ms []lease.Lease
		for i, s := range h.stores {
			l, err := s.Open("job", lease.Options{Identity: "a", TTL: ttl})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, lossy{l, &lose[i]})
		}
		a, err := quorumlease.New(ms, nil)
		if err != nil {
			t.Fatal(err)
		}
		ta := acquire(t, a)
		// A renewal lands on members 1 and 2, unanswered; member 3 fails.
		lose[0], lose[1] = 1, 1
		h.stores[2].FailNext("a", 1)
		if _, err := a.Renew(ctx, ta); err == nil {
			t.Fatal("renewal with every answer lost: nil error")
		}
		// The run's mark lands on member 3 alone.
		h.stores[0].FailNext("a", 2)
		h.stores[1].FailNext("a", 2)
		if _, err := a.Renew(ctx, ta.Annotate("runner/period-done", "1")); err == nil {
			t.Fatal("the mark's write, taken by one member: nil error")
		}
		rec, err := a.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("record %+v", rec)
		if rec.Version == ta.Version {
			t.Fatalf("Version %q did not move, though the renewal reached a majority", rec.Version)
		}
		if rec.Annotations.Get("runner/period-done") != "" {
			t.Errorf("Observe's record (version %q) carries the mark that one member of three took: a reader counts it written", rec.Version)
		}
	})
}

// TestRedTeamGreaterTokenOfAFailedLeadDeposesNobody: a member that shows a
// greater quorum token than the live term's, written by a contender whose
// lead reached that member alone, is taken back by the leader without
// ending its term: no other led (the refinement of the check that
// TestRedTeamRenewAfterASuccessorsTerm asks for).
func TestRedTeamGreaterTokenOfAFailedLeadDeposesNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		c, _ := h.stores[2].Open("job", lease.Options{Identity: "c", TTL: ttl})
		ct, err := c.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Renew(ctx, ct.Annotate("quorum/token", "9").Annotate("quorum/seq", "1")); err != nil {
			t.Fatal(err)
		} // and c stops
		h.stores[2].Partition("a")
		a := open(t, h, "a")
		ta := acquire(t, a)
		h.stores[2].Heal("a")
		for range 4 * ttl / (ttl / 4) {
			time.Sleep(ttl / 4)
			var err error
			if ta, err = a.Renew(ctx, ta); err != nil {
				t.Fatalf("a's renewal while c's record of token 9 lapses on member 3: %v", err)
			}
		}
		if rec := h.holderOf(t, 2); rec.Holder != "a" {
			t.Errorf("member 3 after 4 TTLs of a's renewals: %+v, want taken back by a", rec)
		}
	})
}

// TestRedTeamHungMemberKeepsTheLeader: a member that stops answering the
// leader (its calls hang until they time out) is a minority's outage and
// must cost the leader nothing (claim e): a renewal that waited for it,
// its timeout, read-back and retry, came back later than the runner's
// renew deadline allows, and the leader stepped down every few seconds.
func TestRedTeamHungMemberKeepsTheLeader(t *testing.T) {
	for member := range 3 {
		t.Run(fmt.Sprint(member), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				f.start("a")
				time.Sleep(ttl)
				f.start("b")
				time.Sleep(ttl)
				f.q.stores[member].Hang("a")
				time.Sleep(10 * ttl)
				f.q.stores[member].Heal("a")
				time.Sleep(2 * ttl)
				terms := f.stop()
				if len(terms) != 1 {
					t.Errorf("tenures %+v, want a's alone: a hung minority member must not end the term", terms)
				}
				checkOneAtATime(t, terms)
			})
		})
	}
}

// TestRedTeamHungMemberForAllElectsOnce: with one member hung for every
// contender, one leader is elected and keeps its term (claims d and e):
// the new token's write waited for the hung member, so each term began
// with its deadline already spent, and the leader changed every TTL.
func TestRedTeamHungMemberForAllElectsOnce(t *testing.T) {
	for member := range 3 {
		t.Run(fmt.Sprint(member), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				for _, w := range []string{"a", "b", "c"} {
					f.q.stores[member].Hang(w)
				}
				for _, w := range []string{"a", "b", "c"} {
					f.start(w)
				}
				time.Sleep(10 * ttl)
				terms := f.stop()
				t.Logf("%d tenures", len(terms))
				if len(terms) != 1 {
					t.Errorf("tenures %+v, want one", terms)
				}
				checkOneAtATime(t, terms)
			})
		})
	}
}

// TestRedTeamWaitAgreesWithAcquire: lease.Watcher's Wait is 0 only when
// Acquire would write at once. A contender holding the first member alone
// (cut off from the others) keeps every Acquire from starting, though a
// majority of the members are free: Wait must not say 0 then (leasehold
// status and break judge by it).
func TestRedTeamWaitAgreesWithAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		a, b, c := open(t, h, "a"), open(t, h, "b"), open(t, h, "c")
		ta := acquire(t, a)
		if err := a.Release(ctx, ta); err != nil {
			t.Fatal(err)
		}
		h.stores[1].Partition("b")
		h.stores[2].Partition("b")
		if _, err := b.Acquire(ctx); err == nil {
			t.Fatal("b, cut off from two members of three, acquired")
		}
		if rec := h.holderOf(t, 0); rec.Holder != "b" || !rec.Held() {
			t.Fatalf("member 1: %+v, want held by b", rec)
		}
		rec, err := c.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w := c.(lease.Watcher).Wait(rec)
		_, aerr := c.Acquire(ctx)
		t.Logf("Wait %v; Acquire: %v", w, aerr)
		if w == 0 && aerr != nil {
			t.Errorf("Wait said 0 (Acquire would write at once), and Acquire then failed: %v", aerr)
		}
	})
}

// TestRedTeamJudgeBesideAcquire: a lease.Lease is safe for concurrent use,
// and the runner asks Judge, RenewalsShow and FollowerReads while another
// Runner on the same Lease acquires (two Runners on one Lease). Under
// -race, as scripts/test runs it, reading the members' state unlocked
// while Acquire takes a member was a data race.
func TestRedTeamJudgeBesideAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		a := open(t, h, "a")
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 20 {
				_ = a.Judge()
				_ = lease.RenewalsShow(a)
				_ = lease.FollowerReads(a)
				time.Sleep(ttl / 16)
			}
		}()
		for range 10 {
			if tm, err := a.Acquire(context.Background()); err == nil {
				_ = a.Release(context.Background(), tm)
			}
			time.Sleep(ttl / 8)
		}
		<-done
	})
}
