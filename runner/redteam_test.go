package runner_test

// Red-team tests of the deadlines of a term's writes once its task has
// returned (tenure.heldUntil and releasable): sequences a red team
// built to break rules 1, 5 and 10, each of which failed or would fail
// with the bound it names loosened.

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

// hiddenLateRenewal is a holder's lease whose Acquire lands at once and is
// answered after delay, so that its first renewal is sent late (a renew
// interval after the late answer, after it was due). That renewal lands
// and is answered, and then a restore puts the acquisition's record back
// (hiding the renewal, as rule 3 allows for), and every later call of the
// holder hangs until healed. It keeps the bytes of the renewal's record
// (renewed) for a second restore.
type hiddenLateRenewal struct {
	lease.Lease
	store             *memlease.Store
	identity          string
	delay             time.Duration
	acquired, renewed atomic.Pointer[[]byte]
	wrote             atomic.Bool
	renewSent         atomic.Int64 // ns since the bubble's start
	began             time.Time
	noRestore         bool // the renewal is not hidden: the holder only hangs after it
}

func (l *hiddenLateRenewal) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	b, _ := l.store.Bytes("job")
	l.acquired.Store(&b)
	<-time.After(l.delay) // fake time
	return t, err
}

func (l *hiddenLateRenewal) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	first := !l.wrote.Load()
	if first {
		l.renewSent.Store(int64(time.Since(l.began)))
	}
	nt, err := l.Lease.Renew(ctx, t)
	if first && !l.wrote.Swap(true) {
		b, _ := l.store.Bytes("job")
		l.renewed.Store(&b)
		if !l.noRestore {
			l.store.Put("job", *l.acquired.Load()) // restore 1: the late renewal is hidden
		}
		l.store.Hang(l.identity)
	}
	return nt, err
}

// TestReleaseAfterTwoRestoresNeverFreesASuccessorsLease (rules 1, 5, 10;
// eba565c). A holder's acquisition (0 s) is answered 2.5 s late, so its
// first renewal is sent at 8.125 s, 2.5 s after it was due (5.625 s). It
// lands and is answered; a restore puts the acquisition's record back at
// once (restore 1, as rule 3's argument allows), and the holder's calls
// hang. A follower b, which has counted the acquisition's version since
// 0.1 s, takes the lease over at about 15.1 s (a TTL later, rule 2: the
// acquisition's record is the one it took over). b's renewals then hang,
// so it leads until its renew deadline, about 23.5 s. A second restore
// puts the holder's renewal back under b (restore 2, the kind of restore
// TestLateReleaseNeverFreesASuccessorsLease guards against), and the
// holder, whose task ignored its cancellation, returns at taskEnd and
// releases: a write conditional on its latest write's version, allowed
// since eba565c until a TTL after that write was SENT (23.125 s), where it
// was allowed until a TTL after it was DUE (20.625 s) before.
//
// The release landed on the restored record, freed it, and d, a fresh
// instance, took it at once with token 2 -- b's token -- while b still
// led: two leaders, and a token that did not increase. The release is
// now sent only until a TTL after the acquisition (the write before the
// renewal) was sent, 15 s, the earliest b could take that record over
// (tenure.releasable), so the holder leaves the lease to lapse.
//
// "before eba565c too": the release at 18 s lands under the old deadline
// as well (the window from b's takeover to a TTL after the renewal was
// due is open in both). "opened by eba565c": the release at 21.5 s was
// refused before, and is sent now.
func TestReleaseAfterTwoRestoresNeverFreesASuccessorsLease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		taskEnd time.Duration
	}{
		{"before eba565c too", 18 * time.Second},
		{"opened by eba565c", 21500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) { restoredUnderSuccessor(t, tc.taskEnd, true, 500*time.Millisecond, 0) })
	}
}

