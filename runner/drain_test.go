package runner_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// drainTask is a leader task that, once its context is cancelled, takes
// finish to return, as a child process given a grace period does. It
// records what it saw meanwhile.
type drainTask struct {
	finish time.Duration

	cancelledAt, returnedAt shared[time.Time]
	sentAtCancel, lastSent  shared[time.Time]
	renewalsDoneAt          shared[time.Time]
	expiryAtDone            shared[time.Time]
}

func (d *drainTask) run(ctx context.Context) error {
	<-ctx.Done()
	d.cancelledAt.set(time.Now())
	lt, _ := runner.Term(ctx)
	d.sentAtCancel.set(lt.Sent)
	finished := time.After(d.finish)
	done := runner.RenewalsDone(ctx)
	for done != nil {
		select {
		case <-done:
			d.renewalsDoneAt.set(time.Now())
			d.expiryAtDone.set(runner.Expiry(ctx))
			done = nil
		case <-finished:
			lt, _ := runner.Term(ctx)
			d.lastSent.set(lt.Sent)
			d.returnedAt.set(time.Now())
			return nil
		}
	}
	<-finished
	lt, _ = runner.Term(ctx)
	d.lastSent.set(lt.Sent)
	d.returnedAt.set(time.Now())
	return nil
}

// TestDrainKeepsLeaseRenewedUntilTaskReturns checks Config.DrainTimeout: on
// a voluntary step-down the task's context is cancelled at once, but the
// lease stays held and renewed until the task returns, so no follower
// takes over meanwhile; it is released only after the task returned.
func TestDrainKeepsLeaseRenewedUntilTaskReturns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reason runner.Reason
	}{
		{"stopped", runner.Stopped},
		{"unhealthy", runner.Unhealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				l := openLease(t, store, "a")
				j := newJournal()
				task := &drainTask{finish: 2 * ttl} // long past the TTL
				var sick shared[bool]
				var released shared[time.Time]
				stop := start(t, runner.Config{
					Lease:        l,
					Task:         task.run,
					DrainTimeout: time.Minute,
					HealthCheck: func(context.Context) error {
						if sick.get() {
							return errors.New("sick")
						}
						return nil
					},
					CoolDown: time.Hour,
					OnDemoted: func(d runner.Demotion) {
						released.set(time.Now())
						j.demoted("a")(d)
					},
				})
				advance(time.Second)
				start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
				stopped := make(chan error, 1)
				if tc.reason == runner.Stopped {
					go func() { stopped <- stop() }()
				} else {
					sick.set(true)
				}
				synctest.Wait()
				advance(ttl + renewInterval) // the task is still finishing
				rec, err := l.Observe(context.Background())
				if err != nil || rec.Holder != "a" || rec.Released {
					t.Fatalf("while draining the record is %+v (%v), want held by a", rec, err)
				}
				if j.leader() == "b" {
					t.Fatal("b took over while a was draining")
				}
				advance(2 * ttl)
				if tc.reason == runner.Stopped {
					<-stopped
				}

				cancelled, returned := task.cancelledAt.get(), task.returnedAt.get()
				if cancelled.IsZero() || returned.Sub(cancelled) != task.finish {
					t.Fatalf("task cancelled at %v, returned at %v: want it to take %v", cancelled, returned, task.finish)
				}
				if renewed := task.lastSent.get().Sub(task.sentAtCancel.get()); renewed < task.finish-renewInterval {
					t.Errorf("while draining the renewals advanced Sent by %v, want about %v", renewed, task.finish)
				}
				if done := task.renewalsDoneAt.get(); !done.IsZero() {
					t.Errorf("renewals ended at %v while the task ran until %v", done, returned)
				}
				d := j.demotionsOf("a")
				if len(d) != 1 || d[0].Reason != tc.reason || !d[0].Released {
					t.Fatalf("demotions of a = %+v, want one %v, released", d, tc.reason)
				}
				if released.get().Before(returned) {
					t.Fatalf("released at %v, before the task returned at %v", released.get(), returned)
				}
			})
		})
	}
}

// TestLeaseLossDuringDrainEndsRenewalsAtOnce: a drain cannot keep a lost
// lease. The renewals stop when a renewal finds the lease lost, the task
// learns it through RenewalsDone and Expiry, and nothing is released.
func TestLeaseLossDuringDrainEndsRenewalsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		l := openLease(t, store, "a")
		j := newJournal()
		task := &drainTask{finish: time.Minute}
		stop := start(t, runner.Config{Lease: l, Task: task.run, DrainTimeout: 2 * time.Minute, OnDemoted: j.demoted("a")})
		advance(time.Second)
		go func() { _ = stop() }()
		advance(2 * time.Second)
		intruder := driver.EncodeJSON(lease.Record{Holder: "intruder", Token: 99, TTL: ttl, Nonce: "x"})
		store.Put("job", intruder)
		lostBy := time.Now().Add(renewInterval)
		advance(2 * time.Minute)

		done := task.renewalsDoneAt.get()
		if done.IsZero() || done.After(lostBy) {
			t.Fatalf("renewals ended at %v, want by the next renewal at %v", done, lostBy)
		}
		if got := task.expiryAtDone.get(); !got.Equal(done) {
			t.Errorf("Expiry after the loss = %v, want the moment it was found (%v)", got, done)
		}
		d := j.demotionsOf("a")
		if len(d) != 1 || d[0].Reason != runner.Stopped || d[0].Released {
			t.Fatalf("demotions of a = %+v, want one Stopped, not released", d)
		}
		if got, _ := store.Bytes("job"); string(got) != string(intruder) {
			t.Fatalf("the intruder's record was overwritten: %s", got)
		}
	})
}

