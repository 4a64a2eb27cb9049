package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
)

// idle waits until the next renewal is due, or ctx ends: in the lease's
// Idle when it is a lease.Idler (a quorum reads the members its term does
// not hold, to take them back), asleep otherwise. It sleeps the rest of
// the wait when Idle returns early, as lease.Idler allows: two writes of
// a term must land at least a renew interval apart (keepRenewing; red
// team 20).
func (r *Runner) idle(ctx context.Context, until time.Time) {
	if l, ok := r.cfg.Lease.(lease.Idler); ok && time.Now().Before(until) {
		l.Idle(ctx, until)
	}
	ctxtime.Sleep(ctx, time.Until(until))
}

// keepRenewing renews the term RenewInterval after each successful
// renewal returned (the first at once when Config.Annotate changed the
// term's annotations), never sooner: two writes of a term then land at
// least a renew interval apart, so that a follower, whose reads are no
// further apart, cannot miss two of them hidden by a restore (lease/driver's
// package doc; red team 11 showed two leaders when renewals went a renew
// interval after the previous was sent, a late landing between). It runs until ctx
// ends (see renewUntil), retrying failures
// with backoff. When a renewal finds the lease lost or unrenewable, or when
// no renewal succeeded by RenewDeadline after the last successful one
// counts from (a timer, which fires even while a renewal hangs), it ends
// the term with that cause and reports that the renewals are over
// (leadership.fail). It returns only when no renewal is in flight, so none
// can land after the release, and then closes the term's RenewalsDone
// channel. Each renewal is a write of the term (write): it counts from
// when it was sent or was due, whichever is earlier.
func (r *Runner) keepRenewing(ctx context.Context, st *leadership, stopTerm context.CancelCauseFunc) {
	defer close(st.renewalsDone)
	tn, acked := st.tenure(), time.Now()
	stepDownTimer := time.AfterFunc(time.Until(st.stepDownAt()), func() {
		st.fail(stopTerm, &stepDown{reason: DeadlinePassed})
	})
	defer stepDownTimer.Stop()
	wait := r.cfg.RenewInterval
	if st.annotated {
		wait = 0
	}
	for {
		r.idle(ctx, acked.Add(wait))
		wait = r.cfg.RenewInterval
		if ctx.Err() != nil {
			return
		}
		ntn, err := r.write(ctx, tn, tn.term, st.stepDownAt())
		tn = ntn // a renewal left unanswered is noted (tenure.unsure) for the writes after the task
		st.set(tn)
		if err == nil { // the term moved on, even if the renewals are over
			acked = time.Now()
			stepDownTimer.Reset(time.Until(st.stepDownAt()))
		}
		switch {
		case errors.Is(err, lease.ErrLost) || err != nil && !lease.Retryable(err):
			st.setLost()
			// The term ends first, logged after: a Logger may block (a
			// stalled stderr), and the task must stop whatever it does.
			st.fail(stopTerm, &stepDown{reason: LeaseLost, err: err})
			r.cfg.Logger.Warn("renewal found the lease lost", "token", tn.term.Token, "err", err)
			return
		case ctx.Err() != nil:
			return
		case err != nil: // retried until the renew deadline
			st.fail(stopTerm, &stepDown{reason: DeadlinePassed, err: err})
			return
		}
	}
}

// tenure is a term as its latest successful write (its acquisition, or
// write's) left it: term, whose Sent is when that write counts from, and
// sent, when that write was in fact sent, from which the next write's
// count is clamped (see next). unsure is when the earliest write of the
// term sent since then whose outcome is unknown was sent (zero if none):
// it may have landed unanswered, and then holds the record for a TTL
// after it was sent (see resolve). at is the version at which resolve
// last found the record moved on from term's write ("" if it has not).
//
// base is when the term's write that a restore may put back at the
// earliest was sent (see releasable), and recent the term's writes
// answered since that one's, base's among them, with tn's last. resumed
// is when the term's latest write that vouched for none before it was
// answered (see next; zero if none).
type tenure struct {
	term    lease.Term
	sent    time.Time
	base    time.Time
	recent  []stamp
	resumed time.Time
	unsure  time.Time
	at      string
}

// stamp is when a write of a term was sent and when it was answered (or
// found landed by a read).
type stamp struct{ sent, answered time.Time }

// tenureOf is the tenure of a term as Acquire returned it.
func tenureOf(t lease.Term) tenure {
	return tenure{term: t, sent: t.Sent, base: t.Sent, recent: []stamp{{t.Sent, time.Now()}}}
}

