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

// runPeriod runs RunOnce for the period key on l, with cfg's other fields,
// and returns its result.
func runPeriod(t *testing.T, l lease.Lease, key string, cfg runner.Config, task func(context.Context) error) runner.Once {
	t.Helper()
	cfg.Lease, cfg.Task, cfg.Period, cfg.Logger = l, task, key, quiet
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce for period %q: %v, want a result", key, err)
	}
	return res
}

// record reads the lease's record in store.
func record(t *testing.T, store *memlease.Store) lease.Record {
	t.Helper()
	rec, err := openLease(t, store, "observer").Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	return rec
}

func wantOutcome(t *testing.T, what string, res runner.Once, want runner.OnceOutcome) {
	t.Helper()
	if res.Outcome != want {
		t.Errorf("%s: RunOnce = %+v, want %v", what, res, want)
	}
}

const (
	tick1 = "2026-11-23T10:00:00Z"
	tick2 = "2026-11-23T11:00:00Z"
)

func failed(context.Context) error { return errors.New("the job failed") }

func TestPeriodRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		res := runPeriod(t, openLease(t, store, "a"), tick1, runner.Config{}, done)
		wantOutcome(t, "a, the first of period 1", res, runner.Ran)
		if rec := record(t, store); runner.ScheduleOf(rec.Annotations).Period != tick1 || !runner.ScheduleOf(rec.Annotations).Done || !rec.Released {
			t.Errorf("record after a's run: %+v, want period %q done and released", rec, tick1)
		}
		advance(time.Minute) // b's trigger fires a minute late
		res = runPeriod(t, openLease(t, store, "b"), tick1, runner.Config{}, mustNotRun(t))
		wantOutcome(t, "b, late for period 1", res, runner.AlreadyRan)
		if runner.ScheduleOf(res.Record.Annotations).Period != tick1 || !runner.ScheduleOf(res.Record.Annotations).Done {
			t.Errorf("b's AlreadyRan names %+v, want the record of period %q done", res.Record, tick1)
		}
		res = runPeriod(t, openLease(t, store, "c"), "2026-11-23T09:00:00Z", runner.Config{}, mustNotRun(t))
		wantOutcome(t, "c, for an earlier period", res, runner.AlreadyRan)
		res = runPeriod(t, openLease(t, store, "b"), "2026-11-23T11:00:00+01:00", runner.Config{}, mustNotRun(t))
		wantOutcome(t, "b, for period 1 written in another zone", res, runner.AlreadyRan)
		res = runPeriod(t, openLease(t, store, "b"), tick2, runner.Config{}, done)
		wantOutcome(t, "b, for period 2", res, runner.Ran)
		if rec := record(t, store); runner.ScheduleOf(rec.Annotations).Period != tick2 || !runner.ScheduleOf(rec.Annotations).Done {
			t.Errorf("record after period 2: %+v, want period %q done", rec, tick2)
		}
	})
}

// TestPeriodFiredTogether: instances fired for one tick at the same
// moment: one runs the task, every other returns AlreadyRan at once, as
// soon as it reads the period the winner wrote, without waiting out the
// winner's task.
func TestPeriodFiredTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		ids := []string{"a", "b", "c", "d", "e"}
		results := make(chan runner.Once, len(ids))
		var ran shared[int]
		for _, id := range ids {
			go func() {
				results <- runPeriod(t, openLease(t, store, id), tick1, runner.Config{}, func(ctx context.Context) error {
					ran.update(func(n *int) { *n++ })
					advance(30 * time.Second)
					return nil
				})
			}()
		}
		counts := map[runner.OnceOutcome]int{}
		for range ids {
			res := <-results
			counts[res.Outcome]++
			if res.Outcome == runner.AlreadyRan {
				if rec := record(t, store); !rec.Held() && runner.ScheduleOf(rec.Annotations).Period == tick1 && runner.ScheduleOf(rec.Annotations).Done {
					t.Errorf("an AlreadyRan came after the winner's task ended: %+v", res)
				}
			}
		}
		if ran.get() != 1 || counts[runner.Ran] != 1 || counts[runner.AlreadyRan] != len(ids)-1 {
			t.Errorf("task ran %d times; outcomes %v; want 1 run, 1 Ran and %d AlreadyRan", ran.get(), counts, len(ids)-1)
		}
	})
}

