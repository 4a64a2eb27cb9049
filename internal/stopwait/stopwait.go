// Package stopwait is when leasehold run kills a command whose term ended:
// the wait between SIGTERM and SIGKILL, bounded by the grace period and by
// every lease the term rests on.
//
// It lives apart from the CLI (package main, which nothing can import) so
// that the shard simulation stops its shard functions with the very code
// the CLI's supervisor runs: a fault in this bound (a command outliving the
// lease its shard's ownership rests on) is found there by seed.
package stopwait

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/runner"
)

// Wait waits while the command of a term whose context ctx was cancelled
// stops, and reports whether it stopped by itself (exited closed) before it
// must be killed. It must be killed at graceEnd, or margin before
// runner.Expiry(ctx), whichever comes first (KillDeadline). The expiry is
// the earliest of every lease the term rests on (a shard's: the worker's
// liveness, and the assigner lease while the worker is the group's
// assigner) and is recomputed whenever runner.RenewalsDone(ctx) closes:
// while the runner drains a voluntary step-down, renewals push it on and
// the grace period decides; once a lease is lost, or its renewals stopped
// at the renew deadline, it does. A close of hurry (nil: never) moves
// graceEnd to now. begin, when not nil, is called once, on a goroutine of
// its own as the first wait starts, with the kill deadline as it stands
// then (the CLI sends SIGTERM then, and logs when the kill comes); not at
// all when the kill is due at once. The wait does not wait for begin: the
// kill deadline is an instant, whatever begin takes, and begin may still
// run when Wait returns.
func Wait(ctx context.Context, graceEnd time.Time, margin time.Duration, exited, hurry <-chan struct{}, begin func(kill time.Time)) bool {
	renewalsDone := runner.RenewalsDone(ctx)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		kill := KillDeadline(graceEnd, runner.Expiry(ctx), margin)
		wait := time.Until(kill)
		if wait <= 0 {
			return false
		}
		timer.Reset(wait)
		if begin != nil {
			// Beside the wait, not before it: whatever begin takes (a
			// SIGTERM, its log line, walks of the process table) does
			// not push the kill past the deadline (red team 14).
			go begin(kill)
			begin = nil
		}
		select {
		case <-exited:
			return true
		case <-timer.C:
		case <-renewalsDone:
			// The expiry moved back or is final: recompute. A shard's
			// context rests on two leases when its worker is the
			// assigner (runner.Joint): watch the one still renewing.
			if next := runner.RenewalsDone(ctx); next != renewalsDone {
				renewalsDone = next
			} else {
				renewalsDone = nil
			}
		case <-hurry:
			hurry, graceEnd = nil, time.Now()
		}
	}
}

// Renewing reports whether a lease the term of ctx rests on is still
// renewed, so that runner.Expiry(ctx), and the kill deadline with it, may
// still move on; false once the renewals of every one have stopped, and
// the expiry is final.
func Renewing(ctx context.Context) bool {
	if !time.Now().Before(runner.Deadline(ctx)) {
		return false // past the renew deadline no renewal moves the expiry, even one still retried
	}
	done := runner.RenewalsDone(ctx)
	select {
	case <-done:
		// A Joint context replaces a closed channel while one of its
		// terms still renews.
		return runner.RenewalsDone(ctx) != done
	default:
		return true
	}
}

// KillDeadline is when a command gets SIGKILL: at the end of its grace
// period, or margin before the lease may be someone else's (expiry),
// whichever comes first.
func KillDeadline(graceEnd, expiry time.Time, margin time.Duration) time.Time {
	if hard := expiry.Add(-margin); hard.Before(graceEnd) {
		return hard
	}
	return graceEnd
}