// next is the tenure that a write of t sent at sent leaves after tn: it
// counts from when it was sent or when it was due (RenewInterval after
// tn's write was sent), whichever is earlier.
func (tn tenure) next(t lease.Term, sent time.Time, renewInterval time.Duration) tenure {
	if due := tn.sent.Add(renewInterval); sent.After(due) {
		t.Sent = due
	} else {
		t.Sent = sent
	}
	// A follower that never saw the writes a restore hid read the body it
	// put back within a renew interval before this write landed, so that
	// body is no older than the latest write answered a renew interval
	// before this one was sent; unless this write came too late to say
	// so: answered more than a TTL after the earliest body it would vouch
	// for was sent, it may have landed only after a follower had taken
	// that body over, every write since hidden, and a second restore put
	// the body this write was conditional on back under that successor
	// (sim seed 5000047489). It vouches for none: the bodies before it
	// stay a successor's to have taken until that successor's renew
	// deadline has passed (resumed, see releasable), and base moves only
	// as far as the writes before it vouched, so that a body sent between
	// (this write hidden as it landed) is not forgotten (red team 10).
	now := time.Now()
	base, recent, resumed := tn.base, make([]stamp, 0, len(tn.recent)+1), tn.resumed
	for _, w := range tn.recent {
		if w.answered.After(sent.Add(-renewInterval)) {
			recent = append(recent, w)
		} else {
			base = w.sent
		}
	}
	if base != tn.base && now.After(tn.base.Add(tn.term.TTL)) {
		recent, resumed = recent[:0], now
	}
	return tenure{term: t, sent: sent, base: base, recent: append(recent, stamp{sent, now}), resumed: resumed}
}

// leadsUntil is the deadline of a write of tn while its holder acts as
// leader, or is about to (the period mark): RenewDeadline after tn counts
// from, when the holder steps down unless a later write lands first
// (rule 3).
func (tn tenure) leadsUntil(renewDeadline time.Duration) time.Time {
	return tn.term.Sent.Add(renewDeadline)
}

// heldUntil is the deadline of a write of tn once its task has returned
// and nothing acts as leader (the done mark, the hold, the release): a TTL
// after tn's write was sent. Until then no other contender can have taken
// the lease over from the record tn wrote, which it must first see
// unchanged for a TTL (rule 2), counted from a read that returned after
// that record was stored, so after the write was sent; so the write,
// conditional on tn's version, lands only on the term's own record (rule
// 13: the holder keeps the lease it still holds until it can write what
// its run left). After it, a successor may have written, and a restore
// may have put tn's record back under it. It counts from when the write
// was sent, not from when it was due (term.Sent, which leadsUntil counts
// from): that clamp is for a holder acting as leader, whose follower may
// have counted the record before it (a restore hid the write) and taken
// that over instead; a write conditional on tn's version cannot land on
// that takeover. Counted from when it was due, a hold renewal sent late
// (after an answer later than a renew interval) left the read that settles its
// successor's unknown outcome (resolve) a renew interval at most, less
// than a call can take when CallTimeout is longer.
func (tn tenure) heldUntil() time.Time { return tn.sent.Add(tn.term.TTL) }

// releasable returns when tn's release, which frees the lease for anyone
// at once, may be sent: from RenewDeadline after resumed was answered
// (when a write vouched for none before it: a successor that took over a
// body before that write landed has stepped down by then), until a TTL
// after base was sent, no later than heldUntil.
// A restore may have hidden tn's write, and the writes of the term close
// before it, and a follower have taken over the record it put back: the
// follower's reads, no further apart than a renew interval, saw none of
// the hidden writes, so the body it counted is that of a write answered
// at least a renew interval before tn's was sent, or a later one, and it
// took over a TTL after that write was sent at the earliest (rule 2). A
// second restore may then put tn's record back under that successor,
// where a release would let a third contender take the lease, with the
// successor's token, while the successor leads (red team: a late renewal
// hidden, TestReleaseAfterTwoRestoresNeverFreesASuccessorsLease; a
// renewal and the done mark sent at once, both hidden,
// TestRedTeam3ReleaseAfterRestoreHidingTwoWrites). A hold renewal or a
// done mark landing there only ends the successor's term at its next
// renewal; a release must not. When no write of the term was answered so
// early, the acquisition's sending counts: a restore of the record before
// it is one no design can tell.
func (tn tenure) releasable(renewDeadline time.Duration) (from, until time.Time) {
	if !tn.resumed.IsZero() {
		from = tn.resumed.Add(renewDeadline)
	}
	return from, tn.base.Add(tn.term.TTL)
}

// byDeadline returns ctx bounded by until, the deadline of a write of a
// term, or errPastDeadline if until has passed: such a write is not sent.
func byDeadline(ctx context.Context, until time.Time) (context.Context, context.CancelFunc, error) {
	if !time.Now().Before(until) {
		return nil, nil, errPastDeadline
	}
	wctx, cancel := context.WithDeadline(ctx, until)
	return wctx, cancel, nil
}

// errPastDeadline is the error of a write of a term not sent because its
// deadline had passed.
var errPastDeadline = fmt.Errorf("runner: not sent: the term's deadline had passed: %w", context.DeadlineExceeded)