// TestPeriodFailedOrCrashed: by default a period whose task failed, or
// whose instance crashed, has run (at most once); with RetryFailed a later
// trigger of the same period runs it again, after a crashed holder's
// lease lapsed.
func TestPeriodFailedOrCrashed(t *testing.T) {
	crash := func(t *testing.T, store *memlease.Store) {
		t.Helper()
		l := openLease(t, store, "crashed")
		term, err := l.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		term = term.Annotate(lease.AnnotationPeriod, tick1)
		if _, err := l.Renew(context.Background(), term); err != nil { // as RunOnce marks it; then nothing
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		retry  bool
		before func(*testing.T, *memlease.Store)
		want   runner.OnceOutcome
	}{
		{"task failed, at most once", false, func(t *testing.T, s *memlease.Store) {
			wantOutcome(t, "a", runPeriod(t, openLease(t, s, "a"), tick1, runner.Config{}, failed), runner.Ran)
		}, runner.AlreadyRan},
		{"task failed, RetryFailed", true, func(t *testing.T, s *memlease.Store) {
			wantOutcome(t, "a", runPeriod(t, openLease(t, s, "a"), tick1, runner.Config{RetryFailed: true}, failed), runner.Ran)
		}, runner.Ran},
		{"task failed, RetryFailed, then a run of no period", true, func(t *testing.T, s *memlease.Store) {
			wantOutcome(t, "a", runPeriod(t, openLease(t, s, "a"), tick1, runner.Config{RetryFailed: true}, failed), runner.Ran)
			// c, a RunOnce with no period, carries a's period in the record
			// and must not mark it done.
			wantOutcome(t, "c", runPeriod(t, openLease(t, s, "c"), "", runner.Config{}, done), runner.Ran)
		}, runner.Ran},
		{"holder crashed, at most once", false, crash, runner.AlreadyRan},
		{"holder crashed, RetryFailed", true, crash, runner.Ran},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				tc.before(t, store)
				if rec := record(t, store); runner.ScheduleOf(rec.Annotations).Period != tick1 || runner.ScheduleOf(rec.Annotations).Done {
					t.Fatalf("record after the failure: %+v, want period %q, not done", rec, tick1)
				}
				var ranAt time.Time
				began := time.Now()
				res := runPeriod(t, openLease(t, store, "b"), tick1, runner.Config{RetryFailed: tc.retry}, func(context.Context) error {
					ranAt = time.Now()
					return nil
				})
				wantOutcome(t, "b, a later trigger of the same period", res, tc.want)
				if tc.want == runner.Ran && !ranAt.IsZero() && ranAt.Sub(began) > 0 && ranAt.Sub(began) < ttl && !record(t, store).Released {
					t.Errorf("b ran %v after it started, before a crashed holder's lease could lapse", ranAt.Sub(began))
				}
				if tc.want == runner.AlreadyRan && !ranAt.IsZero() {
					t.Error("b ran the task")
				}
				if rec := record(t, store); tc.want == runner.Ran && !runner.ScheduleOf(rec.Annotations).Done {
					t.Errorf("record after b's retry: %+v, want period %q done", rec, tick1)
				}
			})
		})
	}
}

// TestPeriodSecondInstanceWhileRunning: with RetryFailed, an instance
// fired for the period that another is running now is not elected (the
// period is not done yet); without, it already ran.
func TestPeriodSecondInstanceWhileRunning(t *testing.T) {
	for _, retry := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			aDone := make(chan runner.Once)
			go func() {
				aDone <- runPeriod(t, openLease(t, store, "a"), tick1, runner.Config{RetryFailed: retry}, func(ctx context.Context) error {
					advance(time.Hour)
					return nil
				})
			}()
			defer func() { wantOutcome(t, "a", <-aDone, runner.Ran) }()
			advance(time.Second)
			want := runner.AlreadyRan
			if retry {
				want = runner.NotElected
			}
			wantOutcome(t, "b while a runs the period", runPeriod(t, openLease(t, store, "b"), tick1, runner.Config{RetryFailed: retry}, mustNotRun(t)), want)
		})
	}
}

