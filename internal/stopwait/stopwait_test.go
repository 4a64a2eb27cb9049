package stopwait

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

func TestKillDeadline(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name             string
		graceEnd, expiry time.Time
		margin           time.Duration
		want             time.Time
	}{
		{"grace ends first", t0.Add(10 * time.Second), t0.Add(15 * time.Second), time.Second, t0.Add(10 * time.Second)},
		{"the lease expires first", t0.Add(10 * time.Second), t0.Add(5 * time.Second), time.Second, t0.Add(4 * time.Second)},
		{"lost: expired already", t0.Add(10 * time.Second), t0, time.Second, t0.Add(-time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KillDeadline(tc.graceEnd, tc.expiry, tc.margin); !got.Equal(tc.want) {
				t.Fatalf("killDeadline = %v, want %v", got.Sub(t0), tc.want.Sub(t0))
			}
		})
	}
}

// stuckRenewals is a holder's lease whose renewals hang until stuck
// closes, whatever their context says: a renewal still in flight.
type stuckRenewals struct {
	lease.Lease
	stuck <-chan struct{}
}

func (s stuckRenewals) Renew(context.Context, lease.Term) (lease.Term, error) {
	<-s.stuck
	return lease.Term{}, fmt.Errorf("%w: stuck", lease.ErrUnavailable)
}

// TestRenewingEndsAtTheRenewDeadline: Renewing is true while the term
// leads, and false once its renew deadline has passed, also while a
// renewal is still in flight (the term's RenewalsDone not yet closed):
// past the deadline no renewal moves the expiry (4099bcb: the SIGTERM's
// log said kill_within after the renewals had stopped).
func TestRenewingEndsAtTheRenewDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := memlease.NewStore().Open("job", lease.Options{Identity: "a", TTL: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		stuck := make(chan struct{})
		var leading, stepped bool
		r, err := runner.New(runner.Config{Lease: stuckRenewals{l, stuck}, Logger: slog.New(slog.DiscardHandler),
			Task: func(ctx context.Context) error {
				leading = Renewing(ctx)
				<-ctx.Done() // the renew deadline: the first renewal hangs
				stepped = Renewing(ctx)
				close(stuck)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !leading || stepped {
			t.Errorf("Renewing: %t while leading, %t past the renew deadline with a renewal in flight; want true, false", leading, stepped)
		}
	})
}
