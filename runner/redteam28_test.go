package runner_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// Red team 28: Config.Prefer and Config.Candidates (commit 2babf08).

// logLine is one line a sink recorded.
type logLine struct {
	at    time.Time
	msg   string
	attrs map[string]string
}

// sink records every line logged through its handlers.
type sink struct {
	mu    sync.Mutex
	lines []logLine
}

func (s *sink) logger() *slog.Logger { return slog.New(sinkHandler{s: s}) }

// after returns the lines logged after at whose attribute key is value.
func (s *sink) after(at time.Time, key, value string) []logLine {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []logLine
	for _, l := range s.lines {
		if l.at.After(at) && l.attrs[key] == value {
			out = append(out, l)
		}
	}
	return out
}

type sinkHandler struct {
	s     *sink
	attrs []slog.Attr
}

func (h sinkHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h sinkHandler) Handle(_ context.Context, r slog.Record) error {
	l := logLine{at: time.Now(), msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		l.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		l.attrs[a.Key] = a.Value.String()
		return true
	})
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	h.s.lines = append(h.s.lines, l)
	return nil
}

func (h sinkHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return sinkHandler{s: h.s, attrs: append(slices.Clone(h.attrs), as...)}
}

func (h sinkHandler) WithGroup(string) slog.Handler { return h }

// lingering returns a leader task that records its term as journal.task
// does, but returns linger after its context is cancelled, as a task that
// takes time to stop; the term ends when the task returns.
func (j *journal) lingering(who string, linger time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		lt, _ := runner.Term(ctx)
		j.mu.Lock()
		j.leading[who] = true
		j.mu.Unlock()
		start := time.Now()
		<-ctx.Done()
		advance(linger)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.leading[who] = false
		j.terms = append(j.terms, term{who: who, token: lt.Token, start: start, end: time.Now()})
		return nil
	}
}

// handoffs counts the HandedOff demotions in j.
func (j *journal) handoffs() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, ds := range j.demotions {
		for _, d := range ds {
			if d.Reason == runner.HandedOff {
				n++
			}
		}
	}
	return n
}

// preferring is startPreferring's Config, with the candidates' lease in
// cstore, for changes before start.
func preferring(t *testing.T, store, cstore *memlease.Store, j *journal, who, prefer string) runner.Config {
	t.Helper()
	return runner.Config{Lease: openLease(t, store, who), Task: j.task(who), Prefer: prefer, Candidates: openCandidates(t, cstore, who), FollowerReads: 6, OnDemoted: j.demoted(who)}
}

// waitLeader advances the clock until who leads, for at most limit.
func waitLeader(t *testing.T, j *journal, who string, limit time.Duration) {
	t.Helper()
	for end := time.Now().Add(limit); j.leader() != who; advance(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s did not lead within %v (leading: %q)", who, limit, j.leader())
		}
	}
}

// TestRedTeam28HandoffWaitsForADrainingTask (holds): the leader's task
// takes 20 s (more than a TTL) to return once handed off, with a
// DrainTimeout of 30 s: the candidate leads only after it returned, with a
// greater token, and a third contender never leads.
func TestRedTeam28HandoffWaitsForADrainingTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		cfg := preferring(t, store, store, j, "old", "1")
		cfg.Task, cfg.DrainTimeout = j.lingering("old", 20*time.Second), 30*time.Second
		start(t, cfg)
		advance(ttl)
		startPreferring(t, store, j, "third", "1", nil)
		startPreferring(t, store, j, "new", "2", nil)
		advance(6 * ttl)
		if j.leader() != "new" || j.handoffs() != 1 {
			t.Errorf("leading %q after %d handoffs, want new after one", j.leader(), j.handoffs())
		}
		j.checkSafety(t)
	})
}

