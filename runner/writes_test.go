package runner_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// lateAnswer is a holder's lease whose Acquire answers late: its write
// lands at once, but its answer comes after delay (lost, then read back
// slowly: up to two CallTimeouts). The first write that follows (the
// period mark) lands, and is then hidden by a restore of the acquisition's
// record, and every later call of the holder hangs.
type lateAnswer struct {
	lease.Lease
	store    *memlease.Store
	identity string
	delay    time.Duration
	acquired []byte
	wrote    atomic.Bool
}

func (l *lateAnswer) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	l.acquired, _ = l.store.Bytes("job")
	<-time.After(l.delay) // in the test's synctest bubble: fake time
	return t, err
}

func (l *lateAnswer) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	if !l.wrote.Swap(true) {
		l.store.Put("job", l.acquired)
		l.store.Hang(l.identity)
	}
	return nt, err
}

// TestLateAcquisitionAnswer: a term whose Acquire answered late is led,
// and written, only within the deadlines its acquisition set (finding D1
// of issue 34). Its period mark is a write of the term like any renewal:
// sent only before the acquisition's renew deadline, and counted from when
// it was due (the acquisition's sending plus RenewInterval) when sent
// later, so that a restore hiding it, and renewals that hang after it,
// cannot keep the holder leading past a follower's takeover a TTL after
// the acquisition. A task whose term's deadline passed before it could
// start is not started.
func TestLateAcquisitionAnswer(t *testing.T) {
	for _, tc := range []struct {
		name        string
		period      string
		callTimeout time.Duration
		answer      time.Duration
		want        runner.OnceOutcome // Unreachable: the period not written, the task not run
	}{
		{"the mark sent after the acquisition's deadline", tick1, 5 * time.Second, 9900 * time.Millisecond, runner.Unreachable},
		{"the mark sent late, before that deadline", tick1, 5 * time.Second, 7 * time.Second, runner.SteppedDown},
		{"no period: the task would start after the takeover", "", 8 * time.Second, 15500 * time.Millisecond, runner.SteppedDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				began := time.Now()
				store := memlease.NewStore()
				la, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl, CallTimeout: tc.callTimeout})
				if err != nil {
					t.Fatal(err)
				}
				j := newJournal()
				res := make(chan runner.Once, 1)
				go func() {
					res <- runPeriod(t, &lateAnswer{Lease: la, store: store, identity: "a", delay: tc.answer}, tc.period, runner.Config{}, j.task("a"))
				}()
				advance(100 * time.Millisecond) // b first reads a's acquisition
				stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
				got := <-res
				advance(ttl)
				if b := j.leader(); b != "b" {
					t.Errorf("after a's RunOnce (%+v) and a TTL, %q leads, want b", got, b)
				}
				_ = stop()
				j.checkSafety(t)
				wantOutcome(t, "a", got, tc.want)
				for _, tm := range j.recorded() {
					t.Logf("%s led from %v to %v", tm.who, tm.start.Sub(began), tm.end.Sub(began))
				}
				t.Logf("a: %v, %v", got.Outcome, got.Err)
			})
		})
	}
}

// TestDoneMarkOutlivesAnOutage: the done mark of a run whose store is out
// of reach as its task returns is retried until it lands, for as long as a
// TTL after the term's latest write (rule 13; finding D4 of issue 34: it
// was given up at the renew deadline, and with RetryFailed a duplicate
// trigger ran the period again).
func TestDoneMarkOutlivesAnOutage(t *testing.T) {
	const outage = 3500 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		cfg := runner.Config{RetryFailed: true}
		res := make(chan runner.Once, 1)
		go func() {
			res <- runPeriod(t, openLease(t, store, "a"), tick1, cfg, func(context.Context) error {
				advance(renewInterval - 100*time.Millisecond) // just before a renewal is due
				store.Partition("a")
				return nil
			})
		}()
		advance(renewInterval - 100*time.Millisecond + outage)
		store.Heal("a")
		a := <-res
		if s := runner.ScheduleOf(record(t, store).Annotations); a.Outcome != runner.Ran || !s.Done || !a.Demotion.Released {
			t.Errorf("a after an outage of %v as its task returned: %+v, record's schedule %+v; want Ran, the period done, released", outage, a, s)
		}
		b := runPeriod(t, openLease(t, store, "b"), tick1, cfg, mustNotRun(t))
		wantOutcome(t, "b, a duplicate trigger of the period", b, runner.AlreadyRan)
	})
}