// noKeeper hides the memory lease's Keep, as Azure's lease has none.
type noKeeper struct{ lease.Lease }

// TestMinHold: a task that ends before MinHold keeps other instances out
// until MinHold has passed since it started: on a lease.Keeper by leaving
// the record held for the rest (RunOnce returns at once), otherwise by
// renewing until then.
func TestMinHold(t *testing.T) {
	const minHold, work = 2 * time.Minute, 10 * time.Second
	for _, keeper := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			l := openLease(t, store, "a")
			if !keeper {
				l = noKeeper{l}
			}
			started := time.Now()
			res := runPeriod(t, l, "", runner.Config{MinHold: minHold}, func(context.Context) error {
				advance(work)
				return nil
			})
			took := time.Since(started)
			switch {
			case res.Outcome != runner.Ran:
				t.Fatalf("RunOnce = %+v, want Ran", res)
			case took < minHold || took > minHold+time.Second || !res.Demotion.Released:
				t.Errorf("keeper %t: RunOnce took %v, released %t; want MinHold (%v), then released", keeper, took, res.Demotion.Released, minHold)
			}
			// Every instance fired meanwhile, without a period, is kept out
			// until MinHold has passed since a's task started.
			for time.Since(started) < minHold {
				var ranAt time.Time
				r, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Task: func(context.Context) error { ranAt = time.Now(); return nil }, Logger: quiet, OnceTimeout: 20 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.RunOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				if !ranAt.IsZero() && ranAt.Sub(started) < minHold {
					t.Fatalf("b ran %v after a's task started, within MinHold (%v)", ranAt.Sub(started), minHold)
				}
				advance(10 * time.Second) // b answers at once: the record says a run holds it
			}
		})
	}
}

// TestDuplicateThatMissesTheHoldsRenewals: a trigger that comes during
// another instance's minimum hold is a duplicate even when none of its
// reads falls after one of the hold's renewals (their answers came late,
// its reads were spaced out: sim seed 31352193): it first finds the
// record held after a run and then, before that record could have lapsed,
// finds it released at the hold's end. It gives the lease back and is not
// elected. A trigger whose holder died during its hold (the record lapsed,
// not released) runs once it takes the lease over.
func TestDuplicateThatMissesTheHoldsRenewals(t *testing.T) {
	const minHold = time.Minute
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		started := time.Now()
		ra, err := runner.New(runner.Config{Lease: openLease(t, store, "a"), Task: done, Logger: quiet, MinHold: minHold})
		if err != nil {
			t.Fatal(err)
		}
		aDone := make(chan error, 1)
		go func() {
			_, err := ra.RunOnce(context.Background())
			aDone <- err
		}()
		defer func() {
			if err := <-aDone; err != nil {
				t.Error(err)
			}
		}()
		advance(minHold / 2)
		res, ranAt := duplicate(t, &staleHolds{Lease: openLease(t, store, "b")})
		if !ranAt.IsZero() || res.Outcome != runner.NotElected || res.Holder() != "a" {
			t.Fatalf("b, called %v into a's hold of %v: %v (holder %q), its task ran %v after a's started; want NotElected, a's record, not run", minHold/2, minHold, res.Outcome, res.Holder(), ranAt.Sub(started))
		}
		if rec := record(t, store); rec.Held() {
			t.Errorf("the lease after b gave it back: %+v, want released", rec)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := openLease(t, store, "a")
		tm, err := a.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Renew(context.Background(), tm.Annotate(lease.AnnotationHold, "1")); err != nil {
			t.Fatal(err)
		}
		// a dies during its hold: its record stays held after a run.
		res, ranAt := duplicate(t, openLease(t, store, "b"))
		if ranAt.IsZero() || res.Outcome != runner.Ran {
			t.Fatalf("b, called during the hold of a holder that died: %v, want Ran once the record lapsed", res.Outcome)
		}
	})
}