// TestRedTeam28HandoffTroubleStaysSafe (holds): the handoff's write fails,
// hangs, or loses its answer (the task sets the fault as its context ends,
// so the handoff is the leader's next write): at no instant do two tasks
// run, tokens increase, and the candidate leads in the end.
func TestRedTeam28HandoffTroubleStaysSafe(t *testing.T) {
	for name, fault := range map[string]func(*memlease.Store){
		"fails":        func(s *memlease.Store) { s.FailNext("old", 3) },
		"hangs":        func(s *memlease.Store) { s.Hang("old") },
		"answers lost": func(s *memlease.Store) { s.LoseResponses("old", 2) },
		"partitioned":  func(s *memlease.Store) { s.Partition("old") },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store, j := memlease.NewStore(), newJournal()
				cfg := preferring(t, store, store, j, "old", "1")
				inner := cfg.Task
				cfg.Task = func(ctx context.Context) error {
					go func() {
						<-ctx.Done()
						if d := context.Cause(ctx); d != nil && strings.Contains(d.Error(), "handed off") {
							fault(store)
						}
					}()
					return inner(ctx)
				}
				start(t, cfg)
				advance(ttl)
				startPreferring(t, store, j, "third", "1", nil)
				startPreferring(t, store, j, "new", "2", nil)
				advance(3 * ttl)
				store.Heal("old")
				advance(6 * ttl)
				if j.leader() != "new" {
					t.Errorf("leading %q, want new", j.leader())
				}
				j.checkSafety(t)
			})
		})
	}
}

// TestRedTeam28ComparePreferIsATotalOrder (holds): on random strings of
// digits, zeros, letters, separators and multi-byte runes, and very long
// digit runs, ComparePrefer is antisymmetric and transitive, so no two
// contenders each order after the other (no ping-pong).
func TestRedTeam28ComparePreferIsATotalOrder(t *testing.T) {
	alphabet := []string{"0", "00", "1", "9", "10", "a", "B", ".", "-", "é", "١", "１", strings.Repeat("9", 400), strings.Repeat("0", 300) + "1"}
	rng := rand.New(rand.NewPCG(28, 28))
	var vals []string
	for range 150 {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		vals = append(vals, b.String())
	}
	for _, a := range vals {
		for _, b := range vals {
			ab := runner.ComparePrefer(a, b)
			if ab != -runner.ComparePrefer(b, a) {
				t.Fatalf("not antisymmetric: %q, %q", a, b)
			}
			if ab > 0 {
				continue
			}
			for _, c := range vals {
				if bc := runner.ComparePrefer(b, c); bc <= 0 && runner.ComparePrefer(a, c) > 0 {
					t.Fatalf("not transitive: %q <= %q <= %q but %q > %q", a, b, c, a, c)
				}
			}
		}
	}
}

// TestRedTeam28TwoBetterCandidates (holds): old ("1") leads; "2" and "3"
// start one after the other: leadership ends with "3", after two handoffs
// at most, and stays there; tokens increase.
func TestRedTeam28TwoBetterCandidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "old", "1", nil)
		advance(ttl)
		startPreferring(t, store, j, "two", "2", nil)
		startPreferring(t, store, j, "three", "3", nil)
		advance(8 * ttl)
		if j.leader() != "three" || j.handoffs() > 2 {
			t.Errorf("leading %q after %d handoffs, want three after two at most", j.leader(), j.handoffs())
		}
		n := j.handoffs()
		advance(8 * ttl)
		if j.handoffs() != n || j.leader() != "three" {
			t.Errorf("handoffs went on: %d, then %d; leading %q", n, j.handoffs(), j.leader())
		}
		j.checkSafety(t)
	})
}

// TestRedTeam28CandidatesOfAnotherTTL (holds): Candidates with a TTL four
// times the lease's (renewed every 22.5 s, read every 5.6 s) still makes
// the handoff, within a few of its renew intervals.
func TestRedTeam28CandidatesOfAnotherTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		open := func(who string) lease.Lease {
			l, err := store.Open("job.candidates", lease.Options{Identity: who, TTL: 4 * ttl})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		for _, c := range []struct{ who, prefer string }{{"old", "1"}, {"new", "2"}} {
			start(t, runner.Config{Lease: openLease(t, store, c.who), Task: j.task(c.who), Prefer: c.prefer, Candidates: open(c.who), OnDemoted: j.demoted(c.who)})
			advance(ttl)
		}
		advance(8 * ttl)
		if j.leader() != "new" || j.handoffs() != 1 {
			t.Errorf("leading %q after %d handoffs, want new after one", j.leader(), j.handoffs())
		}
		j.checkSafety(t)
	})
}

