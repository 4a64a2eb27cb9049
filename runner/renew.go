package runner

import (
	"context"
	"errors"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/leasehold/leasehold/lease"
)

// keepRenewing renews the term RenewInterval after each successful
// renewal returned (the first at once when Config.Annotate changed the
// term's annotations), until ctx ends (see renewUntil), retrying failures
// with backoff. When a renewal finds the lease lost or unrenewable, or when
// no renewal succeeded by RenewDeadline after the last successful one was
// due (a timer, which fires even while a renewal hangs), it ends the term
// with that cause and reports that the renewals are over (leadership.fail). It
// returns only when no renewal is in flight, so none can land after the
// release, and then closes the term's RenewalsDone channel.
//
// A renewal counts from when it was sent, or from when it was due (when
// the previous one was sent, plus RenewInterval), whichever is earlier:
// the term's Sent is set to that. So a holder whose renewals come late, and a
// write a restore hid, cannot keep it leading past the end of a follower's
// count, which may have started as early as one renew interval before the
// holder's latest write (see lease/driver's package doc).
func (r *Runner) keepRenewing(ctx context.Context, st *leadership, stopTerm context.CancelCauseFunc) {
	defer close(st.renewalsDone)
	t, acked := st.get(), time.Now()
	sent := t.Sent // when t's request was sent; t.Sent may be set earlier
	stepDownTimer := time.AfterFunc(time.Until(st.stepDownAt()), func() {
		st.fail(stopTerm, &stepDown{reason: DeadlinePassed})
	})
	defer stepDownTimer.Stop()
	wait := r.cfg.RenewInterval
	if st.annotated {
		wait = 0
	}
	for {
		ctxtime.Sleep(ctx, time.Until(acked.Add(wait)))
		wait = r.cfg.RenewInterval
		if ctx.Err() != nil {
			return
		}
		rctx, cancel := context.WithDeadline(ctx, st.stepDownAt())
		nt, err := r.renew(rctx, t)
		cancel()
		if err == nil { // the term moved on, even if the renewals are over
			due := sent.Add(r.cfg.RenewInterval)
			acked, sent = time.Now(), nt.Sent
			if sent.After(due) {
				nt.Sent = due
			}
			t = nt
			st.set(t)
			stepDownTimer.Reset(time.Until(st.stepDownAt()))
		}
		switch {
		case errors.Is(err, lease.ErrLost) || err != nil && !lease.Retryable(err):
			st.setLost()
			r.cfg.Logger.Warn("renewal found the lease lost", "token", t.Token, "err", err)
			st.fail(stopTerm, &stepDown{reason: LeaseLost, err: err})
			return
		case ctx.Err() != nil:
			return
		case err != nil: // retried until the renew deadline
			st.fail(stopTerm, &stepDown{reason: DeadlinePassed, err: err})
			return
		}
	}
}

// renew renews t, retrying what may pass with exponential backoff until ctx
// (bounded by the renew deadline) ends, and reports each attempt to
// OnRenew.
func (r *Runner) renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	window := r.cfg.RenewDeadline - r.cfg.RenewInterval
	b := spreadBackOff{backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(window/20),
		backoff.WithMaxInterval(window/4),
		backoff.WithMaxElapsedTime(0),
		backoff.WithRandomizationFactor(0),
	), r.rand}
	return backoff.RetryNotifyWithData(func() (lease.Term, error) {
		began := time.Now()
		nt, err := r.cfg.Lease.Renew(ctx, t)
		if r.cfg.OnRenew != nil {
			r.cfg.OnRenew(time.Since(began), err)
		}
		if err != nil && (errors.Is(err, lease.ErrLost) || !lease.Retryable(err)) {
			return nt, backoff.Permanent(err)
		}
		return nt, err
	}, backoff.WithContext(b, ctx), func(err error, wait time.Duration) {
		r.cfg.Logger.Warn("renew failed; retrying", "token", t.Token, "err", err, "retry_in", wait)
	})
}

// spreadBackOff spreads its exponential backoff's waits at random by
// backoff.DefaultRandomizationFactor (each between half and one and a
// half times the interval), as the backoff would itself, but draws from
// the runner's Config.Rand rather than from math/rand's global source.
type spreadBackOff struct {
	*backoff.ExponentialBackOff
	rand *rand.Rand
}

func (b spreadBackOff) NextBackOff() time.Duration {
	d := b.ExponentialBackOff.NextBackOff()
	if d == backoff.Stop {
		return d
	}
	f := backoff.DefaultRandomizationFactor
	return time.Duration(float64(d) * (1 - f + 2*f*b.rand.Float64()))
}
