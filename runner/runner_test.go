package runner_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

func TestNewRejectsInvalidConfig(t *testing.T) {
	store := memlease.NewStore()
	l := openLease(t, store, "a")
	fast, err := store.Open("job", lease.Options{Identity: "b", TTL: ttl, RenewInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	task := func(context.Context) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  runner.Config
		want string
	}{
		{"nil lease", runner.Config{Task: task}, "runner: Lease (<nil>) is required"},
		{"nil task", runner.Config{Lease: l}, "runner: Task (<nil>) is required"},
		{"deadline not below TTL", runner.Config{Lease: l, Task: task, RenewDeadline: 15 * time.Second},
			"runner: RenewDeadline (15s) must be less than TTL (15s)"},
		{"interval not below deadline", runner.Config{Lease: l, Task: task, RenewInterval: 10 * time.Second},
			"runner: RenewInterval (10s) must be less than RenewDeadline (8.4375s)"},
		{"interval and deadline above TTL", runner.Config{Lease: l, Task: task, RenewDeadline: 10 * time.Second},
			"runner: RenewInterval (5.625s) plus RenewDeadline (10s) must not exceed TTL (15s)"},
		{"interval below the lease's", runner.Config{Lease: l, Task: task, RenewInterval: 5 * time.Second},
			"runner: RenewInterval (5s) must not be shorter than the lease's Options.RenewInterval (5.625s), which its records tell followers"},
		{"call timeout not below deadline", runner.Config{Lease: fast, Task: task, RenewDeadline: 3 * time.Second, RenewInterval: time.Second},
			"runner: CallTimeout (3s) of the lease must be less than RenewDeadline (3s)"},
		{"negative duration", runner.Config{Lease: l, Task: task, CampaignInterval: -time.Second},
			"runner: CampaignInterval (-1s) must not be negative"},
		{"health timeout above interval", runner.Config{Lease: l, Task: task, HealthInterval: time.Second, HealthTimeout: 2 * time.Second},
			"runner: HealthTimeout (2s) must not exceed HealthInterval (1s)"},
		{"jitter above 1", runner.Config{Lease: l, Task: task, Jitter: 1.5}, "runner: Jitter (1.5) must be between 0 and 1"},
		{"negative threshold", runner.Config{Lease: l, Task: task, HealthThreshold: -1}, "runner: HealthThreshold (-1) must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runner.New(tc.cfg)
			if !errors.Is(err, lease.ErrInvalid) || err.Error() != tc.want {
				t.Fatalf("runner.New: got %v, want %q wrapping lease.ErrInvalid", err, tc.want)
			}
		})
	}
}

func TestElectedTaskSeesTokenAndReleasesOnStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		l := openLease(t, store, "a")
		var elected lease.Term
		var seen uint64
		var demotions []runner.Demotion
		stop := start(t, runner.Config{
			Lease:     l,
			OnElected: func(lt lease.Term) { elected = lt },
			OnDemoted: func(d runner.Demotion) { demotions = append(demotions, d) },
			Task: func(ctx context.Context) error {
				lt, _ := runner.Term(ctx)
				seen = lt.Token
				<-ctx.Done()
				return nil
			},
		})
		advance(time.Minute) // four TTLs: several renewals
		if err := stop(); err != nil {
			t.Fatalf("Run returned %v after its context was cancelled, want nil", err)
		}
		if elected.Token == 0 || seen != elected.Token {
			t.Fatalf("elected with token %d, task saw %d", elected.Token, seen)
		}
		if len(demotions) != 1 || demotions[0].Reason != runner.Stopped || !demotions[0].Released {
			t.Fatalf("demotions = %+v, want one Stopped and released", demotions)
		}
		rec, err := l.Observe(context.Background())
		if err != nil || !rec.Released || rec.Token != elected.Token {
			t.Fatalf("after stop the record is %+v (%v), want released with token %d", rec, err, elected.Token)
		}
	})
}

