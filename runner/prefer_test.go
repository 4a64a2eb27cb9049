package runner_test

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

func TestComparePrefer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.3", 1}, {"v9", "v12", -1}, {"2", "2", 0}, {"", "1", -1}, {"1", "", 1},
		{"1.2", "1.2.0", -1}, {"007", "7", 0}, {"b", "a", 1}, {"1.2.3-rc1", "1.2.3-rc2", -1},
		{"zone-a", "zone-b", -1}, {"10", "9a", 1},
	} {
		if got := runner.ComparePrefer(c.a, c.b); got != c.want {
			t.Errorf("ComparePrefer(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := runner.ComparePrefer(c.b, c.a); got != -c.want {
			t.Errorf("ComparePrefer(%q, %q) = %d, want %d", c.b, c.a, got, -c.want)
		}
	}
}

func TestPreferRefusesBadConfig(t *testing.T) {
	store := memlease.NewStore()
	l := openLease(t, store, "a")
	cands := openCandidates(t, store, "a")
	other := openCandidates(t, store, "b")
	task := func(context.Context) error { return nil }
	for _, c := range []struct {
		name  string
		cfg   runner.Config
		field string
	}{
		{"Prefer without Candidates", runner.Config{Lease: l, Task: task, Prefer: "2"}, "Candidates"},
		{"Candidates without Prefer", runner.Config{Lease: l, Task: task, Candidates: cands}, "Prefer"},
		{"Candidates of another identity", runner.Config{Lease: l, Task: task, Prefer: "2", Candidates: other}, "Candidates"},
		{"Prefer with a control byte", runner.Config{Lease: l, Task: task, Prefer: "2\n", Candidates: cands}, "Prefer"},
		{"a Lease that cannot hand off", runner.Config{Lease: noHandoff{l}, Task: task, Prefer: "2", Candidates: cands}, "Lease"},
	} {
		_, err := runner.New(c.cfg)
		oe, ok := errors.AsType[*lease.OptionError](err)
		if !ok || oe.Field != c.field || !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("%s: New returned %v, want an *lease.OptionError naming %s", c.name, err, c.field)
		}
	}
	r, err := runner.New(runner.Config{Lease: l, Task: task, Prefer: "2", Candidates: cands})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.RunOnce(t.Context()); !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("RunOnce with Prefer: %v, want lease.ErrInvalid", err)
	}
}

// noHandoff hides a Lease's other methods, Handoffer's among them.
type noHandoff struct{ lease.Lease }

// openCandidates opens the candidates' lease "job.candidates" for identity.
func openCandidates(t *testing.T, store *memlease.Store, identity string) lease.Lease {
	t.Helper()
	l, err := store.Open("job.candidates", lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatalf("open candidates for %s: %v", identity, err)
	}
	return l
}

// startPreferring starts who's runner with Prefer prefer, reading six
// times a renew interval, and calls onDemoted (if not nil) after the
// journal has recorded each demotion.
func startPreferring(t *testing.T, store *memlease.Store, j *journal, who, prefer string, onDemoted func(runner.Demotion)) func() error {
	t.Helper()
	demoted := j.demoted(who)
	return start(t, runner.Config{Lease: openLease(t, store, who), Task: j.task(who), Prefer: prefer, Candidates: openCandidates(t, store, who), FollowerReads: 6, OnDemoted: func(d runner.Demotion) {
		demoted(d)
		if onDemoted != nil {
			onDemoted(d)
		}
	}})
}

// TestPreferHandsOverToTheBetterCandidate: a leader preferring "1" hands
// the lease to a contender preferring "2" that starts after it, within a
// few renew intervals, once its task has returned; a third contender
// preferring "1", reading six times a renew interval, never leads; the
// handoff's leaderless time is a fraction of the TTL; and no leadership
// moves again.
func TestPreferHandsOverToTheBetterCandidate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "old", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "third", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "new", "2", nil)
		advance(4 * ttl)
		terms := j.recorded()
		if len(terms) != 1 || terms[0].who != "old" || j.leader() != "new" {
			t.Fatalf("terms ended %+v, leading now %q: want old's one term ended and new leading", terms, j.leader())
		}
		d := j.demotionsOf("old")
		if len(d) != 1 || d[0].Reason != runner.HandedOff || d[0].Successor != "new" || !d[0].Released {
			t.Errorf("old's demotions: %+v, want one, handed off to new", d)
		}
		rec, err := openLease(t, store, "reader").Observe(t.Context())
		if err != nil || rec.Holder != "new" || rec.Token <= terms[0].token {
			t.Fatalf("the record: %+v, %v, want new's term with a token above %d", rec, err, terms[0].token)
		}
		j.checkSafety(t)
	})
}

