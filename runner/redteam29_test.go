package runner_test

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// asks holds Candidates as identity as, once it can take it, asking the
// leader to hand the lease to `to` ("*": any other), for the term of
// token (0: any leader's), as leasehold handoff does; it renews the
// request `renewals` times (-1: until stop is closed), then releases it on
// stop, or, when killed is set, stops writing altogether (SIGKILL).
func asks(t *testing.T, store *memlease.Store, as, to string, token uint64, renewals int, killed bool, stop <-chan struct{}) {
	t.Helper()
	l := openCandidates(t, store, as)
	go func() {
		term, err := l.Acquire(context.Background())
		for ; err != nil; term, err = l.Acquire(context.Background()) {
			advance(renewInterval / 4)
		}
		term = term.Annotate(runner.AnnotationHandoffTo, to)
		if token != 0 {
			term = term.Annotate(runner.AnnotationHandoffTerm, strconv.FormatUint(token, 10))
		}
		for n := 0; renewals < 0 || n < renewals; n++ {
			select {
			case <-stop:
				_ = l.Release(context.Background(), term)
				return
			case <-time.After(renewInterval):
			}
			if term, err = l.Renew(context.Background(), term); err != nil {
				return
			}
		}
		if !killed {
			<-stop
			_ = l.Release(context.Background(), term)
		}
	}()
}

// handoffsTo counts the demotions of whos that handed the lease to `to`.
func handoffsTo(j *journal, to string, whos ...string) int {
	n := 0
	for _, who := range whos {
		for _, d := range j.demotionsOf(who) {
			if d.Reason == runner.HandedOff && d.Successor == to {
				n++
			}
		}
	}
	return n
}

// TestRedTeam29KilledOperatorsRequest: leasehold handoff killed (SIGKILL)
// after it wrote its request and renewed it once leaves a record on
// Candidates that looks held, asking for a contender that has gone, and
// nobody renews it. It is obeyed at most once (the renewal the leader may
// have seen), never by the leaders after; and once a better candidate
// takes Candidates over from it, the request it carried over is not that
// candidate's: the leader hands the lease to the candidate. Holds.
func TestRedTeam29KilledOperatorsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		whos := []string{"a", "b", "c", "d"}
		startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "b", "1", nil)
		startPreferring(t, store, j, "c", "1", nil)
		advance(ttl)
		asks(t, store, "operator", "gone", 0, 1, true, nil)
		advance(10 * ttl)
		if n := handoffsTo(j, "gone", whos...); n > 1 {
			t.Errorf("a killed operator's request for a gone contender was obeyed %d times, want at most once", n)
		}
		startPreferring(t, store, j, "d", "2", nil)
		advance(10 * ttl)
		if n, lead := handoffsTo(j, "gone", whos...), j.leader(); n > 1 || lead != "d" {
			t.Errorf("after a better candidate took Candidates over: %d handoffs to the gone contender, leading %q; want at most 1, d", n, lead)
		}
		j.checkSafety(t)
	})
}

// TestRedTeam29HandBackOncePerCoolDown: handoff --to b, b ordering before
// the leader a, while the operator's request stays renewed for leasehold
// handoff's whole default --timeout (3 TTLs, as when the command does not
// see b lead): a hands the lease to b once; b ignores the request naming
// itself; a takes the lease back by preference once, after CoolDown and the
// request's release; and nothing moves after that. Holds.
func TestRedTeam29HandBackOncePerCoolDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "a", "2", nil)
		advance(ttl)
		startPreferring(t, store, j, "b", "1", nil)
		advance(ttl)
		stop := make(chan struct{})
		asks(t, store, "operator", "b", 0, -1, false, stop)
		advance(3 * ttl)
		close(stop)
		advance(10 * ttl)
		terms := j.recorded()
		if len(terms) != 2 || terms[0].who != "a" || terms[1].who != "b" || j.leader() != "a" {
			t.Errorf("terms ended %+v, leading %q: want a's, b's, then a leading", terms, j.leader())
		}
		if len(terms) == 2 && terms[1].end.Sub(terms[1].start) < ttl {
			t.Errorf("b led %v, want at least CoolDown (%v)", terms[1].end.Sub(terms[1].start), ttl)
		}
		j.checkSafety(t)
	})
}

// TestRedTeam29OperatorRacesAPreferenceHandoff: a better candidate c
// announces itself while an operator asks for --to b: Candidates is one
// lease, so the requests take turns; leadership moves a -> c -> b -> c at
// most, with no two leaders and tokens increasing. Holds.
func TestRedTeam29OperatorRacesAPreferenceHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "b", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "c", "2", nil)
		advance(renewInterval / 3)
		stop := make(chan struct{})
		asks(t, store, "operator", "b", 0, -1, false, stop)
		for j.leader() != "b" {
			advance(time.Second)
		}
		close(stop)
		advance(10 * ttl)
		if terms := j.recorded(); len(terms) > 3 || j.leader() != "c" {
			t.Errorf("terms ended %+v, leading %q: want at most a, c and b's, then c leading", terms, j.leader())
		}
		j.checkSafety(t)
	})
}

// TestRedTeam29AnyOtherToTheLeadersTwin: handoff without --to while the
// leader's identity also runs in another process (a restart overlapping
// its predecessor): the twin may take the lease released; one leader at a
// time, tokens increasing. Holds.
func TestRedTeam29AnyOtherToTheLeadersTwin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a'"), Prefer: "1", Candidates: openCandidates(t, store, "a"), FollowerReads: 6, OnDemoted: j.demoted("a'")})
		advance(ttl)
		stop := make(chan struct{})
		asks(t, store, "operator", "*", 0, -1, false, stop)
		for j.leader() != "a'" {
			advance(time.Second)
		}
		close(stop)
		advance(4 * ttl)
		j.checkSafety(t)
	})
}

// TestRedTeam29RequestUnderTheLeadersIdentity: leasehold handoff run with
// the leader's identity, which is its default wherever the identity is the
// container's (ecs-TASKID, an Azure replica or instance name: an operator
// who execs into the leader's task to take it down for maintenance): the
// leader reads the request held by its own identity and ignores it, "*"
// included, though AnnotationHandoffTo's doc says it ignores only a request
// naming itself. leasehold handoff waited out --timeout and exited 75.
// Failed before the leader obeyed a request held under its identity
// (handoffTo: only its own announcement, which carries no request, is
// ignored).
func TestRedTeam29RequestUnderTheLeadersIdentity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "b", "1", nil)
		advance(ttl)
		stop := make(chan struct{})
		asks(t, store, "a", "*", 0, -1, false, stop)
		advance(3 * ttl)
		close(stop)
		if d := j.demotionsOf("a"); len(d) == 0 || d[0].Reason != runner.HandedOff {
			t.Errorf("a, asked under its own identity to hand over to any other, demotions %+v, leading %q: want handed off", d, j.leader())
		}
		j.checkSafety(t)
	})
}