// TestAnnotate: a contender's Annotate sees what the previous holder's
// renewals and release wrote, and its own term's renewals and release
// write what it returns, the first renewal at once (not a renew interval
// after the acquisition).
func TestAnnotate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var seen []string
		cfg := func(who string) runner.Config {
			return runner.Config{
				Lease: openLease(t, store, who),
				Task:  func(ctx context.Context) error { <-ctx.Done(); return nil },
				Annotate: func(won lease.Term) lease.Annotations {
					seen = append(seen, who+" saw "+won.Annotations.Get("test/holder"))
					return won.Annotations.With("test/holder", who)
				},
			}
		}
		stop := start(t, cfg("a"))
		advance(time.Second) // before the renew interval
		rec, err := openLease(t, store, "c").Observe(context.Background())
		if err != nil || rec.Annotations.Get("test/holder") != "a" {
			t.Fatalf("a second after a won the lease the record is %+v (%v); want a's annotation", rec, err)
		}
		advance(time.Minute) // renewals keep it
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		stop = start(t, cfg("b"))
		advance(time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		rec, err = openLease(t, store, "c").Observe(context.Background())
		if err != nil || !rec.Released || rec.Annotations.Get("test/holder") != "b" {
			t.Fatalf("after b released, the record is %+v (%v); want b's annotation, released", rec, err)
		}
		if want := []string{"a saw ", "b saw a"}; !slices.Equal(seen, want) {
			t.Fatalf("Annotate calls %q, want %q", seen, want)
		}
	})
}

// slowAcquire is a lease whose Acquire lands at once and answers after
// delay (a lost answer read back slowly, a stalled process).
type slowAcquire struct {
	lease.Lease
	delay time.Duration
}

func (l slowAcquire) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	<-time.After(l.delay) // in the test's synctest bubble: fake time
	return t, err
}

// TestAnnotateNotCalledPastTheDeadline: a term whose Acquire answered
// after its renew deadline neither starts its task nor calls Annotate
// (Config.Annotate: a layer above may act on what it is told, as the
// shard group's assigner notes the term it annotates), and its release
// writes the annotations it took over.
func TestAnnotateNotCalledPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var annotated, ran atomic.Int32
		stop := start(t, runner.Config{
			Lease: slowAcquire{openLease(t, store, "a"), renewDeadline + time.Second},
			Task:  func(context.Context) error { ran.Add(1); return nil },
			Annotate: func(won lease.Term) lease.Annotations {
				annotated.Add(1)
				return won.Annotations.With("test/holder", "a")
			},
		})
		advance(renewDeadline + 2*time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		rec, err := openLease(t, store, "c").Observe(context.Background())
		if annotated.Load() != 0 || ran.Load() != 0 || err != nil || rec.Annotations.Get("test/holder") != "" {
			t.Errorf("a term answered past its renew deadline: Annotate called %d times, task run %d times, record %+v (%v); want neither called, no annotation written", annotated.Load(), ran.Load(), rec, err)
		}
	})
}

// TestStepsDownAtRenewDeadlineWhileRenewalHangs checks safety rules 3 and 7:
// the leader stops at Sent+RenewDeadline of its last successful renewal even
// though the renewal in flight never answers, and a follower takes over only
// after that, once the record has been unchanged for a TTL.
func TestStepsDownAtRenewDeadlineWhileRenewalHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		var lastSent, stoppedAt shared[time.Time]
		start(t, runner.Config{
			Lease:     openLease(t, store, "a"),
			OnDemoted: j.demoted("a"),
			Task: func(ctx context.Context) error {
				advance(12 * time.Second) // two renewals
				store.Hang("a")
				<-ctx.Done()
				stoppedAt.set(time.Now())
				lt, _ := runner.Term(ctx)
				lastSent.set(lt.Sent)
				return nil
			},
		})
		synctest.Wait()
		start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		advance(time.Minute)

		if got := stoppedAt.get().Sub(lastSent.get()); got != renewDeadline {
			t.Errorf("leader stopped %v after its last successful renewal was sent, want RenewDeadline (%v)", got, renewDeadline)
		}
		if d := j.demotionsOf("a"); len(d) == 0 || d[0].Reason != runner.DeadlinePassed {
			t.Errorf("demotions of a = %+v, want DeadlinePassed first", d)
		}
		if len(j.recorded()) != 0 || j.leader() != "b" {
			t.Fatalf("b is not leading a minute later (leader %q)", j.leader())
		}
	})
}