// TestMinHoldOutlivesAnOutage: a minimum hold's renewals are retried
// through an outage longer than the renew deadline allows, for as long as
// a TTL after the term's latest write, so the hold is not cut short: the
// lease does not lapse, and a duplicate fired within MinHold does not run
// (rule 13; finding D4 of issue 34).
func TestMinHoldOutlivesAnOutage(t *testing.T) {
	const minHold, outage = time.Minute, 3500 * time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		started := time.Now()
		res := make(chan runner.Once, 1)
		go func() { res <- runPeriod(t, openLease(t, store, "a"), "", runner.Config{MinHold: minHold}, done) }()
		advance(2*renewInterval - 250*time.Millisecond) // just before the hold's second renewal is due
		store.Partition("a")
		advance(outage)
		store.Heal("a")
		advance(25*time.Second - time.Since(started))
		var ranAt shared[time.Time]
		runPeriod(t, openLease(t, store, "b"), "", runner.Config{}, func(context.Context) error { ranAt.set(time.Now()); return nil })
		if at := ranAt.get(); !at.IsZero() && at.Sub(started) < minHold {
			t.Errorf("b, fired 25s into a's hold, ran %v after a's task started, within MinHold (%v)", at.Sub(started), minHold)
		}
		a := <-res
		if a.Outcome != runner.Ran || !a.Demotion.Released || time.Since(started) < minHold {
			t.Errorf("a: %+v after %v, want Ran, released once MinHold (%v) had passed", a, time.Since(started), minHold)
		}
	})
}

// TestLateDoneMarkNeverLandsOverASuccessor: the done mark is retried only
// until a TTL after the term's latest write, the earliest a follower can
// take the lease over, and a retry still in flight then is abandoned, so
// that it cannot land over the successor's record, nor over the holder's
// own record that a restore brought back after the takeover. Its retries'
// outcomes are unknown (none was answered): the holder then only reads,
// until a TTL after the earliest of them counts from, and finds no write
// of its own that landed (the record is the successor's, or its own
// latest write put back), so it writes nothing more.
func TestLateDoneMarkNeverLandsOverASuccessor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		res := make(chan runner.Once, 1)
		go func() {
			res <- runPeriod(t, openLease(t, store, "a"), tick1, runner.Config{}, func(context.Context) error {
				advance(renewInterval - 100*time.Millisecond)
				store.Partition("a")
				return nil
			})
		}()
		advance(100 * time.Millisecond)
		marked, _ := store.Bytes("job") // a's period mark, its latest write
		j := newJournal()
		stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(13*time.Second - time.Since(began))
		store.Heal("a")
		store.Delay("a", 3*time.Second) // a's retries from now on would land after b's takeover
		advance(15500*time.Millisecond - time.Since(began))
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's latest write", time.Since(began))
		}
		store.Put("job", marked) // a restore brings a's record back under b
		advance(3 * time.Second)
		if now, _ := store.Bytes("job"); string(now) != string(marked) {
			t.Errorf("a wrote over the record that a restore brought back after b took over: %s", now)
		}
		a := <-res
		if took := time.Since(began); took > ttl+renewInterval || a.Demotion.Released {
			t.Errorf("a: %+v after %v; want it to give up, unreleased, by a TTL (%v) after its first unanswered write, due a renew interval after its latest write", a, took, ttl)
		}
		_ = stop()
	})
}

