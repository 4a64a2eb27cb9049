package leasetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Harness gives the suite access to one backend.
type Harness interface {
	// Open opens the lease called name for one contender.
	Open(ctx context.Context, name string, opts lease.Options) (lease.Lease, error)
	// WriteForeign stores, at the key of the lease called name, an object
	// that leasehold did not write (garbage bytes, foreign JSON, a foreign
	// item).
	WriteForeign(ctx context.Context, name string) error
}

// Deleter is a Harness that can also delete a lease's record. Every
// harness must implement it: the suite's RecordDeleted subtest (safety rule
// 10) fails for one that does not, rather than skip a safety property.
type Deleter interface {
	// Delete removes the record of the lease called name, bypassing
	// leasehold, as a lifecycle rule, a person or a restore from backup
	// would, even while a holder holds it (breaking a native lease that
	// holds it first).
	Delete(ctx context.Context, name string) error
}

// Config describes the backend under test.
type Config struct {
	// NewHarness returns the harness for one subtest. The suite calls it
	// once per subtest, inside the subtest's synctest bubble when FakeTime is
	// set. Required.
	NewHarness func(t *testing.T) Harness
	// TTL is the TTL every lease of the suite is opened with. Each subtest
	// waits up to about three TTLs: use a short one (2s) for real-time
	// emulators, any for fake time, and the backend's minimum where it has
	// one (Azure: 15s). Required.
	TTL time.Duration
	// FakeTime runs each subtest inside a testing/synctest bubble, where
	// waiting takes no real time. Only for backends that do no network I/O
	// (memlease). When false, subtests run in parallel, in real time.
	FakeTime bool
}

// RunConformanceTests runs the suite against the backend cfg describes, one
// subtest per property (TestConformance/TakeoverOnlyAfterTTL, ...).
func RunConformanceTests(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.NewHarness == nil {
		t.Fatal("leasetest: Config.NewHarness is nil")
	}
	if cfg.TTL <= 0 {
		t.Fatalf("leasetest: Config.TTL is %v, want a positive TTL the backend accepts", cfg.TTL)
	}
	judge := judgeOf(t, cfg)
	for _, tc := range cases {
		if tc.cas && judge != lease.JudgedByContender {
			continue // not a property of store-judged leases: nothing to skip
		}
		t.Run(tc.name, func(t *testing.T) {
			if cfg.FakeTime {
				synctest.Test(t, func(t *testing.T) { tc.run(newEnv(t, cfg, tc.name, judge)) })
				return
			}
			t.Parallel()
			tc.run(newEnv(t, cfg, tc.name, judge))
		})
	}
}

// judgeOf opens one lease of the backend and returns its Judge, which says
// which of the suite's properties apply: the backend declares nothing else.
func judgeOf(t *testing.T, cfg Config) lease.Judge {
	t.Helper()
	var judge lease.Judge
	probe := func(t *testing.T) {
		t.Helper()
		l, err := cfg.NewHarness(t).Open(t.Context(), UniqueName("judge"), lease.Options{Identity: "judge-probe", TTL: cfg.TTL})
		if err != nil {
			t.Fatalf("leasetest: opening a lease to ask its Judge: %v", err)
		}
		judge = l.Judge()
	}
	if cfg.FakeTime {
		synctest.Test(t, probe)
	} else {
		probe(t)
	}
	if judge != lease.JudgedByContender && judge != lease.JudgedByStore {
		t.Fatalf("leasetest: Lease.Judge() = %v, want lease.JudgedByContender or lease.JudgedByStore", judge)
	}
	return judge
}

// cases are the suite's subtests; cas marks properties of the stores whose
// contenders judge expiry (lease.JudgedByContender) only.
var cases = []struct {
	name string
	cas  bool
	run  func(*env)
}{
	{"AcquireFree", false, testAcquireFree},
	{"SecondContenderRefused", false, testSecondContenderRefused},
	{"SameIdentityRefused", false, testSameIdentityRefused},
	{"OwnTermRefused", false, testOwnTermRefused},
	{"Renew", false, testRenew},
	{"EveryWriteChangesVersion", true, testEveryWriteChangesVersion},
	{"RenewAfterDeposedIsLost", false, testRenewAfterDeposedIsLost},
	{"ReleaseThenAcquire", false, testReleaseThenAcquire},
	{"TakeoverOnlyAfterTTL", false, testTakeoverOnlyAfterTTL},
	{"ExpiryCountsFromFirstSight", true, testExpiryCountsFromFirstSight},
	{"GapRestartsCount", true, testGapRestartsCount},
	{"KeepsRenewingNeverDeposed", false, testKeepsRenewingNeverDeposed},
	{"RaceExactlyOneWins", false, testRaceExactlyOneWins},
	{"TokensStrictlyIncrease", false, testTokensStrictlyIncrease},
	{"CancelledContext", false, testCancelledContext},
	{"GarbageRecord", false, testGarbageRecord},
	{"RecordDeleted", false, testRecordDeleted},
	{"Break", false, testBreak},
	{"Annotations", false, testAnnotations},
	{"Keep", true, testKeep},
	{"ReleaseTo", false, testReleaseTo},
}

// Acquire is l.Acquire, tried again (up to 4 times in all) while it fails
// with lease.ErrUnavailable, as a runner does: a test that needs a term
// on a real store, which on a loaded machine may answer later than
// CallTimeout; an acquisition whose answer was lost is the Lease's own,
// which the next attempt takes.
func Acquire(t testing.TB, ctx context.Context, l lease.Lease) (lease.Term, error) {
	t.Helper()
	term, err := l.Acquire(ctx)
	for tries := 1; errors.Is(err, lease.ErrUnavailable) && tries < 4; tries++ {
		t.Logf("%s: Acquire: %v; trying again", l.Options().Identity, err)
		term, err = l.Acquire(ctx)
	}
	return term, err
}

// UniqueName returns a lease name that no other subtest or run uses:
// "leasetest-<prefix>-<8 random hex digits>", lower case, with any rune
// outside [a-z0-9-] of prefix dropped, so it suits every store's key rules.
func UniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	clean := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return -1
	}, prefix)
	return "leasetest-" + clean + "-" + hex.EncodeToString(b[:])
}

// env is one subtest's view of the backend: its harness, its lease name and
// its timing.
type env struct {
	t     *testing.T
	cfg   Config
	h     Harness
	ctx   context.Context
	name  string
	ttl   time.Duration
	judge lease.Judge
}