func TestFollowerTakesOverOnlyAfterTTLOfSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		var lastSent shared[time.Time]
		start(t, runner.Config{
			Lease: openLease(t, store, "a"),
			Task: func(ctx context.Context) error {
				advance(7 * time.Second)
				lt, _ := runner.Term(ctx)
				lastSent.set(lt.Sent)
				store.Partition("a") // the leader's process is cut off: no renewal lands
				<-ctx.Done()
				return nil
			},
		})
		synctest.Wait()
		var tookOver shared[time.Time]
		start(t, runner.Config{
			Lease:     openLease(t, store, "b"),
			OnElected: func(lease.Term) { tookOver.set(time.Now()) },
			Task:      j.task("b"),
		})
		advance(2 * time.Minute)
		if tookOver.get().IsZero() {
			t.Fatal("b never took over")
		}
		if silence := tookOver.get().Sub(lastSent.get()); silence < ttl {
			t.Fatalf("b took over %v after a's last renewal was sent, before the TTL (%v)", silence, ttl)
		}
	})
}

func TestLostLeaseStepsDownWithoutRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a"), OnDemoted: j.demoted("a")})
		advance(time.Second)
		intruder := driver.EncodeJSON(lease.Record{Holder: "intruder", Token: 99, TTL: ttl, Nonce: "x"})
		store.Put("job", intruder)
		advance(renewInterval)
		d := j.demotionsOf("a")
		if len(d) != 1 || d[0].Reason != runner.LeaseLost || d[0].Released || !errors.Is(d[0].Err, lease.ErrLost) {
			t.Fatalf("demotions of a = %+v, want one LeaseLost (ErrLost), not released", d)
		}
		if got, _ := store.Bytes("job"); string(got) != string(intruder) {
			t.Fatalf("the intruder's record was overwritten: %s", got)
		}
	})
}

// TestDeletedRecordEndsTermAtOnce checks safety rule 10: a record deleted
// under a live leader (a lifecycle rule, a person, a restore) ends the
// leader's term at its next renewal, within one RenewInterval, not at its
// renew deadline.
func TestDeletedRecordEndsTermAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a"), OnDemoted: j.demoted("a")})
		advance(renewInterval + time.Second)
		if leader := j.leader(); leader != "a" {
			t.Fatalf("leader before the delete: %q, want a", leader)
		}
		deleted := time.Now()
		store.Delete("job")
		advance(renewInterval)
		d := j.demotionsOf("a")
		if len(d) != 1 || d[0].Reason != runner.LeaseLost || !errors.Is(d[0].Err, lease.ErrLost) || !strings.Contains(d[0].Err.Error(), "deleted") {
			t.Fatalf("demotions of a one RenewInterval (%v) after its record was deleted: %+v, want one LeaseLost (ErrLost) saying the record was deleted", renewInterval, d)
		}
		terms := j.recorded()
		if len(terms) != 1 || terms[0].end.Sub(deleted) > renewInterval {
			t.Fatalf("terms: %+v, want a's, its task cancelled within %v of the delete (at %v)", terms, renewInterval, deleted)
		}
		t.Logf("a's task was cancelled %v after its record was deleted: %v", terms[0].end.Sub(deleted), d[0].Err)
	})
}

// TestDeletedRecordTokensGoOn checks the other half of safety rule 10:
// when the record is deleted under a live leader, every leader elected
// afterwards among the running contenders, which had seen its token, gets
// a greater one, although the record starts afresh.
func TestDeletedRecordTokensGoOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		elected := map[string]*shared[[]lease.Term]{}
		for _, who := range []string{"a", "b", "c"} {
			terms := &shared[[]lease.Term]{}
			elected[who] = terms
			start(t, runner.Config{
				Lease: openLease(t, store, who), Task: j.task(who),
				OnElected: func(lt lease.Term) { terms.update(func(ts *[]lease.Term) { *ts = append(*ts, lt) }) },
			})
			if who == "a" {
				advance(time.Second)
			}
		}
		advance(2 * renewInterval) // b and c poll, and see a's token
		if leader := j.leader(); leader != "a" {
			t.Fatalf("leader before the delete: %q, want a", leader)
		}
		highest := elected["a"].get()[0].Token
		store.Delete("job")
		advance(3 * time.Minute) // a's term ends; b or c leads; a campaigns again

		var after []lease.Term
		for who, ts := range elected {
			terms := ts.get()
			if who == "a" {
				terms = terms[1:]
			}
			after = append(after, terms...)
		}
		if len(after) == 0 {
			t.Fatal("nobody was elected after the delete")
		}
		for _, lt := range after {
			if lt.Token <= highest {
				t.Errorf("%s was elected after the delete with token %d, want more than %d, which every running contender had seen", lt.Holder, lt.Token, highest)
			}
		}
		t.Logf("token %d before the delete; after it: %+v", highest, after)
	})
}