// duplicate runs a trigger without a period on l and says how it ended
// and when its task ran (zero: it did not).
func duplicate(t *testing.T, l lease.Lease) (runner.Once, time.Time) {
	t.Helper()
	var ranAt time.Time
	r, err := runner.New(runner.Config{Lease: l, Logger: quiet, OnceTimeout: 4 * ttl, Task: func(context.Context) error { ranAt = time.Now(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, ranAt
}

// staleHolds is a Lease whose refusals all show the record as its first
// refusal did: reads that never fall after a renewal of the holder.
type staleHolds struct {
	lease.Lease
	first *lease.Record
}

func (s *staleHolds) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := s.Lease.Acquire(ctx)
	var held *lease.HeldError
	if errors.As(err, &held) {
		if s.first == nil {
			s.first = new(held.Record)
		}
		stale := *held
		stale.Record = *s.first
		return t, &stale
	}
	return t, err
}

func TestRunRefusesOnceFields(t *testing.T) {
	l := openLease(t, memlease.NewStore(), "a")
	for _, cfg := range []runner.Config{{Period: tick1}, {MinHold: time.Minute}} {
		cfg.Lease, cfg.Task, cfg.Logger = l, done, quiet
		r, err := runner.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Run(context.Background()); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("Run with %+v: %v, want lease.ErrInvalid", cfg, err)
		}
	}
	for _, cfg := range []runner.Config{{Period: "10:00 daily"}, {MinHold: -time.Second}, {MinHold: time.Microsecond}} {
		cfg.Lease, cfg.Task = l, done
		if _, err := runner.New(cfg); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("New with Period %q, MinHold %v: %v, want lease.ErrInvalid", cfg.Period, cfg.MinHold, err)
		}
	}
}

// TestPeriodKey: hosts whose triggers fire, or clocks run, up to half a
// period early or less than half a period late get the same key.
func TestPeriodKey(t *testing.T) {
	tick := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		every, offset time.Duration
		tick          time.Time
		want          string
	}{
		{time.Hour, 0, tick, "2026-11-23T10:00:00Z"},
		{15 * time.Minute, 0, tick.Add(45 * time.Minute), "2026-11-23T10:45:00Z"},
		{time.Hour, 30 * time.Minute, tick.Add(30 * time.Minute), "2026-11-23T10:30:00Z"},
		{24 * time.Hour, 2 * time.Hour, time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC), "2026-11-23T02:00:00Z"},
		{time.Minute, 0, time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), "1969-07-20T20:17:00Z"},
		{1500 * time.Millisecond, 0, time.Unix(3, 0), "1970-01-01T00:00:03Z"},
	} {
		for _, skew := range []time.Duration{0, -time.Second, 3 * time.Second, -tc.every / 2, tc.every/2 - time.Nanosecond} {
			if skew < -tc.every/2 || skew >= tc.every/2 {
				continue // beyond the tolerance, for the shortest period
			}
			at := tc.tick.Add(skew).In(time.FixedZone("host", 3600))
			if got := runner.PeriodKey(at, tc.every, tc.offset); got != tc.want {
				t.Errorf("PeriodKey(tick %v %+v, every %v, offset %v) = %q, want %q", tc.tick, skew, tc.every, tc.offset, got, tc.want)
			}
		}
		if got := runner.PeriodKey(tc.tick.Add(tc.every/2), tc.every, tc.offset); got == tc.want {
			t.Errorf("PeriodKey half a period late (%v) = %q, the same tick: want the next", tc.every/2, got)
		}
		if got := runner.PeriodKey(tc.tick.Add(-tc.every/2-time.Nanosecond), tc.every, tc.offset); got == tc.want {
			t.Errorf("PeriodKey over half a period early = %q, the same tick: want the one before", got)
		}
	}
}

