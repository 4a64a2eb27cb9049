package runner_test

// Red team 28's Prefer/Candidates findings, which failed at 2babf08: a
// candidate that cannot take the lease now withdraws; a withdrawn
// candidacy's runner is waited for before another starts; New refuses
// Candidates equal to the Lease, and Run one on the Lease's key; a
// follower does not announce itself to a leader without a Prefer.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam28UnreachableCandidateIsHandedTheLeaseAgainAndAgain: a
// candidate that cannot reach the lease (its calls on the lease's store
// fail, as when that store throttles or its network is down) while its
// announcement on Candidates (another store) keeps renewing keeps
// announcing: its campaign re-judges the announcement only on a held
// record, so every leader hands it the lease, and the lease stands a TTL
// without a leader, again and again. FAILS at 2babf08: one handoff per
// TTL and a half, the lease leaderless most of the time.
func TestRedTeam28UnreachableCandidateIsHandedTheLeaseAgainAndAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, cstore, j := memlease.NewStore(), memlease.NewStore(), newJournal()
		start(t, preferring(t, store, cstore, j, "old", "1"))
		advance(ttl)
		start(t, preferring(t, store, cstore, j, "third", "1"))
		start(t, preferring(t, store, cstore, j, "new", "2"))
		for j.handoffs() == 0 {
			advance(100 * time.Millisecond)
		}
		store.Partition("new") // as its first handoff is written
		leaderless := time.Duration(0)
		const step = 100 * time.Millisecond
		for range 10 * ttl / step {
			advance(step)
			if j.leader() == "" {
				leaderless += step
			}
		}
		if n := j.handoffs(); n > 1 {
			t.Errorf("%d handoffs to a candidate that cannot reach the lease; leaderless %v of %v", n, leaderless, 10*ttl)
		}
		j.checkSafety(t)
	})
}

// TestRedTeam28CandidacyOutlivesRun: a candidate withdraws (it saw the
// lease handed to another) while its announcement's release hangs, and
// announces again (the other leads, preferring less) before that release
// has returned; Run then returns, having waited for the second
// announcement's runner only: the first still runs, and logs, after Run
// has returned. FAILS at 2babf08.
func TestRedTeam28CandidacyOutlivesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, cstore, xstore := memlease.NewStore(), memlease.NewStore(), memlease.NewStore()
		j := newJournal()
		// old watches xstore's candidates only, so hands the lease to x,
		// not to f, whose announcement is on cstore.
		old := preferring(t, store, xstore, j, "old", "1")
		old.OnDemoted = func(d runner.Demotion) {
			if d.Reason == runner.HandedOff {
				cstore.Hang("f")
			}
		}
		start(t, old)
		advance(ttl)
		var s sink
		f := preferring(t, store, cstore, j, "f", "2")
		f.Logger = s.logger()
		stopF := start(t, f)
		advance(ttl)
		store.Delay("x", time.Second) // x takes the handed record a little later
		start(t, preferring(t, store, xstore, j, "x", "1.5"))
		waitLeader(t, j, "x", 4*ttl)
		advance(2 * time.Second) // f reads x's record and announces again
		if err := stopF(); err != nil {
			t.Fatal(err)
		}
		returned := time.Now()
		advance(2 * ttl)
		if late := s.after(returned, "role", "candidate"); len(late) > 0 {
			t.Errorf("f's Run returned at %v; its candidacy's runner logged afterwards: %q at %v", returned, late[0].msg, late[0].at)
		}
	})
}

// TestRedTeam28CandidatesSameAsLease: Candidates the very Lease of the
// runner (or the same key) is bad input: a follower's announcement then
// campaigns on the lease itself, a second contender with the same
// identity. New accepts it. FAILS at 2babf08.
func TestRedTeam28CandidatesSameAsLease(t *testing.T) {
	store := memlease.NewStore()
	l := openLease(t, store, "a")
	task := func(context.Context) error { return nil }
	_, err := runner.New(runner.Config{Lease: l, Task: task, Prefer: "2", Candidates: l})
	if !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("New with Candidates the Lease itself: %v, want lease.ErrInvalid", err)
	}
}

// TestRedTeam28NoAnnouncementToALeaderThatCannotHandOff: a follower
// preferring "2" while the leader has no Prefer (a build before it, or
// one started without it: it never reads Candidates) announces itself
// anyway, for as long as that leader leads: a write on Candidates every
// renew interval (27 in 10 TTLs), and a read of the lease every TTL/20
// (213 reads where a plain follower at FollowerReads 6 makes 160), for
// nothing. FAILS at 2babf08 (cost).
func TestRedTeam28NoAnnouncementToALeaderThatCannotHandOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, cstore, j := memlease.NewStore(), memlease.NewStore(), newJournal()
		start(t, runner.Config{Lease: openLease(t, store, "old"), Task: j.task("old")})
		advance(ttl)
		start(t, preferring(t, store, cstore, j, "new", "2"))
		start(t, runner.Config{Lease: openLease(t, store, "plain"), Task: j.task("plain"), FollowerReads: 6})
		advance(ttl)
		r0, _ := store.Calls("new")
		p0, _ := store.Calls("plain")
		_, w0 := cstore.Calls("new")
		advance(10 * ttl)
		r1, _ := store.Calls("new")
		p1, _ := store.Calls("plain")
		_, w1 := cstore.Calls("new")
		if r1-r0 > 2*(p1-p0) || w1 > w0 {
			t.Errorf("over 10 TTLs of a leader without Prefer, the preferring follower read the lease %d times (a plain follower %d) and wrote Candidates %d times", r1-r0, p1-p0, w1-w0)
		}
	})
}

// TestRedTeam28CandidatesSameKeyAsLease: Candidates opened on the lease's
// own key: the announcement would campaign on the lease itself, a second
// contender with the follower's identity, and the better follower never
// led; Run now refuses it at start, naming Candidates, when the lease
// has a record.
func TestRedTeam28CandidatesSameKeyAsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "old", "1", nil)
		advance(ttl)
		r, err := runner.New(runner.Config{Lease: openLease(t, store, "new"), Task: j.task("new"), Prefer: "2", Candidates: openLease(t, store, "new"), FollowerReads: 6, OnDemoted: j.demoted("new")})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Run(t.Context())
		if oe, ok := errors.AsType[*lease.OptionError](err); !ok || oe.Field != "Candidates" {
			t.Errorf("Run with Candidates on the lease's own key: %v, want an *lease.OptionError naming Candidates", err)
		}
		j.checkSafety(t)
	})
}