// TestReleaseOnlyAfterTaskReturns checks safety rule 6: a task that ignores
// cancellation keeps the lease from being released, but not renewed.
func TestReleaseOnlyAfterTaskReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		l := openLease(t, store, "a")
		var returned atomic.Bool
		stop := start(t, runner.Config{
			Lease: l,
			Task: func(ctx context.Context) error {
				<-ctx.Done()
				advance(8 * time.Second) // ignores cancellation for a while
				returned.Store(true)
				return nil
			},
		})
		advance(time.Second)
		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		advance(7 * time.Second)
		rec, err := l.Observe(context.Background())
		if err != nil || rec.Released || rec.Holder != "a" {
			t.Fatalf("while the task still runs the record is %+v (%v), want held by a", rec, err)
		}
		reads, writes := store.Calls("a")
		<-stopped
		if !returned.Load() {
			t.Fatal("Run returned before the task did")
		}
		rec, err = l.Observe(context.Background())
		if err != nil || !rec.Released {
			t.Fatalf("after the task returned the record is %+v (%v), want released", rec, err)
		}
		if r2, w2 := store.Calls("a"); w2 != writes+1 {
			t.Fatalf("between stop and the task's return a wrote %d times (reads %d→%d); want only the release after", w2-writes, reads, r2)
		}
	})
}

func TestUnhealthyLeaderStepsDownAndCoolsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		var sick atomic.Bool
		var elections shared[[]time.Time]
		start(t, runner.Config{
			Lease:       openLease(t, store, "a"),
			Task:        j.task("a"),
			OnDemoted:   j.demoted("a"),
			OnElected:   func(lease.Term) { elections.update(func(e *[]time.Time) { *e = append(*e, time.Now()) }) },
			CoolDown:    time.Minute,
			HealthCheck: func(context.Context) error { return map[bool]error{true: errors.New("disk full")}[sick.Load()] },
		})
		advance(time.Second)
		sick.Store(true)
		advance(30 * time.Second)
		sick.Store(false)
		advance(2 * time.Minute)

		d := j.demotionsOf("a")
		if len(d) == 0 || d[0].Reason != runner.Unhealthy || !d[0].Released || !strings.Contains(d[0].Err.Error(), "disk full") {
			t.Fatalf("demotions = %+v, want Unhealthy with the check's error, released", d)
		}
		e := elections.get()
		if len(e) != 2 {
			t.Fatalf("elected %d times, want 2 (before and after the cool-down)", len(e))
		}
		stepDown := j.recorded()[0].end
		if gap := e[1].Sub(stepDown); gap < time.Minute {
			t.Fatalf("campaigned again %v after stepping down, within the CoolDown (1m)", gap)
		}
	})
}

func TestStalledTaskStepsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		var lastProgress, stoppedAt shared[time.Time]
		start(t, runner.Config{
			Lease:        openLease(t, store, "a"),
			OnDemoted:    j.demoted("a"),
			StallTimeout: 20 * time.Second,
			Task: func(ctx context.Context) error {
				for range 10 { // healthy for 30s, then stuck
					runner.Progress(ctx)
					lastProgress.set(time.Now())
					advance(3 * time.Second)
				}
				<-ctx.Done()
				stoppedAt.set(time.Now())
				return nil
			},
		})
		advance(2 * time.Minute)
		if got := stoppedAt.get().Sub(lastProgress.get()); got != 20*time.Second {
			t.Errorf("stopped %v after the last progress, want the StallTimeout (20s)", got)
		}
		d := j.demotionsOf("a")
		if len(d) == 0 || d[0].Reason != runner.Unhealthy || !strings.Contains(d[0].Err.Error(), "StallTimeout") {
			t.Fatalf("demotions = %+v, want Unhealthy naming StallTimeout", d)
		}
	})
}

func TestTransientFailuresAreRetriedWithinTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a"), OnDemoted: j.demoted("a")})
		advance(time.Second)
		store.FailNext("a", 3)
		advance(20 * time.Second)
		store.LoseResponses("a", 2)
		advance(20 * time.Second)
		if d := j.demotionsOf("a"); len(d) != 0 || j.leader() != "a" {
			t.Fatalf("a was demoted (%+v) by failures that retries should absorb", d)
		}
	})
}

func TestStopWhenTaskEndsReturnsTheTaskError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		l := openLease(t, store, "a")
		boom := errors.New("boom")
		r, err := runner.New(runner.Config{Lease: l, Logger: quiet, StopWhenTaskEnds: true,
			Task: func(context.Context) error { advance(time.Minute); return boom }})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(context.Background()); !errors.Is(err, boom) {
			t.Fatalf("Run returned %v, want the task's error", err)
		}
		if rec, err := l.Observe(context.Background()); err != nil || !rec.Released {
			t.Fatalf("record after Run = %+v (%v), want released", rec, err)
		}
	})
}

func TestTaskEndedCampaignsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var runs atomic.Int32
		start(t, runner.Config{Lease: openLease(t, store, "a"),
			Task: func(context.Context) error { runs.Add(1); advance(time.Second); return nil }})
		advance(time.Minute)
		if runs.Load() < 3 {
			t.Fatalf("task ran %d times in a minute, want it run again after each return", runs.Load())
		}
	})
}

// restarts runs a runner whose task ends by itself with the results of
// outcome(i) for the i-th run, after running for ran(i), for a fake
// duration, and returns how long Run waited after each run ended before the
// next one started.
func restarts(t *testing.T, d time.Duration, ran func(int) time.Duration, outcome func(int) error) []time.Duration {
	t.Helper()
	var waits []time.Duration
	var ended time.Time
	runs := 0
	stop := start(t, runner.Config{Lease: openLease(t, memlease.NewStore(), "a"),
		Task: func(context.Context) error {
			if runs > 0 {
				waits = append(waits, time.Since(ended))
			}
			advance(ran(runs))
			err := outcome(runs)
			runs++
			ended = time.Now()
			return err
		}})
	advance(d)
	_ = stop() // Run has returned: waits is ours to read
	return waits
}

// TestFailingTaskIsRestartedWithBackoff: a task that fails at once is run
// again after CampaignInterval, then twice, four times... that, up to 16
// times; a run that succeeds, or fails after running longer than that,
// starts again from one CampaignInterval.
func TestFailingTaskIsRestartedWithBackoff(t *testing.T) {
	const campaign = ttl / 3 // the default CampaignInterval
	const jitter = 0.2       // the default Jitter
	boom := errors.New("boom")
	check := func(t *testing.T, waits []time.Duration, want []int) {
		t.Helper()
		if len(waits) < len(want) {
			t.Fatalf("waits before restarts = %v, want at least %d", waits, len(want))
		}
		for i, n := range want {
			lo := time.Duration(n) * campaign
			// The release and the next acquire take no fake time.
			if hi := time.Duration(float64(lo) * (1 + jitter)); waits[i] < lo || waits[i] > hi {
				t.Fatalf("wait %d before a restart = %v, want %d × CampaignInterval (%v to %v); first waits %v", i, waits[i], n, lo, hi, waits[:len(want)])
			}
		}
	}
	t.Run("fails-at-once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			waits := restarts(t, 30*time.Minute, func(int) time.Duration { return 0 }, func(int) error { return boom })
			check(t, waits, []int{1, 2, 4, 8, 16, 16, 16})
		})
	})
	t.Run("success-resets", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// fail, fail, fail, succeed, fail, fail
			waits := restarts(t, 10*time.Minute, func(int) time.Duration { return 0 }, func(i int) error {
				if i == 3 {
					return nil
				}
				return boom
			})
			check(t, waits, []int{1, 2, 4, 1, 1, 2})
		})
	})
	t.Run("long-run-resets", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Every run fails; the third ran longer than the longest wait.
			waits := restarts(t, 20*time.Minute, func(i int) time.Duration {
				if i == 2 {
					return 17 * campaign
				}
				return 0
			}, func(int) error { return boom })
			check(t, waits, []int{1, 2, 1, 2, 4})
		})
	})
}

