package stopwait

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam14KillDeadlineAfterASlowBegin (rules 12, 14): Wait computed
// the wait to the kill deadline, called begin (the CLI's SIGTERM: a log
// line on stderr and two walks of the process table), and only then armed
// its timer with the wait computed before begin. Whatever begin took was
// added to the kill: a leader cut off from its store steps down at its
// renew deadline, begin takes 1s (a log pipe that is slow to drain, a
// large process table), and the SIGKILL came 1s after the deadline Wait
// itself promises, past the lease's expiry, when another contender may
// already lead. The deadline is an instant: Wait now arms its timer first
// and runs begin beside the wait.
func TestRedTeam14KillDeadlineAfterASlowBegin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl, margin, beginTook = 15 * time.Second, 469 * time.Millisecond, time.Second
		store := memlease.NewStore()
		l, err := store.Open("job", lease.Options{Identity: "a", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		type result struct{ due, killed, expiry time.Time }
		out := make(chan result, 1)
		r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler), Task: func(ctx context.Context) error {
			store.Partition("a") // cut off: the renewals fail until the renew deadline
			<-ctx.Done()
			graceEnd := time.Now().Add(time.Minute)
			var due time.Time
			begun := make(chan struct{}) // begin may run beside the wait, and past it
			Wait(ctx, graceEnd, margin, nil, nil, func(time.Time) {
				defer close(begun)
				due = KillDeadline(graceEnd, runner.Expiry(ctx), margin)
				time.Sleep(beginTook)
			})
			killed := time.Now()
			<-begun
			out <- result{due, killed, runner.Expiry(ctx)}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(ctx) }()
		got := <-out
		cancel()
		store.Heal("a")
		<-done
		if got.killed.After(got.due) {
			t.Errorf("the kill was due %v before the lease's expiry; it came %v after it (%v late: begin took %v)",
				got.expiry.Sub(got.due), got.killed.Sub(got.expiry), got.killed.Sub(got.due), beginTook)
		}
	})
}