// TestPreferCandidateCrashesMidHandoff: the candidate crashes (every call
// of its hangs) just as the leader hands it the lease: another contender
// (the old leader, or a third) takes the lease over once the handoff's
// record has stood for a TTL, as after a crash of a leader right after a
// renewal: no sooner, and within half a TTL more.
func TestPreferCandidateCrashesMidHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		var handed shared[time.Time]
		startPreferring(t, store, j, "old", "1", func(d runner.Demotion) {
			if d.Reason == runner.HandedOff {
				store.Hang("new") // it crashed as it was handed the lease: its calls never answer
				handed.set(time.Now())
			}
		})
		advance(ttl)
		startPreferring(t, store, j, "third", "1", nil)
		startPreferring(t, store, j, "new", "2", nil)
		for handed.get().IsZero() {
			advance(time.Millisecond)
		}
		for j.leader() == "" {
			advance(time.Millisecond)
		}
		took := time.Since(handed.get())
		if who := j.leader(); who == "new" || took < ttl || took > ttl*3/2 {
			t.Errorf("%s led %v after the handoff to a crashed candidate, want another contender after the TTL (%v) and within half a TTL more", who, took, ttl)
		}
		j.checkSafety(t)
	})
}

// TestPreferRollingDeploy: five instances preferring "1", of which one
// leads, replaced one at a time by instances preferring "2", each new one
// started before an old one is stopped (as ECS and Kubernetes roll by
// default): leadership moves once, to the first new instance.
func TestPreferRollingDeploy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		var stops []func() error
		for _, who := range []string{"old-1", "old-2", "old-3", "old-4", "old-5"} {
			stops = append(stops, startPreferring(t, store, j, who, "1", nil))
			advance(ttl / 10)
		}
		advance(2 * ttl)
		for i, who := range []string{"new-1", "new-2", "new-3", "new-4", "new-5"} {
			startPreferring(t, store, j, who, "2", nil)
			advance(2 * ttl)
			stops[i]()
			advance(ttl)
		}
		terms := j.recorded()
		if len(terms) != 1 || j.leader() != "new-1" {
			t.Errorf("terms ended %+v, leading %q: want one old instance's term, then new-1 leading", terms, j.leader())
		}
		j.checkSafety(t)
	})
}

// operatorAsks holds Candidates as "operator", asking the leader to hand
// the lease to `to` ("*": any other), renewing it every renew interval
// until stop is closed.
func operatorAsks(t *testing.T, store *memlease.Store, to string, stop <-chan struct{}) {
	t.Helper()
	l := openCandidates(t, store, "operator")
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatalf("operator's Acquire of Candidates: %v", err)
	}
	term = term.Annotate(runner.AnnotationHandoffTo, to)
	go func() {
		for {
			select {
			case <-stop:
				_ = l.Release(context.Background(), term)
				return
			case <-time.After(renewInterval):
			}
			var err error
			if term, err = l.Renew(context.Background(), term); err != nil {
				return
			}
		}
	}()
}

// TestPreferOperatorHandoff: an operator's request on Candidates
// (AnnotationHandoffTo) makes the leader hand the lease to the contender
// it names, whatever their Prefers, or, for "*", release it and cool down,
// so that another contender leads; the old leader, which orders after the
// new one, does not announce itself for CoolDown, and then takes the lease
// back by preference, once.
func TestPreferOperatorHandoff(t *testing.T) {
	for _, to := range []string{"b", "*"} {
		t.Run(to, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store, j := memlease.NewStore(), newJournal()
				startPreferring(t, store, j, "a", "2", nil)
				advance(ttl)
				startPreferring(t, store, j, "b", "1", nil)
				startPreferring(t, store, j, "c", "1", nil)
				advance(ttl)
				stop := make(chan struct{})
				operatorAsks(t, store, to, stop)
				for j.leader() == "a" {
					advance(time.Millisecond)
				}
				close(stop)
				advance(ttl / 2)
				d := j.demotionsOf("a")
				switch lead := j.leader(); {
				case len(d) != 1 || d[0].Reason != runner.HandedOff:
					t.Errorf("a's demotions %+v, want one, handed off", d)
				case to == "b" && (lead != "b" || d[0].Successor != "b"):
					t.Errorf("leading %q, a handed to %q, want b", lead, d[0].Successor)
				case to == "*" && (lead == "a" || lead == "" || d[0].Successor != ""):
					t.Errorf("leading %q, a handed to %q, want another contender, by a release", lead, d[0].Successor)
				}
				advance(4 * ttl)
				if terms := j.recorded(); len(terms) != 2 || j.leader() != "a" {
					t.Errorf("terms ended %+v, leading %q: want a's and one other's, then a leading again by preference", terms, j.leader())
				}
				j.checkSafety(t)
			})
		})
	}
}