// TestLateReleaseNeverFreesASuccessorsLease: a release is a write of the
// term once its task has returned, and is not sent later than a TTL after
// the term's latest write. A task that ignored its cancellation returned
// after its lease was taken over and a restore had put its record back:
// releasing that record let a new instance take the lease at once, with
// the successor's token, while the successor still led.
func TestLateReleaseNeverFreesASuccessorsLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		j := newJournal()
		res := make(chan runner.Once, 1)
		go func() {
			res <- runPeriod(t, openLease(t, store, "a"), "", runner.Config{}, func(ctx context.Context) error {
				_ = j.task("a")(ctx)
				advance(25100*time.Millisecond - time.Since(began)) // it ignores the cancellation
				return nil
			})
		}()
		advance(100 * time.Millisecond)
		acquired, _ := store.Bytes("job")
		store.Hang("a") // a's renewals hang: it steps down at its renew deadline
		stopB := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(21*time.Second - time.Since(began))
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's acquisition", time.Since(began))
		}
		store.Hang("b") // b leads on until its renew deadline
		advance(24900*time.Millisecond - time.Since(began))
		store.Heal("a")
		advance(100 * time.Millisecond)
		store.Put("job", acquired) // a restore puts a's record back under b
		a := <-res
		advance(100 * time.Millisecond)
		stopD := start(t, runner.Config{Lease: openLease(t, store, "d"), Task: j.task("d")})
		advance(10 * time.Second)
		_, _ = stopB(), stopD()
		j.checkSafety(t)
		if a.Demotion.Released {
			t.Errorf("a released its record %v after its latest write, later than a TTL (%v) after it: %+v", 25100*time.Millisecond, ttl, a)
		}
	})
}

// lateRenewals is a holder's lease whose every Renew lands at once but is
// answered after delay, or not at all when its context ends first: the
// late-answer fault of package sim, on the writes of a minimum hold.
type lateRenewals struct {
	lease.Lease
	delay time.Duration
}

func (l lateRenewals) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	select {
	case <-ctx.Done():
		return lease.Term{}, ctx.Err()
	case <-time.After(l.delay): // in the test's synctest bubble: fake time
		return nt, err
	}
}

// TestMinHoldOutlivesLateAnswers: a minimum hold whose writes land but are
// answered late, within CallTimeout, keeps the lease until the hold ends
// (rule 13; issue 34, sim seed 1795853083240598326). Each write is sent
// RenewDeadline after the one before (sooner than a renew interval after
// its late answer), later than it was due, so it counts
// from when it was due, and its deadline creeps up on it: the third is
// still unanswered at the deadline of the second, a TTL after the second
// counts from, although it landed. The holder gave the hold up then, the
// record it did not know it had written lapsed 12 s later, and a follower
// took the lease some 27 s before the hold ended. The write's outcome is
// resolved by reading the record back: it moved on within the term, so
// the holder goes on writing until the hold is over. It does not release
// then: its writes are spaced RenewDeadline apart, each answered 3.2 s
// later, so a TTL has
// passed since the write before its latest (tenure.releasable), and
// the record lapses instead.
func TestMinHoldOutlivesLateAnswers(t *testing.T) {
	holdsThrough(t, 5*time.Second, false, func(la lease.Lease) lease.Lease { return lateRenewals{la, 3200 * time.Millisecond} })
}

// firstHoldWritesSlow is a's lease whose first Renew, the hold's first
// write, lands at once and is answered late, after late; whose second
// fails after failAfter; and whose later ones are answered at once.
type firstHoldWritesSlow struct {
	lease.Lease
	late, failAfter time.Duration
	n               atomic.Int32
}

func (l *firstHoldWritesSlow) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	switch l.n.Add(1) {
	case 1:
		nt, err := l.Lease.Renew(ctx, t)
		<-time.After(l.late) // in the test's synctest bubble: fake time
		return nt, err
	case 2:
		<-time.After(l.failAfter)
		return lease.Term{}, lease.ErrUnavailable
	}
	return l.Lease.Renew(ctx, t)
}

