package runner_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam29HandoffToAGoneContenderRepeats: leasehold handoff --to an
// instance that has gone (crashed, or a mistyped identity), which keeps
// its request renewed until that instance leads or --timeout (3 TTLs by
// default) passes. The help says "if that instance has gone, another takes
// the lease a TTL later, as after a crash"; but each leader that took it
// obeyed the request again, handing the lease to nobody, so the fleet was
// leaderless for most of --timeout, not one TTL. Fixed: the request names
// the term it is for (AnnotationHandoffTerm, which leasehold handoff
// writes), and a later leader ignores it.
func TestRedTeam29HandoffToAGoneContenderRepeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		whos := []string{"a", "b", "c"}
		startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "b", "1", nil)
		startPreferring(t, store, j, "c", "1", nil)
		advance(ttl)
		stop := make(chan struct{})
		rec, err := openLease(t, store, "reader").Observe(t.Context())
		if err != nil || rec.Holder != "a" {
			t.Fatalf("before the request: %+v, %v, want a leading", rec, err)
		}
		asks(t, store, "operator", "gone", rec.Token, -1, false, stop)
		began := time.Now()
		var leaderless time.Duration
		for time.Since(began) < 3*ttl {
			advance(100 * time.Millisecond)
			if j.leader() == "" {
				leaderless += 100 * time.Millisecond
			}
		}
		close(stop)
		advance(2 * ttl)
		if n := handoffsTo(j, "gone", whos...); n != 1 || leaderless > ttl+renewInterval {
			t.Errorf("handoff --to a gone instance, renewed for 3 TTLs: the lease was handed to it %d times, leaderless %v of %v; want once, about a TTL", n, leaderless, 3*ttl)
		}
		j.checkSafety(t)
	})
}

// TestRedTeam29NamedContenderKeepsItForCoolDown: handoff --to b, where b
// orders before a third instance c (a=2, b=1, c=2). The doc said
// "preference takes the lease back from a contender an operator named only
// after" CoolDown, but only the old leader keeps quiet: c announces itself
// to b at once, and b hands the lease to c within a few renew intervals.
// The doc now says so (an operator's choice stands against the old
// leader's preference for CoolDown, not against another's): the lease
// goes a, b, then c, and stays with c.
func TestRedTeam29NamedContenderKeepsItForCoolDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		const coolDown = 4 * ttl
		run := func(who, prefer string) {
			start(t, runner.Config{Lease: openLease(t, store, who), Task: j.task(who), Prefer: prefer, Candidates: openCandidates(t, store, who), FollowerReads: 6, CoolDown: coolDown, OnDemoted: j.demoted(who)})
		}
		run("a", "2")
		advance(ttl)
		run("b", "1")
		run("c", "2")
		advance(ttl)
		stop := make(chan struct{})
		asks(t, store, "operator", "b", 0, -1, false, stop)
		for j.leader() != "b" {
			advance(100 * time.Millisecond)
		}
		close(stop)
		advance(coolDown)
		terms := j.recorded()
		if len(terms) != 2 || terms[0].who != "a" || terms[1].who != "b" || j.leader() != "c" {
			t.Errorf("CoolDown (%v) after handoff --to b: terms ended %+v, leading %q; want a's, b's, and c leading", coolDown, terms, j.leader())
		}
		j.checkSafety(t)
	})
}

// TestRedTeam29CarriedPreferOnALeaderWithoutPrefer: a leader without
// Prefer that took the lease over from one with it writes the Prefer it
// carried over (Acquire carries annotations over; only a runner with a
// Prefer writes AnnotationPrefer): its record says runner/prefer=1 though
// it reads no Candidates. leasehold handoff then takes it for a leader
// with --prefer (it refuses with 78 only a record without the annotation),
// writes a request nobody hears and exits 75 after --timeout; and a
// follower preferring "2" announces itself to it for nothing (red team
// 28's RT28-4 again). Fixed: every runner writes its own Prefer, or none.
func TestRedTeam29CarriedPreferOnALeaderWithoutPrefer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		stopA := startPreferring(t, store, j, "a", "1", nil)
		advance(ttl)
		start(t, runner.Config{Lease: openLease(t, store, "plain"), Task: j.task("plain"), FollowerReads: 6})
		advance(ttl)
		_ = stopA()
		for j.leader() != "plain" {
			advance(100 * time.Millisecond)
		}
		advance(ttl)
		rec, err := openLease(t, store, "reader").Observe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if p := rec.Annotations.Get(runner.AnnotationPrefer); rec.Holder != "plain" || p != "" {
			t.Errorf("record of %s, a leader without Prefer: runner/prefer=%q, want none", rec.Holder, p)
		}
		startPreferring(t, store, j, "c", "2", nil)
		advance(2 * ttl)
		if cr, err := openCandidates(t, store, "reader").Observe(t.Context()); err == nil && cr.Held() {
			t.Errorf("c announced itself on Candidates (%s holds it) to a leader without Prefer", cr.Holder)
		}
		j.checkSafety(t)
	})
}
