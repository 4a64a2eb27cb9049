package runner

import (
	"math/rand/v2"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// follow places a follower's reads of a lease whose holder renews on a
// schedule and whose every renewal changes the record's version (a
// compare-and-swap store, or Azure, whose renewals write the record again
// under the lease: lease.RenewalsShow): just after the holder's expected
// renewals, so that the follower first sees the holder's final version soon after it was written,
// and a holder that crashed is taken over soon after the TTL that follows
// it (the engine counts the TTL from the follower's first sight of that
// version; the rule does not change, only when the follower looks).
//
// It assumes that the holder renews every RenewInterval of this runner's
// own configuration (a fleet shares one), and learns when: each read
// either saw a new version, so the holder wrote between the previous read
// and this one, or did not, so the holder's next write comes after this
// read. From these it keeps a bracket (lo, hi] around the holder's next
// write, and halves it, period after period, by reading in its middle,
// until it is narrower than precision; then it reads once per renewal, at
// hi plus this follower's delay, a random fraction of the TTL of its own,
// so that several followers do not read, or take over, at the same
// moment. A renewal that has not come by then (a holder late, irregular,
// or gone) is looked for again after growing waits, and the bracket is
// learned afresh; and the follower doubles its delay (up to half a
// CampaignInterval), so that a holder whose renewals come late by varying
// amounts is not looked for several times a renewal. Each renewal found
// where it was expected shrinks the delay back by a sixteenth, down to the
// follower's own; while it is above it, the follower does not probe.
//
// A follower that has just started learns the phase at once: it reads
// every TTL/20 (burstStep) until it sees the version change, for at most
// one renew interval, so that the first renewal after its start brackets
// the holder's schedule to a twentieth of the TTL; a holder that crashed
// within a TTL of the follower's start is then taken over a few hundredths
// of a TTL after the TTL that follows its last renewal, as by a follower
// that has watched it for long. The burst only places reads: the count
// towards expiry is the engine's, on this follower's clock. Otherwise,
// until it knows a bracket (no renewal seen in the burst, or the holder
// late), a follower polls every jittered CampaignInterval, as on a store
// that judges expiry itself.
//
// Costs: once locked, follow plans one read per renewal interval, and one
// more when a renewal comes late; campaign spreads Config.FollowerReads-1
// reads evenly between planned reads (readStep), so that a follower reads
// FollowerReads times per renewal (Resolved.FollowerReadInterval), each
// read in the bracket narrowing it as the one in its middle does;
// at start, at most RenewInterval ÷ (TTL/20) reads more (8 at the
// defaults), once.
type follow struct {
	renew, campaign time.Duration
	jittered        func(time.Duration) time.Duration
	// precision is how narrow the bracket gets; delay is how long after
	// the bracket's end this follower reads, and base the delay it draws at
	// random and returns to.
	precision, delay, base time.Duration

	holder  string
	token   uint64
	version string
	last    time.Time // when the latest read began
	back    time.Time // when it returned
	// lo and hi bracket the holder's next write; hi is zero when no
	// bracket is known.
	lo, hi time.Time
	// probed: a read in the bracket found the write not yet made.
	probed bool
	// retry is the wait before looking again for a renewal that was due.
	retry time.Duration
	// started is when the first read began; burst the wait between reads
	// until a version change is seen, for one renew interval from started.
	started time.Time
	burst   time.Duration
}

// burstStep divides the TTL into the wait between a just-started
// follower's reads while it looks for the holder's first renewal: TTL/20.
const burstStep = 20

func newFollow(cfg Config, ttl time.Duration, jittered func(time.Duration) time.Duration, rnd *rand.Rand) *follow {
	base := ttl/100 + time.Duration(rnd.Int64N(int64(ttl/50+1)))
	return &follow{
		renew:     cfg.RenewInterval,
		campaign:  cfg.CampaignInterval,
		jittered:  jittered,
		precision: ttl / 200,
		burst:     ttl / burstStep,
		delay:     base,
		base:      base,
	}
}

// saw notes a read that began at began, returned at back and found rec
// held, and returns when to read next.
func (f *follow) saw(began, back time.Time, rec lease.Record) time.Time {
	prev, changed := f.last, rec.Version != f.version
	handedOver := rec.Holder != f.holder || rec.Token != f.token
	f.holder, f.token, f.version, f.last, f.back = rec.Holder, rec.Token, rec.Version, began, back
	switch {
	case prev.IsZero():
		f.hi, f.started = time.Time{}, began
	case changed:
		// The holder wrote after the previous read began and before this
		// one returned, its latest write no earlier than a renew interval
		// before that: within the bracket, if this is the write it
		// expected; a new term starts a schedule afresh.
		lo, hi := later(prev, back.Add(-f.renew)), back
		if !handedOver && !f.hi.IsZero() && f.hi.After(lo) && f.lo.Before(hi) {
			lo, hi = later(lo, f.lo), earlier(hi, f.hi)
			f.delay = max(f.base, f.delay-f.delay/16) // where expected
		}
		f.lo, f.hi, f.retry, f.probed = lo.Add(f.renew), hi.Add(f.renew), 0, false
	case !f.hi.IsZero() && began.Before(f.hi):
		if began.After(f.lo) { // the write comes after this read: the bracket narrows
			f.lo, f.probed = began, true
		}
	case !f.hi.IsZero():
		// The renewal was due and has not come: late, or never.
		f.delay = min(2*f.delay, f.campaign/2)
		f.hi, f.retry = time.Time{}, f.delay
	}
	return f.next()
}

// next is when to read next.
func (f *follow) next() time.Time {
	switch {
	case f.hi.IsZero() && f.retry > 0:
		at := f.last.Add(f.retry)
		f.retry = min(2*f.retry, f.campaign)
		return at
	case f.hi.IsZero() && f.last.Sub(f.started) < f.renew:
		// Just started: look for the first renewal closely.
		return f.last.Add(f.burst)
	case f.hi.IsZero():
		return f.last.Add(f.jittered(f.campaign))
	case f.hi.Sub(f.lo) <= f.precision || f.probed || f.delay > f.base:
		// Narrow enough; or this period's middle was read already and the
		// write had not come; or the holder is irregular: read once the
		// write must have come.
		return f.hi.Add(f.delay)
	}
	return f.lo.Add(f.hi.Sub(f.lo) / 2)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