// TestMinHoldOutlivesALateAnswerThenAFailure: a hold write answered late
// (4.5 s of a 5 s CallTimeout), then a write that fails only after 4.9 s:
// the hold is kept, and released at its end (rule 13; sim seed
// 6000711947). The write after the late answer is sent by RenewDeadline
// after the late one was sent, not a renew interval after its answer:
// then it would have failed 15.025 s after the late one was sent, past
// that write's TTL, with no time left for a retry, and the lease lapsed
// in the hold.
func TestMinHoldOutlivesALateAnswerThenAFailure(t *testing.T) {
	holdsThrough(t, 5*time.Second, true, func(la lease.Lease) lease.Lease {
		return &firstHoldWritesSlow{Lease: la, late: 4500 * time.Millisecond, failAfter: 4900 * time.Millisecond}
	})
}

// holdsThrough runs a's period with a minimum hold of a minute on a lease
// opened with callTimeout and wrapped by wrap, beside b, a follower: b
// must not lead within the hold, and a's run ends after it, released or
// left to lapse as released says.
func holdsThrough(t *testing.T, callTimeout time.Duration, released bool, wrap func(lease.Lease) lease.Lease) {
	const minHold = time.Minute
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		started := time.Now()
		la, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl, CallTimeout: callTimeout})
		if err != nil {
			t.Fatal(err)
		}
		res := make(chan runner.Once, 1)
		go func() { res <- runPeriod(t, wrap(la), "", runner.Config{MinHold: minHold}, done) }()
		advance(time.Millisecond)
		j := newJournal()
		stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		a := <-res
		ended := time.Since(started)
		advance(minHold + ttl - ended)
		_ = stop()
		for _, tm := range j.recorded() {
			if at := tm.start.Sub(started); at < minHold {
				t.Errorf("b took the lease %v after a's task started, within its MinHold (%v); a gave up after %v", at, minHold, ended)
			}
		}
		if a.Outcome != runner.Ran || a.Demotion.Released != released || ended < minHold {
			t.Errorf("a: %v, released %t, after %v; want Ran, released %t, once MinHold (%v) had passed", a.Outcome, a.Demotion.Released, ended, released, minHold)
		}
	})
}

// TestUnansweredHoldWriteThatDidNotLandEndsTheHold: a hold write left
// unanswered by its deadline is resolved by reading, and a read that finds
// the term's latest answered write still in place (the unanswered one did
// not land) ends the hold without another write: that version's TTL has
// passed, a follower may have taken the lease over, and a restore put the
// version back under it, which a write would take back from the
// successor.
func TestUnansweredHoldWriteThatDidNotLandEndsTheHold(t *testing.T) {
	const minHold = time.Minute
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		res := make(chan runner.Once, 1)
		go func() { res <- runPeriod(t, openLease(t, store, "a"), "", runner.Config{MinHold: minHold}, done) }()
		advance(time.Millisecond)
		j := newJournal()
		stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(time.Second)
		held, _ := store.Bytes("job") // a's first write of the hold, its latest answered
		store.Hang("a")               // the next ones are never applied, nor answered
		advance(16*time.Second - time.Since(began))
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's latest answered write", time.Since(began))
		}
		store.Put("job", held) // a restore brings a's record back under b
		store.Heal("a")        // a's reads are answered again
		advance(3500 * time.Millisecond)
		if now, _ := store.Bytes("job"); string(now) != string(held) {
			t.Errorf("a wrote over the record that a restore brought back after b took over: %s", now)
		}
		a := <-res
		if took := time.Since(began); took > ttl+renewInterval || a.Demotion.Released {
			t.Errorf("a: %v, released %t, after %v; want it to give up, unreleased, by a TTL (%v) after its first unanswered write, due a renew interval after its latest answered one", a.Outcome, a.Demotion.Released, took, ttl)
		}
		_ = stop()
	})
}

// unansweredRenewals is a holder's lease whose second Renew lands but is
// never answered, and whose later ones neither land nor are answered,
// until healed: each waits until its context ends.
type unansweredRenewals struct {
	lease.Lease
	calls  atomic.Int32
	healed atomic.Bool
}

func (l *unansweredRenewals) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	n := l.calls.Add(1)
	if n == 1 || l.healed.Load() {
		return l.Lease.Renew(ctx, t)
	}
	if n == 2 {
		_, _ = l.Lease.Renew(ctx, t)
	}
	<-ctx.Done()
	return lease.Term{}, ctx.Err()
}