func newEnv(t *testing.T, cfg Config, subtest string, judge lease.Judge) *env {
	t.Helper()
	h := cfg.NewHarness(t)
	if h == nil {
		t.Fatal("leasetest: Config.NewHarness returned nil")
	}
	e := &env{t: t, cfg: cfg, h: h, ctx: t.Context(), name: UniqueName(subtest), ttl: cfg.TTL, judge: judge}
	t.Logf("lease %q, TTL %v, fake time %t, expiry judged by the %v", e.name, e.ttl, cfg.FakeTime, judge)
	return e
}

// poll is how often a contender retries Acquire.
func (e *env) poll() time.Duration { return e.ttl / 10 }

// margin is how long after a TTL a takeover may come: a backend's latency
// and a store's coarse clock fit in it many times over.
func (e *env) margin() time.Duration { return e.ttl / 2 }

// watchUntil has l observe the record every poll until at, so that its
// reads follow each other closely enough to count towards expiry.
//
// It reports whether the reads kept within the renew interval of each
// other, as the engine's count needs: on a loaded machine a real store may
// answer one late, which restarts the count without anything being wrong.
func (e *env) watchUntil(l lease.Lease, at time.Time) bool {
	unbroken, _ := e.watch(l, at, time.Now())
	return unbroken
}

// watch is watchUntil that also returns when its last read was sent; sent
// is when the read before the first was sent (the engine counts a read
// that returns more than the renew interval after the previous was sent
// as a break, and a loaded store's answer to that one may have been slow).
func (e *env) watch(l lease.Lease, at, sent time.Time) (unbroken bool, prev time.Time) {
	e.t.Helper()
	unbroken, prev = true, sent
	for time.Now().Add(e.poll()).Before(at) {
		time.Sleep(e.poll())
		sent := time.Now()
		if _, err := l.Observe(e.ctx); err != nil && !errors.Is(err, lease.ErrNoRecord) {
			e.t.Fatalf("%s: Observe while watching: %v", identity(l), err)
		}
		if time.Since(prev) > l.Options().RenewInterval {
			unbroken = false
		}
		prev = sent
	}
	sleepUntil(at)
	return unbroken, prev
}

// sleepUntil sleeps until the instant at (fake or real, as the clock is).
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

func identity(l lease.Lease) string { return l.Options().Identity }

func (e *env) open(id string) lease.Lease {
	e.t.Helper()
	l, err := e.h.Open(e.ctx, e.name, lease.Options{Identity: id, TTL: e.ttl})
	if err != nil {
		e.t.Fatalf("Open(%q) for %s: %v, want a lease", e.name, id, err)
	}
	return l
}

// acquire has l acquire the lease, which must succeed, and checks the term.
func (e *env) acquire(l lease.Lease) lease.Term {
	e.t.Helper()
	term, err := Acquire(e.t, e.ctx, l)
	if err != nil {
		e.t.Fatalf("%s: Acquire: %v, want a term", identity(l), err)
	}
	e.checkTerm(identity(l), "Acquire", term)
	return term
}

// renew has l renew t, which must succeed, and checks the new term.
func (e *env) renew(l lease.Lease, t lease.Term) lease.Term {
	e.t.Helper()
	nt, err := l.Renew(e.ctx, t)
	if err != nil {
		e.t.Fatalf("%s: Renew of token %d: %v, want a term", identity(l), t.Token, err)
	}
	e.checkTerm(identity(l), "Renew", nt)
	if nt.Token != t.Token {
		e.t.Errorf("%s: Renew of token %d returned token %d, want the same token", identity(l), t.Token, nt.Token)
	}
	if nt.Sent.Before(t.Sent) {
		e.t.Errorf("%s: Renew returned Sent %v, before the renewed term's Sent %v", identity(l), nt.Sent, t.Sent)
	}
	return nt
}

func (e *env) checkTerm(id, op string, t lease.Term) {
	e.t.Helper()
	if t.Holder != id || t.Token < 1 || t.TTL != e.ttl || t.Sent.IsZero() || t.Version == "" {
		e.t.Errorf("%s: %s returned term {Holder %q, Token %d, TTL %v, Sent %v, Version %q}, want Holder %q, Token >= 1, TTL %v, Sent and Version set",
			id, op, t.Holder, t.Token, t.TTL, t.Sent, t.Version, id, e.ttl)
	}
	if !t.Expires().Equal(t.Sent.Add(t.TTL)) {
		e.t.Errorf("%s: %s returned a term that expires at %v, want Sent+TTL %v", id, op, t.Expires(), t.Sent.Add(t.TTL))
	}
}

// release has l release t, which must succeed.
func (e *env) release(l lease.Lease, t lease.Term) {
	e.t.Helper()
	if err := l.Release(e.ctx, t); err != nil {
		e.t.Fatalf("%s: Release of token %d: %v, want nil", identity(l), t.Token, err)
	}
}

// observe reads the record through l, which must succeed.
func (e *env) observe(l lease.Lease) lease.Record {
	e.t.Helper()
	r, err := l.Observe(e.ctx)
	if err != nil {
		e.t.Fatalf("%s: Observe: %v, want the record", identity(l), err)
	}
	return r
}

// wantRecord checks that r names holder with token, released or not.
func (e *env) wantRecord(what string, r lease.Record, holder string, token uint64, released bool) {
	e.t.Helper()
	if r.Holder != holder || r.Token != token || r.Released != released || r.Held() == released || r.TTL != e.ttl {
		e.t.Errorf("%s: record {Holder %q, Token %d, Released %t, Held %t, TTL %v}, want {Holder %q, Token %d, Released %t, TTL %v}",
			what, r.Holder, r.Token, r.Released, r.Held(), r.TTL, holder, token, released, e.ttl)
	}
}

// wantHeld checks that err reports the lease held by holder with token.
func (e *env) wantHeld(what string, err error, holder string, token uint64) {
	e.t.Helper()
	if !errors.Is(err, lease.ErrHeld) {
		e.t.Fatalf("%s: got %v, want an error matching lease.ErrHeld", what, err)
	}
	var he *lease.HeldError
	if !errors.As(err, &he) {
		e.t.Fatalf("%s: %v (%T) matches lease.ErrHeld, but errors.As finds no *lease.HeldError in it", what, err, err)
	}
	if he.Record.Holder != holder || he.Record.Token != token {
		e.t.Errorf("%s: HeldError names %q with token %d, want %q with token %d", what, he.Record.Holder, he.Record.Token, holder, token)
	}
	if he.Wait <= 0 || he.Wait > e.ttl {
		e.t.Errorf("%s: HeldError.Wait is %v, want more than 0 and at most the TTL (%v)", what, he.Wait, e.ttl)
	}
}