// TestRunEndsHeld: once the task has returned, RunOnce writes the period
// done (RetryFailed) and the hold into the record at once, keeps the
// record held through MinHold although writes fail for a while and the
// stall watchdog would have fired, and only then releases it (rule 13;
// findings 3-5 of the engine review: a failed Keep, a hold cut short by
// the health watch, a done mark written only when the hold ends).
func TestRunEndsHeld(t *testing.T) {
	const minHold, work = time.Minute, 5 * time.Second
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		started := time.Now()
		done := make(chan runner.Once, 1)
		go func() {
			done <- runPeriod(t, openLease(t, store, "a"), tick1, runner.Config{MinHold: minHold, RetryFailed: true, StallTimeout: 2 * time.Second},
				func(ctx context.Context) error {
					for range 5 {
						runner.Progress(ctx)
						advance(work / 5)
					}
					return nil
				})
		}()
		advance(work + time.Millisecond)
		if rec := record(t, store); !runner.ScheduleOf(rec.Annotations).Done || !runner.ScheduleOf(rec.Annotations).Hold || rec.Released {
			t.Fatalf("record just after the task returned: %+v, want the period done and the hold written at once", rec)
		}
		store.FailNext("a", 3) // the next writes of the hold fail: retried within the deadline
		for time.Since(started) < minHold-renewInterval {
			var ranAt time.Time
			r, err := runner.New(runner.Config{Lease: openLease(t, store, "b"), Task: func(context.Context) error { ranAt = time.Now(); return nil }, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.RunOnce(context.Background())
			if err != nil || res.Outcome != runner.NotElected || !ranAt.IsZero() {
				t.Fatalf("b fired %v into a's hold: %+v, %v; want NotElected", time.Since(started), res, err)
			}
			advance(ttl)
		}
		res := <-done
		if res.Outcome != runner.Ran || !res.Demotion.Released || time.Since(started) < minHold {
			t.Fatalf("RunOnce = %+v after %v, want Ran, released once MinHold (%v) had passed", res, time.Since(started), minHold)
		}
		if rec := record(t, store); !runner.ScheduleOf(rec.Annotations).Done || runner.ScheduleOf(rec.Annotations).Hold || !rec.Released {
			t.Errorf("record after the hold: %+v, want released, the period done, no hold", rec)
		}
	})
}

// TestTwoRunnersOnOneLease: two Runners sharing one Lease value never lead
// at once (finding 2 of the engine review: the second took over the
// first's live record as its own).
func TestTwoRunnersOnOneLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		l := openLease(t, store, "a")
		start(t, runner.Config{Lease: l, Task: j.task("a")})
		start(t, runner.Config{Lease: l, Task: j.task("a")})
		advance(10 * ttl)
		j.checkSafety(t)
	})
}

// TestHoldNotInherited: a minimum hold is its holder's. A runner that
// acquires a record still marked held after a run (released by a program
// of its own, or broken) drops the mark with its first renewal, so that
// nobody takes its live tenure for a hold.
func TestHoldNotInherited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := openLease(t, store, "a")
		ta, err := a.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Release(context.Background(), ta.Annotate(lease.AnnotationHold, "1")); err != nil {
			t.Fatal(err)
		}
		var during runner.Schedule
		res := runPeriod(t, openLease(t, store, "b"), "", runner.Config{}, func(context.Context) error {
			advance(renewInterval + time.Second)
			during = runner.ScheduleOf(record(t, store).Annotations)
			return nil
		})
		wantOutcome(t, "b, after a record left marked held", res, runner.Ran)
		if during.Hold {
			t.Error("b's record, a renewal into its task, is marked held after a run")
		}
	})
}