// write is every write of a term after its acquisition but its release:
// the renewals, the period mark, the done mark and the hold, whoever sends
// it. It writes t (tn's term, with the annotations this write carries),
// retrying what may pass (renew) until the write lands, the lease is found
// lost, or until passes: a write not sent by then is not sent at all
// (errPastDeadline). It returns the term as the write left it (tn.next),
// which counts from when the write was sent or when it was due
// (RenewInterval after tn's write was sent), whichever is earlier: so a
// write that came late (its first attempts failed, or the acquisition's
// answer came late), and one that a restore hid, cannot keep the holder
// leading past the end of a follower's count, which may have started as
// early as one renew interval before the holder's latest write (see
// lease/driver's package doc). A write that fails returns tn, noting in
// its unsure when the write was first sent if its outcome is unknown (it
// was cut off at until, or its answer and read-back were lost): only a
// read can tell whether it landed (resolve).
func (r *Runner) write(ctx context.Context, tn tenure, t lease.Term, until time.Time) (tenure, error) {
	wctx, cancel, err := byDeadline(ctx, until)
	if err != nil {
		return tn, err
	}
	defer cancel()
	nt, sent, err := r.renew(wctx, t)
	switch {
	case err == nil:
		return tn.next(nt, nt.Sent, r.cfg.RenewInterval), nil
	case tn.unsure.IsZero() && !settled(err):
		tn.unsure = sent
	}
	return tn, err
}

// settled reports whether a write that failed with err is known to have
// changed nothing the term could go on from: the lease was lost, or the
// store refused the write for good.
func settled(err error) bool { return errors.Is(err, lease.ErrLost) || !lease.Retryable(err) }

// resolve settles by reading the outcome of tn's writes left unanswered
// (tn.unsure), once a write of tn has failed by its deadline and nothing
// acts as leader. The earliest of them may have landed, and then the
// record is the term's for a TTL after it was sent (heldUntil of its
// tenure, tn.next): so the holder still holds the lease,
// and keeps it (rule 13) if a read tells it so in time. It reads until
// then, and returns that write's tenure, with ok, once a read shows the
// record named for the term, held, and moved on from tn's write: its
// version is neither tn.term's nor tn.at (on a store that judges expiry
// itself, where tn.term's Version is a lease ID, not tn.at suffices: that
// store refuses to renew a lease another has taken). The writes after it
// go on from tn.term: the Lease's own read-back finds which of its writes
// the record is at, and a record put back from a backup ends the term. A
// read that finds tn's write still there (none landed), another's record,
// or none, and no answer in time, end it: ok false. It returns the record
// read too.
func (r *Runner) resolve(ctx context.Context, tn tenure, t lease.Term) (landed tenure, rec lease.Record, ok bool) {
	if tn.unsure.IsZero() {
		return tn, rec, false
	}
	landed = tn.next(t, tn.unsure, r.cfg.RenewInterval)
	rctx, cancel, err := byDeadline(ctx, landed.heldUntil())
	if err != nil {
		return tn, rec, false
	}
	defer cancel()
	rec, err = backoff.RetryWithData(func() (lease.Record, error) {
		rec, err := r.cfg.Lease.Observe(rctx)
		if errors.Is(err, lease.ErrNoRecord) || err != nil && !lease.Retryable(err) {
			return rec, backoff.Permanent(err)
		}
		return rec, err
	}, backoff.WithContext(r.backOff(), rctx))
	moved := rec.Version != tn.at && (r.cfg.Lease.Judge() == lease.JudgedByStore || rec.Version != tn.term.Version)
	if err != nil || rec.Holder != t.Holder || rec.Token != t.Token || !rec.Held() || !moved {
		r.cfg.Logger.Warn("the term's unanswered writes did not keep the lease", "token", t.Token, "holder", rec.Holder, "record_token", rec.Token, "err", err)
		return tn, rec, false
	}
	landed = tn.next(t, tn.unsure, r.cfg.RenewInterval) // answered now, by the read
	landed.at = rec.Version
	return landed, rec, true
}

// backOff is how a write, or the read that resolves one, is retried
// within its deadline: exponentially, from a twentieth of the time a
// renewal has to land after it is due to a quarter of it, each wait
// spread at random.
func (r *Runner) backOff() backoff.BackOff {
	window := r.cfg.RenewDeadline - r.cfg.RenewInterval
	return spreadBackOff{backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(window/20),
		backoff.WithMaxInterval(window/4),
		backoff.WithMaxElapsedTime(0),
		backoff.WithRandomizationFactor(0),
	), r.rand}
}

// renew renews t, retrying what may pass with exponential backoff until ctx
// (bounded by the write's deadline) ends, and reports each attempt to
// OnRenew. It returns also when its first attempt was sent (zero if none
// was).
func (r *Runner) renew(ctx context.Context, t lease.Term) (lease.Term, time.Time, error) {
	var first time.Time
	nt, err := backoff.RetryNotifyWithData(func() (lease.Term, error) {
		began := time.Now()
		if first.IsZero() {
			first = began
		}
		nt, err := r.cfg.Lease.Renew(ctx, t)
		if r.cfg.OnRenew != nil {
			r.cfg.OnRenew(time.Since(began), err)
		}
		if err != nil && (errors.Is(err, lease.ErrLost) || !lease.Retryable(err)) {
			return nt, backoff.Permanent(err)
		}
		return nt, err
	}, backoff.WithContext(r.backOff(), ctx), func(err error, wait time.Duration) {
		r.cfg.Logger.Warn("renew failed; retrying", "token", t.Token, "err", err, "retry_in", wait)
	})
	return nt, first, err
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