// TestRenewDeadlineDuringDrainEndsRenewals: a drain that cannot renew
// still ends at Sent+RenewDeadline, and Expiry then tells the task the
// last instant the lease may still be its own.
func TestRenewDeadlineDuringDrainEndsRenewals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		task := &drainTask{finish: time.Minute}
		stop := start(t, runner.Config{Lease: openLease(t, store, "a"), Task: task.run, DrainTimeout: 2 * time.Minute})
		advance(time.Second)
		go func() { _ = stop() }()
		advance(renewInterval)
		store.Hang("a")
		advance(2 * time.Minute)

		done, lastSent := task.renewalsDoneAt.get(), task.lastSent.get()
		if got := done.Sub(lastSent); got != renewDeadline {
			t.Fatalf("renewals ended %v after the last successful one was sent, want RenewDeadline (%v)", got, renewDeadline)
		}
		if got := task.expiryAtDone.get(); !got.Equal(lastSent.Add(ttl - renewInterval)) {
			t.Fatalf("Expiry = %v, want the last renewal's Sent+TTL (%v)", got, lastSent.Add(ttl))
		}
	})
}

// TestDrainTimeoutBoundsTheDrain: a task that does not return keeps the
// lease renewed only for DrainTimeout; then the lease lapses and a follower
// takes over, and the late release does not touch the new holder's record.
func TestDrainTimeoutBoundsTheDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		task := &drainTask{finish: 3 * time.Minute}
		const drain = 20 * time.Second
		stop := start(t, runner.Config{Lease: openLease(t, store, "a"), Task: task.run, DrainTimeout: drain, OnDemoted: j.demoted("a")})
		advance(time.Second)
		var tookOver shared[time.Time]
		start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b"),
			OnElected: func(lease.Term) { tookOver.set(time.Now()) }})
		go func() { _ = stop() }()
		advance(4 * time.Minute)

		cancelled, done := task.cancelledAt.get(), task.renewalsDoneAt.get()
		if got := done.Sub(cancelled); got != drain {
			t.Fatalf("renewals ended %v after the task was cancelled, want DrainTimeout (%v)", got, drain)
		}
		if took := tookOver.get(); took.IsZero() || took.Before(task.expiryAtDone.get()) {
			t.Fatalf("b took over at %v, want after the drained lease expired at %v", took, task.expiryAtDone.get())
		}
		if d := j.demotionsOf("a"); len(d) != 1 || d[0].Released {
			t.Fatalf("demotions of a = %+v, want one, not released (b holds the lease)", d)
		}
		if j.leader() != "b" {
			t.Fatalf("leader is %q, want b", j.leader())
		}
	})
}

// TestWithoutDrainRenewalsEndWithTheTaskContext: the default keeps the
// old behaviour, and RenewalsDone tells the task so.
func TestWithoutDrainRenewalsEndWithTheTaskContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		task := &drainTask{finish: 5 * time.Second}
		stop := start(t, runner.Config{Lease: openLease(t, memlease.NewStore(), "a"), Task: task.run})
		advance(time.Second)
		go func() { _ = stop() }()
		advance(time.Minute)
		if c, d := task.cancelledAt.get(), task.renewalsDoneAt.get(); d.IsZero() || !d.Equal(c) {
			t.Fatalf("renewals ended at %v, want when the task was cancelled (%v)", d, c)
		}
	})
}

func TestOnRenewReportsEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		type call struct {
			took time.Duration
			err  error
		}
		var calls shared[[]call]
		start(t, runner.Config{
			Lease: openLease(t, store, "a"),
			Task:  func(ctx context.Context) error { <-ctx.Done(); return nil },
			OnRenew: func(took time.Duration, err error) {
				calls.update(func(c *[]call) { *c = append(*c, call{took, err}) })
			},
		})
		advance(time.Second)
		store.Delay("a", 2*time.Second)
		advance(renewInterval) // one slow renewal
		store.Heal("a")
		store.FailNext("a", 2)
		advance(renewInterval + 2*time.Second) // from the slow one's answer: two failures, then a success

		got := calls.get()
		if len(got) < 3 {
			t.Fatalf("OnRenew called %d times (%+v), want a slow success, failures, a success", len(got), got)
		}
		if got[0].took != 2*time.Second || got[0].err != nil {
			t.Errorf("first renewal reported %+v, want 2s and no error", got[0])
		}
		for i, c := range got[1 : len(got)-1] {
			if !errors.Is(c.err, lease.ErrUnavailable) {
				t.Errorf("renewal %d reported %v, want ErrUnavailable", i+2, c.err)
			}
		}
		if last := got[len(got)-1]; last.err != nil {
			t.Errorf("the retry reported %v, want success", last.err)
		}
	})
}