func TestLeaderChangedIsReportedToFollowers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		stopA := start(t, runner.Config{Lease: openLease(t, store, "a"), Task: j.task("a")})
		synctest.Wait()
		var seen shared[[]string]
		start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b"),
			OnLeaderChanged: func(id string) { seen.update(func(s *[]string) { *s = append(*s, id) }) }})
		advance(time.Minute)
		_ = stopA()
		advance(time.Minute)
		if strings.Join(seen.get(), ",") != "a,b" {
			t.Fatalf("b observed leaders %q, want a then b", seen.get())
		}
	})
}

func TestPermanentErrorEndsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		store.Put("job", []byte("somebody else's file"))
		r, err := runner.New(runner.Config{Lease: openLease(t, store, "a"), Logger: quiet,
			Task: func(context.Context) error { t.Error("task ran on a corrupt lease"); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(context.Background()); !errors.Is(err, lease.ErrCorrupt) {
			t.Fatalf("Run returned %v, want ErrCorrupt", err)
		}
	})
}

// TestAtMostOneLeaderUnderFaults runs three contenders for ten fake minutes
// while a random fault hits the current leader every so often, and checks
// safety rules 1 and 5 on the terms the leaders' own tasks recorded.
func TestAtMostOneLeaderUnderFaults(t *testing.T) {
	for seed := range uint64(5) {
		t.Run("seed"+string(rune('0'+seed)), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				j := newJournal()
				for _, who := range []string{"a", "b", "c"} {
					start(t, runner.Config{Lease: openLease(t, store, who), Task: j.task(who), OnDemoted: j.demoted(who)})
				}
				rng := rand.New(rand.NewPCG(seed, 1))
				faults := []func(string){
					store.Partition, store.Hang,
					func(who string) { store.Delay(who, time.Duration(rng.IntN(12))*time.Second) },
					func(who string) { store.FailNext(who, rng.IntN(6)) },
					func(who string) { store.LoseResponses(who, rng.IntN(3)) },
				}
				for range 40 {
					advance(time.Duration(rng.IntN(20)) * time.Second)
					if who := j.leader(); who != "" {
						faults[rng.IntN(len(faults))](who)
						advance(time.Duration(rng.IntN(30)) * time.Second)
						store.Heal(who)
					}
				}
				advance(time.Minute)
				j.checkSafety(t)
				if len(j.recorded()) < 5 {
					t.Fatalf("only %d terms in ten minutes of faults: the test exercised too little", len(j.recorded()))
				}
			})
		})
	}
}

// stuckLease is a lease whose renewals, once stuck, ignore their context and
// return only when the test lets them.
type stuckLease struct {
	lease.Lease
	stuck   atomic.Bool
	release chan struct{}
}

func (s *stuckLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if s.stuck.Load() {
		<-s.release
		return lease.Term{}, context.DeadlineExceeded
	}
	return s.Lease.Renew(ctx, t)
}

// TestStepDownTimerFiresWhileRenewIgnoresCancellation checks that the
// step-down does not depend on the backend honouring its context.
func TestStepDownTimerFiresWhileRenewIgnoresCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &stuckLease{Lease: openLease(t, memlease.NewStore(), "a"), release: make(chan struct{})}
		var lastSent, stoppedAt shared[time.Time]
		start(t, runner.Config{Lease: l, Task: func(ctx context.Context) error {
			advance(7 * time.Second)
			l.stuck.Store(true)
			<-ctx.Done()
			stoppedAt.set(time.Now())
			lt, _ := runner.Term(ctx)
			lastSent.set(lt.Sent)
			return nil
		}})
		advance(time.Minute)
		if stoppedAt.get().IsZero() {
			t.Fatal("the task was not cancelled while a renewal hung")
		}
		if got := stoppedAt.get().Sub(lastSent.get()); got != renewDeadline {
			t.Fatalf("task cancelled %v after the last renewal was sent, want RenewDeadline (%v)", got, renewDeadline)
		}
		close(l.release)
	})
}