// TestReleaseAfterAWriteOverARestoredWrite: the sequence above with a
// minimum hold of 20 s (sim seed 5000047489, where the write was a done
// mark). The task returns at 16 s, and the hold's first write, allowed
// until a TTL after the late renewal was sent (23.125 s), lands on that
// renewal, which the second restore put back under b at 15.6 s. Counted
// from that write, sent more than a renew interval after the renewal was
// answered, the release took the renewal's record for the earliest a
// follower could have taken over, and was sent after the hold, before a
// TTL after the renewal (23.125 s): it freed b's lease while b led, and d
// led beside it from 22.6 s. A write answered more than a TTL after the earliest
// record it would vouch for (the acquisition's, sent at 0 s) vouches for
// none: b may have taken that record over before the write landed, all
// the term's writes since hidden. The release then waits until such a
// successor has passed its renew deadline, RenewDeadline after the
// write's answer (24.4 s), and the hold's lease lapses instead.
func TestReleaseAfterAWriteOverARestoredWrite(t *testing.T) {
	restoredUnderSuccessor(t, 16*time.Second, true, 500*time.Millisecond, 20*time.Second)
}

// TestLateRenewalTakenOverThenRestored (a red team's attack that held):
// the late renewal of the test above (sent at 8.125 s, due at 5.625 s) is
// not hidden; the holder's calls hang after it, and b, which counts its
// version from its first read of it, takes it over a TTL later (about
// 24.1 s: never before a TTL after the renewal was sent, 23.125 s). A
// restore then puts that renewal back under b at once, and the holder,
// whose task ignored its cancellation, returns at 24.5 s: its deadline
// has passed, so the release is not sent, and nothing frees b's lease.
func TestLateRenewalTakenOverThenRestored(t *testing.T) {
	restoredUnderSuccessor(t, 24500*time.Millisecond, false, 0, 0)
}

// restoredUnderSuccessor runs a's term (a RunOnce with minHold) over
// hiddenLateRenewal (hiding its late renewal if hide), lets b take the
// lease over and hang, waits wait,
// puts a's renewal back under b, and lets a's task return at taskEnd:
// a must not release that record, and d, started then, must not lead
// while b does.
func restoredUnderSuccessor(t *testing.T, taskEnd time.Duration, hide bool, wait, minHold time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		la, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		hl := &hiddenLateRenewal{Lease: la, store: store, identity: "a", delay: 2500 * time.Millisecond, began: began, noRestore: !hide}
		j := newJournal()
		res := make(chan runner.Once, 1)
		go func() {
			res <- runPeriod(t, hl, "", runner.Config{MinHold: minHold}, func(ctx context.Context) error {
				_ = j.task("a")(ctx)
				advance(taskEnd - time.Since(began)) // it ignores the cancellation
				return nil
			})
		}()
		advance(100 * time.Millisecond)
		stopB := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		for j.leader() != "b" && time.Since(began) < 30*time.Second {
			advance(10 * time.Millisecond)
		}
		bLed := time.Since(began)
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's acquisition", bLed)
		}
		store.Hang("b") // b leads on until its renew deadline
		advance(wait)
		store.Put("job", *hl.renewed.Load()) // a's late renewal back under b
		store.Heal("a")
		a := <-res
		advance(100 * time.Millisecond)
		stopD := start(t, runner.Config{Lease: openLease(t, store, "d"), Task: j.task("d")})
		advance(10 * time.Second)
		_, _ = stopB(), stopD()
		t.Logf("a's renewal sent at %v; b led from %v; a's task returned at %v; released %t", time.Duration(hl.renewSent.Load()), bLed, taskEnd, a.Demotion.Released)
		for _, tm := range j.recorded() {
			t.Logf("%s (token %d) led from %v to %v", tm.who, tm.token, tm.start.Sub(began), tm.end.Sub(began))
		}
		j.checkSafety(t)
		if a.Demotion.Released {
			t.Errorf("a released the record a restore put back under b (b led from %v)", bLed)
		}
	})
}