// TestUnansweredHoldWriteResolvedOnce: a hold write found by a read to
// have landed unanswered lets the hold go on from it once; the next
// write, unanswered too, is resolved against it, and a read that finds
// the record still at the write already resolved ends the hold. Counted
// again from the later write, which never landed, the hold went on past
// the record's TTL, and wrote over its record that a restore brought back
// after a follower took over.
func TestUnansweredHoldWriteResolvedOnce(t *testing.T) {
	const minHold = time.Minute
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		la := &unansweredRenewals{Lease: openLease(t, store, "a")}
		res := make(chan runner.Once, 1)
		var ended shared[time.Duration]
		go func() {
			a := runPeriod(t, la, "", runner.Config{MinHold: minHold}, done)
			ended.set(time.Since(began))
			res <- a
		}()
		advance(time.Millisecond)
		j := newJournal()
		stop := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(renewInterval + time.Second)
		landed, _ := store.Bytes("job") // a's second hold write, unanswered
		advance(22*time.Second - time.Since(began))
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's first hold write", time.Since(began))
		}
		store.Put("job", landed) // a restore brings a's record back under b
		la.healed.Store(true)
		advance(5 * time.Second)
		if now, _ := store.Bytes("job"); string(now) != string(landed) {
			t.Errorf("a wrote over the record that a restore brought back after b took over: %s", now)
		}
		a := <-res
		if took := ended.get(); took > renewInterval+ttl || a.Demotion.Released {
			t.Errorf("a: %v, released %t, after %v; want it to give up, unreleased, a TTL (%v) after its write that landed unanswered", a.Outcome, a.Demotion.Released, took, ttl)
		}
		_ = stop()
	})
}

// scriptedAnswers is a holder's lease whose calls land at once and are
// answered after the delays given, one per call in order (none once they
// run out), or not at all when the call's context ends first: the
// late-answer fault of package sim, a write's read-back included.
type scriptedAnswers struct {
	lease.Lease
	renews, observes []time.Duration
}

func (l *scriptedAnswers) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	nt, err := l.Lease.Renew(ctx, t)
	return nt, answerAfter(ctx, &l.renews, err)
}

func (l *scriptedAnswers) Observe(ctx context.Context) (lease.Record, error) {
	rec, err := l.Lease.Observe(ctx)
	return rec, answerAfter(ctx, &l.observes, err)
}

// answerAfter waits for the first of delays, which it drops, or for ctx.
func answerAfter(ctx context.Context, delays *[]time.Duration, err error) error {
	if len(*delays) == 0 {
		return err
	}
	d := (*delays)[0]
	*delays = (*delays)[1:]
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d): // in the test's synctest bubble: fake time
		return err
	}
}

// TestHoldSettledByAReadAfterALateWrite: the write of a minimum hold sent
// late (a renew interval after the late answer of the one before) and
// left unanswered at its deadline is settled by a read answered within
// CallTimeout, when CallTimeout is longer than RenewInterval (issue 34,
// sim seed 31342184 of -kinds once -faults late-answer). The hold's first
// write lands at 0 and is answered at 5 s; the second is sent at 10.6 s
// and answered at 15.6 s, after the deadline of the first (a TTL after it
// was sent, 15 s); the read that resolves it returns at 21 s. That read
// had until a TTL after the second write counts from: when it was due,
// 5.6 s, so 20.6 s; the holder gave the hold up, and a follower took the
// lease some 35 s before the hold ended. A write that landed is no one
// else's to take over before a TTL after it was sent (rule 2), so the
// read has until 25.6 s, settles it, and the hold goes on (rule 13).
func TestHoldSettledByAReadAfterALateWrite(t *testing.T) {
	holdsThrough(t, 7*time.Second, true, func(la lease.Lease) lease.Lease {
		return &scriptedAnswers{Lease: la, renews: []time.Duration{5 * time.Second, 5 * time.Second}, observes: []time.Duration{6 * time.Second}}
	})
}