// TestPeriodMarkLivesInTheRecordOnly pins what at most once per period
// rests on (runner's package doc, "What it does not guarantee"): the lease
// record is the only place the period is remembered. A restore of the
// record to any version written since the period's mark keeps the period
// from running again; a restore to a version from before the mark, or a
// delete, loses it, and a fresh process, which has nothing but the record
// to go by, runs the period a second time: what it reads is exactly what
// it would read had the period never run (red team #10, rule 13). With
// RetryFailed, a restore to the mark written while the task ran makes a
// run that succeeded look unfinished, and it runs again.
func TestPeriodMarkLivesInTheRecordOnly(t *testing.T) {
	const tick0 = "2026-11-23T09:00:00Z"
	for _, tc := range []struct {
		name  string
		retry bool
		fault func(store *memlease.Store, before, marked, after []byte)
		want  runner.OnceOutcome
	}{
		{"restored to the mark, written as the task started", false,
			func(s *memlease.Store, _, marked, _ []byte) { s.Put("job", marked) }, runner.AlreadyRan},
		{"restored to the release after the run", true,
			func(s *memlease.Store, _, _, after []byte) { s.Put("job", after) }, runner.AlreadyRan},
		{"restored to a version from before the mark: runs again", false,
			func(s *memlease.Store, before, _, _ []byte) { s.Put("job", before) }, runner.Ran},
		{"deleted: runs again", false,
			func(s *memlease.Store, _, _, _ []byte) { s.Delete("job") }, runner.Ran},
		{"RetryFailed, restored to the mark: a run that succeeded runs again", true,
			func(s *memlease.Store, _, marked, _ []byte) { s.Put("job", marked) }, runner.Ran},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				cfg := runner.Config{RetryFailed: tc.retry}
				wantOutcome(t, "a, the period before", runPeriod(t, openLease(t, store, "a"), tick0, cfg, done), runner.Ran)
				before, _ := store.Bytes("job")
				advance(time.Hour)
				var marked []byte
				wantOutcome(t, "a, the period", runPeriod(t, openLease(t, store, "a"), tick1, cfg, func(context.Context) error {
					marked, _ = store.Bytes("job")
					return nil
				}), runner.Ran)
				after, _ := store.Bytes("job")
				tc.fault(store, before, marked, after)
				advance(time.Minute) // a duplicate trigger of the period, in a fresh process
				got := runPeriod(t, openLease(t, store, "b"), tick1, cfg, done)
				wantOutcome(t, "b, a duplicate of the period after the record's "+tc.name, got, tc.want)
			})
		})
	}
}

// TestCompletedBeforeTheStop: a RunOnce task whose work finished before it
// was told to stop, but that returns only after its context ended (it
// still waits for a child's output, say), calls Completed: it has run to
// its end (Ran), its period is done, and a RetryFailed trigger of the same
// period does not run it again. A task that does not call it, returning
// in the same way, was stopped (SteppedDown), its period not done.
func TestCompletedBeforeTheStop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		completed bool
		want      runner.OnceOutcome
	}{
		{"Completed", true, runner.Ran},
		{"not Completed", false, runner.SteppedDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				ctx, stop := context.WithCancel(context.Background())
				defer stop()
				r, err := runner.New(runner.Config{Lease: openLease(t, store, "a"), Period: tick1, RetryFailed: true, Logger: quiet,
					Task: func(ctx context.Context) error {
						advance(time.Second) // the work, done
						stop()               // the stop comes while the task still winds up
						<-ctx.Done()
						if tc.completed {
							runner.Completed(ctx)
						}
						return nil
					}})
				if err != nil {
					t.Fatal(err)
				}
				res, err := r.RunOnce(ctx)
				if err != nil {
					t.Fatal(err)
				}
				wantOutcome(t, "a, stopped after its work finished", res, tc.want)
				if rec := record(t, store); runner.ScheduleOf(rec.Annotations).Done != tc.completed || !rec.Released {
					t.Errorf("record after a's run: %+v, want period %q done %v, released", rec, tick1, tc.completed)
				}
				var again runner.Once
				if tc.completed {
					again = runPeriod(t, openLease(t, store, "b"), tick1, runner.Config{RetryFailed: true}, mustNotRun(t))
				} else {
					again = runPeriod(t, openLease(t, store, "b"), tick1, runner.Config{RetryFailed: true}, done)
				}
				if want := map[bool]runner.OnceOutcome{true: runner.AlreadyRan, false: runner.Ran}[tc.completed]; again.Outcome != want {
					t.Errorf("b, a RetryFailed trigger of the same period: %+v, want %v", again, want)
				}
			})
		})
	}
}

// TestCompletedOutsideATask: Completed on a context that is no task's does
// nothing (and does not panic).
func TestCompletedOutsideATask(t *testing.T) {
	runner.Completed(context.Background())
}
