//go:build unix

package main

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// idler is a lease whose Idle counts its calls (lease.Idler).
type idler struct {
	lease.Lease
	calls int
}

func (i *idler) Idle(context.Context, time.Time) { i.calls++ }

// TestRedTeam21MinHoldIdles: run --once --min-hold wraps the lease in
// heldLease, which embedded lease.Lease and did not pass Idle on (red team
// 15 foresaw it: every optional interface the runner looks for is lost to
// the wrapper), so a quorum's runner never read the members its term does
// not hold between its writes, and a member back from an outage was never
// held again, while the command ran or during the hold: a second member's
// outage, again a minority's, then ended the hold (RT19-3, fixed in the
// runner, open again through the CLI: with runner.RunOnce over a
// heldLease, TestRedTeam19HoldTakesMembersBack's schedule let b take the
// lease 18 s into a's 60 s hold).
func TestRedTeam21MinHoldIdles(t *testing.T) {
	l, err := memlease.Default.Open(memName("rt21-idle"), lease.Options{Identity: "a", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	inner := &idler{Lease: l}
	held, ok := lease.Lease(&heldLease{Lease: inner}).(lease.Idler)
	if !ok {
		t.Fatal("the --min-hold wrapper of a lease.Idler is no lease.Idler: the runner sleeps between writes instead")
	}
	held.Idle(t.Context(), time.Now())
	if inner.calls != 1 {
		t.Errorf("the --min-hold wrapper's Idle called the lease's %d times, want once", inner.calls)
	}
}