// wantErr checks that err matches target.
func (e *env) wantErr(what string, err, target error) {
	e.t.Helper()
	if !errors.Is(err, target) {
		e.t.Errorf("%s: got %v, want an error matching %v", what, err, target)
	}
}

// takeOver has l poll Acquire every poll interval, from firstLook (its first
// look at the record; zero for now), until it wins the lease from a holder
// whose last successful write was the term last. Every refusal must be
// ErrHeld. The win must come no earlier than half a TTL after last was sent
// (any backend) and a full TTL after firstLook (CAS stores: expiry counts
// from the contender's first sight), and no later than a TTL and a margin
// after firstLook, or after the last gap between two of its reads longer
// than the renew interval: rule 2 starts its count again there, and a
// store that load slows makes such gaps, which only delay the takeover.
func (e *env) takeOver(l lease.Lease, last lease.Term, firstLook time.Time) lease.Term {
	e.t.Helper()
	id := identity(l)
	if firstLook.IsZero() {
		firstLook = time.Now()
	}
	deadline := firstLook.Add(e.ttl + e.margin())
	prev := firstLook // when the previous read was sent
	for {
		sent := time.Now()
		term, err := l.Acquire(e.ctx)
		now := time.Now()
		if now.Sub(prev) > l.Options().RenewInterval {
			deadline = later(deadline, sent.Add(e.ttl+e.margin()))
		}
		prev = sent
		if err == nil {
			e.checkTerm(id, "Acquire", term)
			if early := last.Sent.Add(e.ttl / 2); now.Before(early) {
				e.t.Errorf("%s took the lease over %v after %s's last write was sent, want at least half the TTL (%v)", id, now.Sub(last.Sent), last.Holder, e.ttl/2)
			}
			if e.judge == lease.JudgedByContender && now.Before(firstLook.Add(e.ttl)) {
				e.t.Errorf("%s took the lease over %v after its first look at the record, want at least the TTL (%v): expiry must count from the contender's first sight", id, now.Sub(firstLook), e.ttl)
			}
			if term.Token <= last.Token {
				e.t.Errorf("%s took the lease over with token %d, want more than the deposed holder's %d", id, term.Token, last.Token)
			}
			return term
		}
		if !errors.Is(err, lease.ErrHeld) {
			e.t.Fatalf("%s: Acquire while %s's term lapses: %v, want an error matching lease.ErrHeld until it wins", id, last.Holder, err)
		}
		if now.After(deadline) {
			e.t.Fatalf("%s: still refused %v after its first look at a record nobody renews (%v); want a takeover within the TTL (%v) and a margin (%v) of its first look or of its last read after a gap longer than the renew interval", id, now.Sub(firstLook), err, e.ttl, e.margin())
		}
		time.Sleep(e.poll())
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func testAcquireFree(e *env) {
	a := e.open("contender-a")
	if o := a.Options(); o.Identity != "contender-a" || o.TTL != e.ttl || o.CallTimeout <= 0 || o.CallTimeout >= e.ttl {
		e.t.Errorf("Options() = {Identity %q, TTL %v, CallTimeout %v}, want Identity %q, TTL %v, CallTimeout in (0, TTL)", o.Identity, o.TTL, o.CallTimeout, "contender-a", e.ttl)
	}
	_, err := a.Observe(e.ctx)
	e.wantErr("Observe of a lease never acquired", err, lease.ErrNoRecord)

	before := time.Now()
	term := e.acquire(a)
	after := time.Now()
	if term.Sent.Before(before) || term.Sent.After(after) {
		e.t.Errorf("Acquire returned Sent %v, want between the call (%v) and its return (%v)", term.Sent, before, after)
	}
	e.wantRecord("Observe after Acquire", e.observe(a), "contender-a", term.Token, false)
}

func testSecondContenderRefused(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	_, err := b.Acquire(e.ctx)
	e.wantHeld("b's Acquire of the lease a holds", err, "contender-a", ta.Token)
	e.wantRecord("b's Observe", e.observe(b), "contender-a", ta.Token, false)
	e.renew(a, ta)
}

func testSameIdentityRefused(e *env) {
	// Two processes configured with one identity: the second must wait for
	// the first's term to lapse like anyone else.
	a1, a2 := e.open("contender-a"), e.open("contender-a")
	ta := e.acquire(a1)
	_, err := a2.Acquire(e.ctx)
	e.wantHeld("Acquire by a second Lease of the same identity", err, "contender-a", ta.Token)
	e.renew(a1, ta)
}

func testOwnTermRefused(e *env) {
	// A term this Lease's Acquire returned is someone's (two Runners on one
	// Lease, a scheduled run that overlaps the previous one): a second
	// Acquire on the same Lease is refused like anyone else's, naming the
	// holder, and the first term goes on.
	a := e.open("contender-a")
	t1 := e.acquire(a)
	_, err := a.Acquire(e.ctx)
	e.wantHeld("second Acquire on the holder's own Lease", err, "contender-a", t1.Token)
	e.renew(a, t1)
}

func testRenew(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	prev := ta
	// Six renewals a quarter TTL apart: 1.5 TTLs in all.
	for i := 1; i <= 6; i++ {
		time.Sleep(e.ttl / 4)
		nt := e.renew(a, prev)
		if !nt.Sent.After(prev.Sent) {
			e.t.Errorf("renewal %d: Sent %v, want later than the previous term's %v", i, nt.Sent, prev.Sent)
		}
		e.wantRecord(fmt.Sprintf("Observe after renewal %d", i), e.observe(a), "contender-a", ta.Token, false)
		prev = nt
	}
	_, err := b.Acquire(e.ctx)
	e.wantHeld("b's Acquire after 1.5 TTLs of renewals", err, "contender-a", ta.Token)
}

func testEveryWriteChangesVersion(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	versions := map[string]string{} // version -> the write that made it
	note := func(write string, t lease.Term) {
		e.t.Helper()
		if earlier, dup := versions[t.Version]; dup {
			e.t.Errorf("%s made version %q, which %s had already made; every write must change the version", write, t.Version, earlier)
		}
		versions[t.Version] = write
		if r := e.observe(b); r.Version != t.Version {
			e.t.Errorf("Observe after %s: version %q, want the term's %q", write, r.Version, t.Version)
		}
	}
	t := e.acquire(a)
	note("a's Acquire", t)
	for i := 1; i <= 4; i++ {
		t = e.renew(a, t)
		note(fmt.Sprintf("a's renewal %d", i), t)
	}
	e.release(a, t)
	r := e.observe(b)
	if earlier, dup := versions[r.Version]; dup {
		e.t.Errorf("a's Release made version %q, which %s had already made; every write must change the version", r.Version, earlier)
	}
	versions[r.Version] = "a's Release"
	note("b's Acquire", e.acquire(b))
}

func testRenewAfterDeposedIsLost(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	// a stops renewing; b waits for the term to lapse and takes over.
	tb := e.takeOver(b, ta, time.Time{})
	_, err := a.Renew(e.ctx, ta)
	e.wantErr("the deposed holder's Renew", err, lease.ErrLost)
	err = a.Release(e.ctx, ta)
	e.wantErr("the deposed holder's Release", err, lease.ErrLost)
	e.wantRecord("Observe after the deposed holder's Renew and Release", e.observe(a), "contender-b", tb.Token, false)
	e.renew(b, tb)
}

func testReleaseThenAcquire(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	e.release(a, ta)
	e.wantRecord("Observe after Release", e.observe(b), "contender-a", ta.Token, true)
	if err := a.Release(e.ctx, ta); err != nil {
		e.t.Errorf("second Release of a released term: %v, want nil", err)
	}
	// No waiting: a released lease is free.
	tb, err := b.Acquire(e.ctx)
	if err != nil {
		e.t.Fatalf("b's first Acquire of a released lease: %v, want a term at once", err)
	}
	e.checkTerm("contender-b", "Acquire", tb)
	if tb.Token <= ta.Token {
		e.t.Errorf("b's Acquire after a's Release: token %d, want more than a's %d", tb.Token, ta.Token)
	}
	_, err = a.Renew(e.ctx, ta)
	e.wantErr("Renew of a released term", err, lease.ErrLost)
	err = a.Release(e.ctx, ta)
	e.wantErr("Release of a released term after b acquired the lease", err, lease.ErrLost)
	e.wantRecord("Observe after b's Acquire", e.observe(a), "contender-b", tb.Token, false)
	e.renew(b, tb)
}

func testTakeoverOnlyAfterTTL(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	tb := e.takeOver(b, ta, time.Time{})
	e.wantRecord("Observe after the takeover", e.observe(a), "contender-b", tb.Token, false)
}

func testExpiryCountsFromFirstSight(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	written := time.Now()
	// b has not looked yet when the record is 0.8 TTL old.
	sleepUntil(written.Add(e.ttl * 8 / 10))
	firstLook := time.Now()
	_, err := b.Acquire(e.ctx)
	e.wantHeld("b's first look, 0.8 TTL after a's write", err, "contender-a", ta.Token)
	// At 1.2 TTL after the write, b has seen the record for only 0.4 TTL:
	// a clock-free contender cannot know that a's term has lapsed.
	e.watchUntil(b, written.Add(e.ttl*12/10))
	_, err = b.Acquire(e.ctx)
	e.wantHeld("b's Acquire 1.2 TTL after a's write but 0.4 TTL after its first look (expiry must count from first sight, not from the write)", err, "contender-a", ta.Token)
	// After watching a full TTL it wins.
	e.takeOver(b, ta, firstLook)
}

// testGapRestartsCount: a contender counts a version unchanged only over
// reads that follow each other within the holder's renew interval (rule
// 2): a longer gap, in which the holder could have written and a restore
// hidden it, starts the count again; reads closer together keep it.
func testGapRestartsCount(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)
	sent := time.Now()
	rec := e.observe(b)
	if rec.RenewInterval != a.Options().RenewInterval {
		e.t.Fatalf("record's RenewInterval = %v, want the holder's Options.RenewInterval (%v)", rec.RenewInterval, a.Options().RenewInterval)
	}
	unbroken, last := e.watch(b, time.Now().Add(e.ttl/2), sent)
	_, err := b.Acquire(e.ctx)
	// Acquire's own read counts too: one that returned more than the
	// renew interval after the watch's last was sent breaks the run.
	unbroken = unbroken && time.Since(last) <= rec.RenewInterval
	e.wantHeld("b's Acquire after watching half a TTL", err, "contender-a", ta.Token)
	var held *lease.HeldError
	switch errors.As(err, &held); {
	case held.Wait > e.ttl*6/10 && unbroken:
		e.t.Errorf("Wait after watching half a TTL = %v, want at most 0.6 TTL: reads within the renew interval count", held.Wait)
	case held.Wait > e.ttl*6/10:
		e.t.Logf("Wait after watching half a TTL = %v: the store answered a read late, which restarts the count", held.Wait)
	}
	time.Sleep(rec.RenewInterval + e.poll()) // a gap longer than the holder's renew interval
	_, err = b.Acquire(e.ctx)
	e.wantHeld("b's Acquire after a gap longer than the renew interval", err, "contender-a", ta.Token)
	if errors.As(err, &held); held.Wait < e.ttl-e.poll() {
		e.t.Errorf("Wait after a gap of %v = %v, want the count started again (about the TTL, %v)", rec.RenewInterval+e.poll(), held.Wait, e.ttl)
	}
}

func testKeepsRenewingNeverDeposed(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	ta := e.acquire(a)

	// b polls every TTL/8 until a stops.
	type polls struct {
		n    int
		won  []lease.Term
		errs []error
	}
	var got polls
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(e.ttl / 8):
			}
			got.n++
			term, err := b.Acquire(e.ctx)
			switch {
			case err == nil:
				got.won = append(got.won, term)
			case !errors.Is(err, lease.ErrHeld):
				got.errs = append(got.errs, err)
			}
		}
	})

	// a renews every TTL/4 for three TTLs.
	t := ta
	for i := 1; i <= 12; i++ {
		time.Sleep(e.ttl / 4)
		nt, err := a.Renew(e.ctx, t)
		if err != nil {
			e.t.Errorf("a's renewal %d of 12 while b polls: %v, want success", i, err)
			continue
		}
		t = nt
	}
	close(stop)
	wg.Wait()

	if got.n == 0 {
		e.t.Errorf("b never polled")
	}
	for _, w := range got.won {
		e.t.Errorf("b took the lease (token %d) from a holder that renewed every TTL/4", w.Token)
	}
	for _, err := range got.errs {
		e.t.Errorf("b's Acquire while a renews: %v, want an error matching lease.ErrHeld", err)
	}
	e.wantRecord("Observe after three TTLs of renewals", e.observe(b), "contender-a", ta.Token, false)
}