// TestRedTeam28CandidacyWithdrawnForAnEqualLeader (holds): f ("2")
// announces on Candidates that the leader ("1") does not read; the
// leader hands the lease to g ("2", announced where it reads): f, no
// longer better, withdraws: Candidates released, and no more writes.
func TestRedTeam28CandidacyWithdrawnForAnEqualLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, cstore, gstore, j := memlease.NewStore(), memlease.NewStore(), memlease.NewStore(), newJournal()
		start(t, preferring(t, store, gstore, j, "old", "1"))
		advance(ttl)
		start(t, preferring(t, store, cstore, j, "f", "2"))
		advance(ttl)
		if _, w := cstore.Calls("f"); w == 0 {
			t.Fatal("f did not announce itself")
		}
		start(t, preferring(t, store, gstore, j, "g", "2"))
		waitLeader(t, j, "g", 4*ttl)
		advance(ttl)
		_, w0 := cstore.Calls("f")
		advance(4 * ttl)
		_, w1 := cstore.Calls("f")
		rec, err := openCandidates(t, cstore, "reader").Observe(t.Context())
		if w1 != w0 || err != nil || rec.Held() {
			t.Errorf("f wrote Candidates %d times more under an equal leader; its record: %+v, %v", w1-w0, rec, err)
		}
		j.checkSafety(t)
	})
}

// TestRedTeam28NoHandoffToItself (holds): a stale process with the
// leader's identity holds Candidates preferring "9" and renews it: the
// leader does not hand the lease to itself.
func TestRedTeam28NoHandoffToItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		startPreferring(t, store, j, "old", "1", nil)
		advance(ttl)
		c := openCandidates(t, store, "old")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		tm, err := c.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tm = tm.Annotate(runner.AnnotationPrefer, "9")
		for range 8 {
			advance(renewInterval)
			if tm, err = c.Renew(ctx, tm); err != nil {
				t.Fatal(err)
			}
		}
		if n := j.handoffs(); n != 0 || j.leader() != "old" {
			t.Errorf("%d handoffs; leading %q", n, j.leader())
		}
	})
}

// TestRedTeam28HandoffToATaskThatIgnoresCancellation (holds): handed off
// with no DrainTimeout, the old task ignores its context for 20 s (more
// than a TTL): the handoff is not sent (the lease lapses, rule 6), and the
// successor starts only after the final Expiry(ctx) the old task was
// given, so a task that honours Expiry never overlaps it.
func TestRedTeam28HandoffToATaskThatIgnoresCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, j := memlease.NewStore(), newJournal()
		var expiry shared[time.Time]
		cfg := preferring(t, store, store, j, "old", "1")
		cfg.Task = func(ctx context.Context) error {
			<-ctx.Done()
			<-runner.RenewalsDone(ctx)
			expiry.set(runner.Expiry(ctx))
			advance(20 * time.Second)
			return nil
		}
		start(t, cfg)
		advance(ttl)
		startPreferring(t, store, j, "new", "2", nil)
		waitLeader(t, j, "new", 6*ttl)
		if e := expiry.get(); e.IsZero() || !time.Now().After(e) {
			t.Errorf("new leads at %v, before the old task's final expiry %v", time.Now(), e)
		}
		advance(ttl)
		if d := j.demotionsOf("old"); len(d) != 1 || d[0].Reason != runner.HandedOff || d[0].Released {
			t.Errorf("old's demotions: %+v, want one HandedOff, not handed (past its window)", d)
		}
	})
}