func testRaceExactlyOneWins(e *env) {
	const n = 8
	ls := make([]lease.Lease, n)
	for i := range ls {
		ls[i] = e.open(fmt.Sprintf("contender-%d", i))
	}

	// race has every contender in who call Acquire at once, and returns the
	// one winner and its term.
	race := func(round string, who []int) (int, lease.Term) {
		e.t.Helper()
		terms := make([]lease.Term, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for _, i := range who {
			wg.Go(func() {
				<-start
				terms[i], errs[i] = ls[i].Acquire(e.ctx)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		var report []string
		for _, i := range who {
			if errs[i] == nil {
				report = append(report, fmt.Sprintf("contender-%d won token %d", i, terms[i].Token))
				winner = i
			} else {
				report = append(report, fmt.Sprintf("contender-%d: %v", i, errs[i]))
			}
		}
		wins := 0
		for _, i := range who {
			if errs[i] == nil {
				wins++
			} else if !errors.Is(errs[i], lease.ErrHeld) {
				e.t.Errorf("%s: contender-%d's Acquire: %v, want success or an error matching lease.ErrHeld", round, i, errs[i])
			}
		}
		if wins != 1 {
			e.t.Fatalf("%s: %d of %d contenders won, want exactly 1:\n%s", round, wins, len(who), strings.Join(report, "\n"))
		}
		e.checkTerm(identity(ls[winner]), "Acquire", terms[winner])
		return winner, terms[winner]
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}

	w1, t1 := race("round 1 (free lease)", all)
	e.release(ls[w1], t1)
	w2, t2 := race("round 2 (released lease)", all)
	if t2.Token <= t1.Token {
		e.t.Errorf("round 2's token %d, want more than round 1's %d", t2.Token, t1.Token)
	}

	// Round 3: w2 stops renewing. The others poll until one takes over; the
	// new holder renews, and the rest keep polling for another TTL and a
	// margin, so that a second takeover would show.
	start := time.Now()
	end := start.Add(2*e.ttl + e.margin())
	type outcome struct {
		won   []lease.Term
		wonAt []time.Time
		errs  []error
	}
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range ls {
		if i == w2 {
			continue
		}
		wg.Go(func() {
			out := &outs[i]
			for time.Now().Before(end) {
				if len(out.won) == 0 {
					term, err := ls[i].Acquire(e.ctx)
					switch {
					case err == nil:
						out.won, out.wonAt = append(out.won, term), append(out.wonAt, time.Now())
					case !errors.Is(err, lease.ErrHeld):
						out.errs = append(out.errs, fmt.Errorf("Acquire: %w", err))
					}
					time.Sleep(min(e.poll(), time.Until(end)))
					continue
				}
				time.Sleep(min(e.ttl/4, time.Until(end)))
				cur := out.won[len(out.won)-1]
				nt, err := ls[i].Renew(e.ctx, cur)
				if err != nil {
					out.errs = append(out.errs, fmt.Errorf("Renew of token %d: %w", cur.Token, err))
					return
				}
				out.won[len(out.won)-1] = nt
			}
		})
	}
	wg.Wait()
	wins := 0
	for i, out := range outs {
		for _, err := range out.errs {
			e.t.Errorf("round 3: contender-%d: %v, want only refusals matching lease.ErrHeld, or renewals that succeed", i, err)
		}
		for j, term := range out.won {
			wins++
			at := out.wonAt[j]
			e.t.Logf("round 3: contender-%d took over with token %d, %v after the polls began", i, term.Token, at.Sub(start))
			if term.Token <= t2.Token {
				e.t.Errorf("round 3: contender-%d took over with token %d, want more than round 2's %d", i, term.Token, t2.Token)
			}
			if at.Before(t2.Sent.Add(e.ttl / 2)) {
				e.t.Errorf("round 3: contender-%d took over %v after the holder's last write was sent, want at least half the TTL (%v)", i, at.Sub(t2.Sent), e.ttl/2)
			}
			// The losers of round 2 may have seen the winner's record before
			// the polls began, but not before it was sent.
			if e.judge == lease.JudgedByContender && at.Before(t2.Sent.Add(e.ttl)) {
				e.t.Errorf("round 3: contender-%d took over %v after the holder's last write was sent, want at least the TTL (%v)", i, at.Sub(t2.Sent), e.ttl)
			}
			if at.After(start.Add(e.ttl + e.margin())) {
				e.t.Errorf("round 3: contender-%d took over %v after the polls began, want within the TTL (%v) and a margin (%v)", i, at.Sub(start), e.ttl, e.margin())
			}
		}
	}
	if wins != 1 {
		e.t.Errorf("round 3: %d takeovers of the lapsed lease, want exactly 1", wins)
	}
}

func testTokensStrictlyIncrease(e *env) {
	c := []lease.Lease{e.open("contender-0"), e.open("contender-1"), e.open("contender-2")}
	var tokens []uint64
	note := func(how string, t lease.Term) {
		e.t.Helper()
		if last := len(tokens) - 1; last >= 0 && t.Token <= tokens[last] {
			e.t.Errorf("%s: token %d, want more than every earlier token %v", how, t.Token, tokens)
		}
		tokens = append(tokens, t.Token)
	}
	for cycle := range 2 {
		x, y, z := c[cycle%3], c[(cycle+1)%3], c[(cycle+2)%3]
		t := e.acquire(x)
		note(fmt.Sprintf("cycle %d: %s's Acquire", cycle+1, identity(x)), t)
		e.release(x, t)
		t = e.acquire(y)
		note(fmt.Sprintf("cycle %d: %s's Acquire after %s's Release", cycle+1, identity(y), identity(x)), t)
		// y stops renewing; z takes over when its term lapses.
		t = e.takeOver(z, t, time.Time{})
		note(fmt.Sprintf("cycle %d: %s's takeover from %s", cycle+1, identity(z), identity(y)), t)
		e.release(z, t)
	}
	note("last: contender-0's Acquire", e.acquire(c[0]))
	e.t.Logf("tokens: %v", tokens)
}

func testCancelledContext(e *env) {
	cancelled, cancel := context.WithCancel(e.ctx)
	cancel()
	wantCanceled := func(what string, err error) {
		e.t.Helper()
		if !errors.Is(err, context.Canceled) {
			e.t.Errorf("%s with a cancelled context: %v, want an error matching context.Canceled", what, err)
		}
	}
	a, b := e.open("contender-a"), e.open("contender-b")

	_, err := a.Acquire(cancelled)
	wantCanceled("Acquire of a free lease", err)
	_, err = a.Observe(cancelled)
	wantCanceled("Observe", err)
	_, err = a.Observe(e.ctx)
	e.wantErr("Observe after an Acquire with a cancelled context", err, lease.ErrNoRecord)

	ta := e.acquire(a)
	_, err = a.Renew(cancelled, ta)
	wantCanceled("Renew", err)
	err = a.Release(cancelled, ta)
	wantCanceled("Release", err)
	_, err = b.Acquire(cancelled)
	wantCanceled("Acquire of a held lease", err)
	e.wantRecord("Observe after the cancelled calls", e.observe(b), "contender-a", ta.Token, false)
	e.renew(a, ta)
}

func testGarbageRecord(e *env) {
	if err := e.h.WriteForeign(e.ctx, e.name); err != nil {
		e.t.Fatalf("WriteForeign(%q): %v", e.name, err)
	}
	a, b := e.open("contender-a"), e.open("contender-b")
	wantCorrupt := func(what string, err error) {
		e.t.Helper()
		if !errors.Is(err, lease.ErrCorrupt) {
			e.t.Fatalf("%s of a foreign object: %v, want an error matching lease.ErrCorrupt", what, err)
		}
		if lease.Retryable(err) {
			e.t.Errorf("%s of a foreign object: lease.Retryable(%v) is true, want false: it needs a person", what, err)
		}
	}
	_, err := a.Acquire(e.ctx)
	wantCorrupt("Acquire", err)
	_, err = a.Observe(e.ctx)
	wantCorrupt("Observe", err)
	// b watches the object for a TTL and a margin: it must never take it.
	start := time.Now()
	for time.Since(start) <= e.ttl+e.margin() {
		time.Sleep(e.ttl / 4)
		_, err := b.Acquire(e.ctx)
		wantCorrupt(fmt.Sprintf("Acquire %v after the first look", time.Since(start)), err)
	}
	_, err = a.Observe(e.ctx)
	wantCorrupt("Observe after a TTL and a margin", err)
}

// testRecordDeleted deletes the record twice, once under a live holder and
// once after a release, and checks that the holder's term ends at its next
// renewal, that a contender that saw the live record waits it out before
// creating it again (on stores where contenders judge expiry), and that
// every token written afterwards by a contender that had seen the highest
// token so far is greater than it.
func testRecordDeleted(e *env) {
	d, ok := e.h.(Deleter)
	if !ok {
		e.t.Fatal("leasetest: the harness does not implement leasetest.Deleter: RecordDeleted (safety rule 10) needs it to delete a record")
	}
	del := func(when string) {
		e.t.Helper()
		if err := d.Delete(e.ctx, e.name); err != nil {
			e.t.Fatalf("Delete(%q) %s: %v", e.name, when, err)
		}
		_, err := e.open("observer").Observe(e.ctx)
		e.wantErr("Observe after Delete "+when, err, lease.ErrNoRecord)
	}
	a, b, c := e.open("contender-a"), e.open("contender-b"), e.open("contender-c")
	e.release(a, e.acquire(a))
	tb := e.acquire(b)
	for _, l := range []lease.Lease{a, c} { // every contender sees tb
		_, err := l.Acquire(e.ctx)
		e.wantHeld(identity(l)+"'s Acquire while b holds the lease", err, "contender-b", tb.Token)
	}

	del("under b's live term")
	_, err := b.Renew(e.ctx, tb)
	e.wantErr("b's Renew after its record was deleted", err, lease.ErrLost)
	tc := e.acquireDeleted(c, "b's", tb.Token, true)
	_, err = a.Acquire(e.ctx)
	e.wantHeld("a's Acquire while c holds the recreated lease", err, "contender-c", tc.Token)
	e.release(c, tc)
	e.wantRecord("b's Observe after c's Release", e.observe(b), "contender-c", tc.Token, true)

	del("after c's Release")
	tb2 := e.acquireDeleted(b, "c's", tc.Token, false)
	_, err = a.Acquire(e.ctx)
	e.wantHeld("a's Acquire after b's", err, "contender-b", tb2.Token)
	e.renew(b, tb2)
	e.t.Logf("tokens: %d before the deletes, %d after the first, %d after the second", tb.Token, tc.Token, tb2.Token)
}

// acquireDeleted has l acquire a lease whose record was deleted, with a
// token greater than seen, the highest token l had seen (whose's). If the
// last record l saw was held (held) and l judges expiry itself, the holder
// may still act: l must wait until it has seen no record for that
// record's TTL (refused with lease.ErrHeld), and win within a margin
// after. Otherwise it must succeed at once.
func (e *env) acquireDeleted(l lease.Lease, whose string, seen uint64, held bool) lease.Term {
	e.t.Helper()
	wait := held && e.judge == lease.JudgedByContender
	first := time.Now()
	for {
		t, err := l.Acquire(e.ctx)
		waited := time.Since(first)
		switch {
		case err == nil && wait && waited < e.ttl:
			e.t.Errorf("%s: created the deleted record again %v after first finding it gone, want a TTL (%v): its holder may still act", identity(l), waited, e.ttl)
		case err == nil:
			e.checkTerm(identity(l), "Acquire", t)
			if t.Token <= seen {
				e.t.Errorf("%s: Acquire after the delete: token %d, want more than %d, the highest it had seen (%s)", identity(l), t.Token, seen, whose)
			}
			return t
		case !wait:
			e.t.Fatalf("%s: Acquire of the deleted lease: %v, want a term at once", identity(l), err)
		case !errors.Is(err, lease.ErrHeld):
			e.t.Fatalf("%s: Acquire of a lease whose held record vanished: %v, want lease.ErrHeld until it has been gone a TTL", identity(l), err)
		case waited > e.ttl+e.margin():
			e.t.Fatalf("%s: still refused %v after the record vanished: %v", identity(l), waited, err)
		}
		time.Sleep(e.poll())
	}
}

// testBreak: an operator breaks a held lease (lease.Breaker): the holder's
// next renewal is lost, the next contender acquires at once with a greater
// token and a term that shows the record it took over was broken
// (lease.AnnotationBroken), which its renewal no longer writes, a break of
// a record read before that acquisition leaves the new holder alone, and
// breaking a released lease changes nothing.
func testBreak(e *env) {
	a, next, op := e.open("contender-a"), e.open("contender-next"), e.open("operator")
	b, ok := op.(lease.Breaker)
	if !ok {
		e.t.Fatalf("the lease (%T) does not implement lease.Breaker", op)
	}
	ta := e.acquire(a)
	seen := e.observe(op)
	broken, err := b.Break(e.ctx, seen)
	if err != nil {
		e.t.Fatalf("Break of %s's lease (token %d): %v, want nil", ta.Holder, ta.Token, err)
	}
	e.wantRecord("the record Break returned", broken, "contender-a", ta.Token, true)
	e.wantRecord("the record after Break", e.observe(next), "contender-a", ta.Token, true)
	_, err = a.Renew(e.ctx, ta)
	e.wantErr("the broken holder's Renew", err, lease.ErrLost)

	tn := e.acquire(next) // at once: no TTL to wait
	if tn.Token <= ta.Token {
		e.t.Errorf("the next holder's token is %d, want more than the broken term's %d", tn.Token, ta.Token)
	}
	if got := tn.Annotations.Get(lease.AnnotationBroken); got != "1" {
		e.t.Errorf("the term that took over a broken record: %s is %q, want \"1\"", lease.AnnotationBroken, got)
	}
	_, err = b.Break(e.ctx, seen)
	e.wantHeld("Break of a record read before the lease changed hands", err, "contender-next", tn.Token)
	tn = e.renew(next, tn)
	if got := e.observe(op).Annotations.Get(lease.AnnotationBroken); got != "" {
		e.t.Errorf("the record after the new holder's renewal: %s is %q, want it gone", lease.AnnotationBroken, got)
	}

	e.release(next, tn)
	released := e.observe(op)
	if got, err := b.Break(e.ctx, released); err != nil || got != released {
		e.t.Errorf("Break of a released lease: %+v, %v; want the record unchanged and nil", got, err)
	}
	tm := e.acquire(a)
	if tm.Token != tn.Token+1 {
		e.t.Errorf("after breaking a released lease the next token is %d, want %d", tm.Token, tn.Token+1)
	}
	if got := tm.Annotations.Get(lease.AnnotationBroken); got != "" {
		e.t.Errorf("the term that took over a released record: %s is %q, want none", lease.AnnotationBroken, got)
	}
}

// wantAnnotations checks a record's or term's annotations.
func (e *env) wantAnnotations(what string, got, want lease.Annotations) {
	e.t.Helper()
	if got != want {
		e.t.Errorf("%s: Annotations %q; want %q", what, got, want)
	}
}

// testAnnotations: a holder changes the record's annotations by renewing a
// term it annotated, and releasing one; every later write (a renewal, a
// release, another contender's acquisition, a takeover) carries them over,
// but an acquisition not lease.AnnotationHold (driver.CarriedOver), and the
// record reads them back. Annotations that cannot be stored are
// refused before anything is written.
func testAnnotations(e *env) {
	const p1, p2 = "2026-11-23T10:00:00Z", "2026-11-23T11:00:00+01:00"
	a, b, c := e.open("contender-a"), e.open("contender-b"), e.open("contender-c")
	ta := e.acquire(a)
	e.wantAnnotations("a's first term", ta.Annotations, lease.Annotations{})

	for _, bad := range []lease.Term{
		ta.Annotate("period", p1),
		ta.Annotate("leasetest/state", "tab\there"),
		ta.Annotate("leasetest/big", strings.Repeat("x", lease.MaxAnnotationsSize)),
	} {
		_, err := a.Renew(e.ctx, bad)
		e.wantErr(fmt.Sprintf("Renew of a term annotated %q", bad.Annotations), err, lease.ErrInvalid)
	}

	ta = ta.Annotate(lease.AnnotationPeriod, p1).Annotate("leasetest/owner", "a <&> \"ü\"")
	want := ta.Annotations
	ta = e.renew(a, ta)
	e.wantAnnotations("a's term after the renewal that annotates it", ta.Annotations, want)
	e.wantAnnotations("the record after a's renewal", e.observe(b).Annotations, want)
	ta = e.renew(a, ta)
	e.wantAnnotations("the record after a's next renewal", e.observe(b).Annotations, want)
	ta = ta.Annotate(lease.AnnotationPeriodDone, "1").Annotate("leasetest/owner", "")
	want = ta.Annotations
	e.release(a, ta)
	r := e.observe(b)
	e.wantRecord("Observe after a's Release", r, "contender-a", ta.Token, true)
	e.wantAnnotations("the record after a's Release", r.Annotations, want)

	tb := e.acquire(b)
	e.wantAnnotations("b's term, acquired after a's Release", tb.Annotations, want)
	e.wantAnnotations("the record after b's Acquire", e.observe(c).Annotations, want)
	tb = tb.Annotate(lease.AnnotationPeriod, p2).Annotate(lease.AnnotationPeriodDone, "").Annotate(lease.AnnotationHold, "1")
	want = tb.Annotations
	tb = e.renew(b, tb)
	// c's count of b's record starts with this read, not when it returns:
	// a quorum's Observe returns with its slowest member, whose own counts
	// began with their reads.
	firstLook := time.Now()
	r = e.observe(c)
	e.wantRecord("Observe after b's renewal", r, "contender-b", tb.Token, false)
	e.wantAnnotations("the record after b's renewal", r.Annotations, want)

	// b stops renewing, as if it died during a minimum hold: c's takeover
	// keeps b's annotations but the hold, which is its writer's alone.
	want = want.With(lease.AnnotationHold, "")
	tc := e.takeOver(c, tb, firstLook)
	e.wantAnnotations("c's term, taken over from b", tc.Annotations, want)
	e.wantAnnotations("the record after c's takeover", e.observe(a).Annotations, want)
}

// testKeep: a holder that ends its term with lease.Keeper's Keep(d) keeps
// every other contender out for d on the contender's own clock, counted
// from its first sight of the kept record, and no longer than d and a
// margin.
func testKeep(e *env) {
	a, b := e.open("contender-a"), e.open("contender-b")
	k, ok := a.(lease.Keeper)
	if !ok {
		e.t.Fatalf("the lease (%T) judges expiry itself but does not implement lease.Keeper", a)
	}
	ta := e.acquire(a)
	if err := k.Keep(e.ctx, ta, 0); !errors.Is(err, lease.ErrInvalid) {
		e.t.Errorf("Keep for 0: %v, want an error matching lease.ErrInvalid", err)
	}
	d := e.ttl * 3 / 2
	if err := k.Keep(e.ctx, ta, d); err != nil {
		e.t.Fatalf("Keep for %v: %v, want nil", d, err)
	}
	firstLook := time.Now()
	r := e.observe(b)
	if r.Holder != "contender-a" || r.Token != ta.Token || !r.Held() || r.TTL != d {
		e.t.Errorf("the kept record: {Holder %q, Token %d, Held %t, TTL %v}, want {%q, %d, true, %v}", r.Holder, r.Token, r.Held(), r.TTL, "contender-a", ta.Token, d)
	}
	deadline := firstLook.Add(d + e.margin())
	prev := firstLook // when the previous read was sent
	for {
		sent := time.Now()
		tb, err := b.Acquire(e.ctx)
		now := time.Now()
		if now.Sub(prev) > b.Options().RenewInterval {
			deadline = later(deadline, sent.Add(d+e.margin())) // a gap restarts the count
		}
		prev = sent
		if err == nil {
			if now.Before(firstLook.Add(d)) {
				e.t.Errorf("b took a lease kept for %v over %v after its first look", d, now.Sub(firstLook))
			}
			if tb.Token <= ta.Token {
				e.t.Errorf("b's token %d after the kept term's %d, want more", tb.Token, ta.Token)
			}
			return
		}
		if !errors.Is(err, lease.ErrHeld) {
			e.t.Fatalf("b's Acquire of the kept lease: %v, want lease.ErrHeld until it wins", err)
		}
		if now.After(deadline) {
			e.t.Fatalf("b still refused %v after its first look at a lease kept for %v (counted again from its last read after a gap longer than the renew interval)", now.Sub(firstLook), d)
		}
		time.Sleep(e.poll())
	}
}

// testReleaseTo: a holder that hands the lease to a named contender
// (lease.Handoffer's ReleaseTo) lets that contender take it over at once,
// with a greater token and without the mark, while every other contender
// sees the record held and takes it over only after its TTL (from its own
// first sight, where contenders judge expiry), as after a crash: a
// successor that never comes. The term
// handed off is over: Renew returns ErrLost, Release nil without writing.
func testReleaseTo(e *env) {
	a, b, c := e.open("contender-a"), e.open("contender-b"), e.open("contender-c")
	h, ok := a.(lease.Handoffer)
	if !ok {
		e.t.Fatalf("the lease (%T) does not implement lease.Handoffer", a)
	}
	ta := e.acquire(a)
	ta = e.renew(a, ta.Annotate("test/kept", "1"))
	before := e.observe(c)
	for _, bad := range []string{"", "contender-a", "tab\tin-it"} {
		if err := h.ReleaseTo(e.ctx, ta, bad); !errors.Is(err, lease.ErrInvalid) {
			e.t.Errorf("ReleaseTo %q: %v, want an error matching lease.ErrInvalid", bad, err)
		}
	}
	if r := e.observe(c); r.Version != before.Version {
		e.t.Errorf("refused ReleaseTo calls changed the record: version %q, want %q", r.Version, before.Version)
	}
	if err := h.ReleaseTo(e.ctx, ta, "contender-b"); err != nil {
		e.t.Fatalf("ReleaseTo contender-b: %v, want nil", err)
	}
	r := e.observe(c)
	e.wantRecord("Observe after ReleaseTo", r, "contender-a", ta.Token, false)
	if r.Successor() != "contender-b" || r.Annotations.Get("test/kept") != "1" {
		e.t.Errorf("the handed record: Successor %q, annotation test/kept %q, want %q and %q", r.Successor(), r.Annotations.Get("test/kept"), "contender-b", "1")
	}
	_, err := c.Acquire(e.ctx)
	e.wantHeld("c's Acquire of a lease handed to b", err, "contender-a", ta.Token)
	if err := h.ReleaseTo(e.ctx, ta, "contender-b"); err != nil {
		e.t.Errorf("the same ReleaseTo again: %v, want nil", err)
	}
	if err := h.ReleaseTo(e.ctx, ta, "contender-c"); !errors.Is(err, lease.ErrLost) {
		e.t.Errorf("ReleaseTo another contender after the handoff: %v, want an error matching lease.ErrLost", err)
	}
	_, err = a.Renew(e.ctx, ta)
	e.wantErr("Renew of a term handed off", err, lease.ErrLost)
	if err := a.Release(e.ctx, ta); err != nil {
		e.t.Errorf("Release of a term handed off: %v, want nil", err)
	}
	if r := e.observe(c); r.Successor() != "contender-b" {
		e.t.Errorf("after the holder's Release of its handed term, the record names successor %q, want %q still", r.Successor(), "contender-b")
	}
	tb, err := b.Acquire(e.ctx)
	if err != nil {
		e.t.Fatalf("b's Acquire of a lease handed to it: %v, want a term at once", err)
	}
	e.checkTerm("contender-b", "Acquire", tb)
	if tb.Token <= ta.Token || tb.Annotations.Get(lease.AnnotationSuccessor) != "" || tb.Annotations.Get("test/kept") != "1" {
		e.t.Errorf("b's term: token %d, annotations %q, want a token above %d, the holder's annotations carried over and no %s", tb.Token, tb.Annotations, ta.Token, lease.AnnotationSuccessor)
	}
	if r := e.observe(c); r.Holder != "contender-b" || r.Successor() != "" {
		e.t.Errorf("after b's Acquire: holder %q, successor %q, want %q and none", r.Holder, r.Successor(), "contender-b")
	}

	// A successor that never comes: the others take over after the TTL,
	// counted from their first sight of the handed record.
	tb = e.renew(b, tb)
	if err := b.(lease.Handoffer).ReleaseTo(e.ctx, tb, "contender-gone"); err != nil {
		e.t.Fatalf("ReleaseTo contender-gone: %v, want nil", err)
	}
	last := tb
	last.Sent = time.Now()
	e.takeOver(c, last, time.Time{})
}
