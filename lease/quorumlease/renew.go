package quorumlease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
)

// Renew renews every member term of t, takes back the members it lost
// (once each member's own rules let it), and succeeds when a majority
// took t's annotations.
func (q *Lease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := q.enter(ctx); err != nil {
		return lease.Term{}, err
	}
	defer q.leave()
	a := own(t.Annotations)
	q.mu.Lock()
	if !q.mine(t) {
		q.mu.Unlock()
		return lease.Term{}, fmt.Errorf("quorumlease: renew: term %d is not this Lease's live quorum term: %w", t.Token, lease.ErrLost)
	}
	seq := q.seq + 1
	if err := q.stamped(a, q.token, seq).Validate(); err != nil {
		q.mu.Unlock()
		return lease.Term{}, fmt.Errorf("quorumlease: renew: %w", err)
	}
	q.lapse(quorum, time.Now())
	// Fewer than a majority of its member terms are live: the term has
	// lapsed, and another contender may have led since (and released).
	lapsed := q.count(quorum) < q.majority
	held, terms, token := q.states(), q.terms(), q.token
	q.mu.Unlock()

	out := q.eachUntil(ctx, all, func(ctx context.Context, i int, l lease.Lease) outcome {
		mt, won := terms[i], false
		if held[i] != quorum {
			// Take it back: the member's own Acquire judges when.
			var err error
			if mt, err = l.Acquire(ctx); err != nil {
				return outcome{err: err}
			}
			won = true
			// The record it took back carries over the quorum token of
			// the last term that wrote it. Once this term has lapsed, a
			// greater one than its own may be a later leader's, which
			// held a majority since (and then released, or lapsed):
			// this term is over, and reviving it would put the count
			// backwards (claim b). While the term is live no other can
			// have led, and a greater token is a lead that reached
			// fewer than a majority.
			later, _ := tokenOf(mt.Annotations)
			if lapsed && later > token {
				return outcome{term: mt, won: true, err: fmt.Errorf("took the member back from quorum term %d, later than this one: %w", later, lease.ErrLost)}
			}
			// A record of this term that an operator's Break freed is
			// not this term's to take back: it is kept unrenewed, to
			// lapse (see errBroken). Taken back, a member freed by the
			// break counted towards a majority with those the break
			// could not reach, and a term reported broken led on (red
			// team 17).
			if later == token && mt.Annotations.Get(lease.AnnotationBroken) == "1" {
				return outcome{term: mt, won: true, err: fmt.Errorf("took the member back from a break of this term (%s): %w", lease.AnnotationBroken, errBroken)}
			}
		}
		mt.Annotations = q.stamped(a, token, seq)
		nt, err := l.Renew(ctx, mt)
		if err != nil {
			return outcome{term: mt, err: err, won: won}
		}
		return outcome{term: nt}
	}, succeeded, func(i int, o outcome) {
		q.tell(i, o)
		if q.renewed(i, o, token) == superseded && q.live && q.token == token {
			q.demote()
		}
	}, false)

	q.mu.Lock()
	defer q.mu.Unlock()
	renewed, gone, over := 0, 0, false
	for i, o := range out {
		q.tell(i, o)
		switch q.renewed(i, o, token) {
		case took:
			renewed++
		case lost:
			gone++
		case superseded:
			over = true
		}
	}
	q.seq = seq
	if over {
		q.demote()
		return lease.Term{}, fmt.Errorf("quorumlease: renew: term %d was taken over: a later quorum term held a majority since: %w (%s)", token, lease.ErrLost, q.memberErrors(out))
	}
	if renewed >= q.majority {
		q.written, q.landed = a, seq
		return q.liveTerm(a), nil
	}
	if err := ctx.Err(); err != nil {
		return lease.Term{}, err
	}
	if len(q.members)-gone < q.majority {
		q.demote()
		return lease.Term{}, fmt.Errorf("quorumlease: renew: %d of %d members are lost or held by others, a majority is %d: %w (%s)", gone, len(q.members), q.majority, lease.ErrLost, q.memberErrors(out))
	}
	return lease.Term{}, fmt.Errorf("quorumlease: renew: renewed %d of %d members, a majority is %d: %w (%s)", renewed, len(q.members), q.majority, lease.ErrUnavailable, q.memberErrors(out))
}

// tell records, with mu held, what a renewal's call to member i returned,
// for Holds.
func (q *Lease) tell(i int, o outcome) {
	if !o.done {
		return
	}
	m := &q.members[i]
	m.renewErr = o.err
	if o.err != nil {
		m.failures++
	}
}

// verdict is what one member's outcome in a renewal of a quorum term
// means for the term.
type verdict int

const (
	undecided  verdict = iota
	took               // the member took the renewal
	lost               // the member is lost to the term, or held by another
	superseded         // the member was taken back from a later quorum term
)

// renewed records in member i what a renewal of the quorum term token
// (Renew's call, or one that outlived its Renew) returned, with mu held,
// and says what it means for the term. A member term that a call that
// outlived its Renew won or renewed after the term ended is kept on the
// way to a new one (campaign), as demote leaves the others.
func (q *Lease) renewed(i int, o outcome, token uint64) verdict {
	m := &q.members[i]
	st := quorum
	if !q.live || q.token != token {
		st = campaign
	}
	if o.won {
		q.note(o.term.Annotations)
	}
	switch {
	case o.won && errors.Is(o.err, errBroken):
		m.state, m.term = campaign, o.term // won, but broken from this term
		return lost
	case o.won && errors.Is(o.err, lease.ErrLost):
		m.state, m.term = campaign, o.term // won, but a later term had it
		return superseded
	case o.done && o.err == nil:
		m.state, m.term = st, o.term
		return took
	case o.won:
		m.state, m.term = st, o.term // won, its renewal undecided
	case m.state == quorum && errors.Is(o.err, lease.ErrLost):
		m.state = none
		return lost
	case m.state != quorum && errors.Is(o.err, lease.ErrHeld):
		return lost
	}
	return undecided
}

// errBroken is a Renew's member outcome for a member that it took back
// from an operator's Break of its own term: the member counts as lost to
// the term, and its term is kept unrenewed (campaign), so that a later
// attempt is refused by the member until it lapses. Break reports a term
// broken once a majority of its members were freed from it, and the
// holder's next Renew then finds fewer than a majority left to renew,
// and returns ErrLost; a Break that freed fewer (refused: its holder
// renewed meanwhile) costs the term those members until they lapse.
var errBroken = fmt.Errorf("an operator broke this term: %w", lease.ErrLost)

// mine reports whether t is this Lease's live quorum term.
func (q *Lease) mine(t lease.Term) bool {
	return q.live && t.Holder == q.opts.Identity && t.Token == q.token
}

// end ends the quorum term t on every member it holds with f (a release,
// a keep or a handoff), and reports as Release does: nil when a majority
// ended, or had ended, as asked. mark is what f adds to each member's
// record (a handoff's successor): a term whose annotations leave no room
// for it and the quorum's own is refused, naming the key, before any
// write.
func (q *Lease) end(ctx context.Context, what string, t lease.Term, mark lease.Annotations, f func(l lease.Lease, mt lease.Term) (bool, error)) error {
	if err := q.enter(ctx); err != nil {
		return err
	}
	defer q.leave()
	if err := q.settle(ctx); err != nil {
		return err
	}
	a := own(t.Annotations)
	q.mu.Lock()
	again := !q.mine(t)
	if again && (q.ended == 0 || t.Holder != q.opts.Identity || t.Token != q.ended) {
		q.mu.Unlock()
		return fmt.Errorf("quorumlease: %s: term %d is not this Lease's live quorum term: %w", what, t.Token, lease.ErrLost)
	}
	held, terms, token, seq := q.endedStates, q.endedTerms, q.ended, q.seq
	if !again {
		seq++
		written := q.stamped(a, q.token, seq)
		for k, v := range mark.All() {
			written = written.With(k, v)
		}
		if err := written.Validate(); err != nil {
			q.mu.Unlock()
			return fmt.Errorf("quorumlease: %s: %w", what, err)
		}
		held, terms, token = q.states(), q.terms(), q.token
		for i := range terms {
			terms[i].Annotations = q.stamped(a, token, seq)
		}
		q.live, q.ended, q.endedStates, q.endedTerms, q.seq = false, token, held, terms, seq
		for i := range q.members {
			q.members[i].state = none
		}
	}
	q.mu.Unlock()

	out := q.each(func(i int) bool { return held[i] == quorum }, func(i int, l lease.Lease) outcome {
		ok, err := f(l, terms[i])
		return outcome{err: err, rec: lease.Record{Released: ok}}
	})

	ended, gone := 0, 0
	for _, o := range out {
		switch {
		case !o.done:
			gone++ // a member it held no term of
		case o.err == nil && o.rec.Released:
			ended++
		case errors.Is(o.err, lease.ErrLost):
			gone++
		}
	}
	switch {
	case ended >= q.majority:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case len(q.members)-gone < q.majority:
		return fmt.Errorf("quorumlease: %s: %d members were lost: %w (%s)", what, gone, lease.ErrLost, q.memberErrors(out))
	}
	return fmt.Errorf("quorumlease: %s: %d of %d members took it, a majority is %d; the rest lapse after the TTL: %w (%s)", what, ended, len(q.members), q.majority, lease.ErrUnavailable, q.memberErrors(out))
}

// Release releases every member term of t, with t's annotations.
func (q *Lease) Release(ctx context.Context, t lease.Term) error {
	return q.end(ctx, "release", t, lease.Annotations{}, func(l lease.Lease, mt lease.Term) (bool, error) {
		err := l.Release(ctx, mt)
		return err == nil, err
	})
}

// Keep keeps every member term of t held for d on the members that can
// (lease.Keeper), and leaves the others to lapse after their TTL.
func (k keeper) Keep(ctx context.Context, t lease.Term, d time.Duration) error {
	if d <= 0 || d%time.Millisecond != 0 {
		return &lease.OptionError{Pkg: "quorumlease", Field: "Keep's d", Value: d, Reason: "must be a positive whole number of milliseconds"}
	}
	return k.end(ctx, "keep", t, lease.Annotations{}, func(l lease.Lease, mt lease.Term) (bool, error) {
		kl, ok := l.(lease.Keeper)
		if !ok {
			return false, nil
		}
		err := kl.Keep(ctx, mt, d)
		return err == nil, err
	})
}

// ReleaseTo hands every member term of t to successor on the members that
// can (lease.Handoffer), and leaves the others to lapse after their TTL:
// the successor takes the majority handed to it at once, and every other
// contender sees that majority held.
func (k keeper) ReleaseTo(ctx context.Context, t lease.Term, successor string) error {
	if err := lease.ValidateSuccessor(successor, t.Holder); err != nil {
		return err
	}
	return k.end(ctx, "hand off", t, lease.NewAnnotations(map[string]string{lease.AnnotationSuccessor: successor}), func(l lease.Lease, mt lease.Term) (bool, error) {
		hl, ok := l.(lease.Handoffer)
		if !ok {
			return false, nil
		}
		err := hl.ReleaseTo(ctx, mt, successor)
		return err == nil, err
	})
}

// Observe reads every member and returns the quorum's record: held by the
// contender that holds a majority of them with one quorum token, released
// when a majority are free, and otherwise as the latest quorum term wrote
// it. Its Version is the quorum token and the count of that term's latest
// write that a majority of the members show (see version).
func (q *Lease) Observe(ctx context.Context) (lease.Record, error) {
	if err := ctx.Err(); err != nil {
		return lease.Record{}, err
	}
	out := q.readAll(ctx, all)
	if err := ctx.Err(); err != nil {
		return lease.Record{}, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	answered, records := 0, 0
	for i, o := range out {
		m := &q.members[i]
		m.obs, m.obsOK, m.obsErr = o.rec, o.err == nil, o.err
		switch {
		case o.err == nil:
			q.note(o.rec.Annotations)
			answered++
			records++
		case errors.Is(o.err, lease.ErrNoRecord):
			out[i].err = nil
			answered++
		}
	}
	q.observed = ""
	if answered < q.majority {
		return lease.Record{}, q.failed("observe", out)
	}
	if records == 0 {
		return lease.Record{}, fmt.Errorf("quorumlease: observe: no member has a record: %w", lease.ErrNoRecord)
	}
	rec := q.summary(q.observedRecords())
	q.observed = rec.Version
	return rec, nil
}

// summary is the quorum's record as the members' records recs show it
// (ok: the member answered with a record).
func (q *Lease) summary(recs []lease.Record, ok []bool) lease.Record {
	var looks []look
	best, free := lease.Record{}, 0
	for i, r := range recs {
		if !ok[i] {
			continue
		}
		if r.Held() {
			looks = append(looks, look{class: other, rec: r})
		} else {
			free++
		}
		if best.Holder == "" || later(r, best) {
			best = r
		}
	}
	if gs := q.groups(looks); len(gs) > 0 && len(gs[0].waits) >= q.majority {
		return gs[0].rec
	}
	rec, mark := quorumRecord(best), "?"
	if free >= q.majority {
		rec.Released, mark = true, "r"
	}
	// The count of the latest write of rec's term that a majority took.
	var seqs []uint64
	var term []lease.Record
	for i, r := range recs {
		if t, s := tokenOf(r.Annotations); ok[i] && t == rec.Token && r.Holder == rec.Holder {
			seqs = append(seqs, s)
			term = append(term, r)
		}
	}
	if len(term) > 0 {
		rec.RenewInterval = renewInterval(term)
	}
	slices.Sort(seqs)
	slices.Reverse(seqs)
	switch {
	case len(seqs) >= q.majority:
		// The annotations of that write, not of a later one fewer took.
		rec.Annotations = own(atSeq(term, seqs[q.majority-1]).Annotations)
		rec.Version = version(rec.Token, seqs[q.majority-1], mark)
	case len(seqs) > 0:
		rec.Version = version(rec.Token, seqs[0], "?")
	default:
		rec.Version = version(rec.Token, 0, "?")
	}
	return rec
}

// observedRecords returns the members' records as the latest Observe read
// them.
func (q *Lease) observedRecords() ([]lease.Record, []bool) {
	recs, ok := make([]lease.Record, len(q.members)), make([]bool, len(q.members))
	for i, m := range q.members {
		recs[i], ok[i] = m.obs, m.obsOK
	}
	return recs, ok
}

// Wait is lease.Watcher's: how long until Acquire, as the latest Observe
// read the members, would write: until a majority of them could be
// taken, and the first of them that answered too, as Acquire takes the
// members in order and yields while another holds the first it can
// reach (a contender that holds it alone, cut off from the rest).
func (q *Lease) Wait(lease.Record) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	var waits []time.Duration
	for i, m := range q.members {
		var w time.Duration
		switch {
		case errors.Is(m.obsErr, lease.ErrNoRecord):
			w = q.waitOf(i, lease.Record{}) // one that vanished waits out its holder's TTL
		case !m.obsOK:
			continue
		case m.obs.Held():
			w = q.waitOf(i, m.obs)
		}
		waits = append(waits, w)
	}
	if len(waits) < q.majority {
		return q.opts.TTL
	}
	first := waits[0]
	slices.Sort(waits)
	return max(waits[q.majority-1], first)
}

// Break is lease.Breaker's: it breaks, on every member, the term of rec's
// holder that the latest Observe read, keeping each record's quorum token,
// so the next quorum term's token is greater. rec must be the record that
// Observe returned. It returns the record it left only when the term is
// over: a majority of the members were freed from it (by this Break or an
// earlier one); otherwise lease.ErrUnavailable when the outcome at
// members that would complete a majority is unknown, a *lease.HeldError
// when a member was renewed since the read, or the members' errors (a
// member that refuses for good, naming why), the members it broke
// staying broken (the holder's Renew never takes one back).
func (q *Lease) Break(ctx context.Context, rec lease.Record) (lease.Record, error) {
	if !rec.Held() {
		return rec, nil
	}
	if err := q.enter(ctx); err != nil {
		return lease.Record{}, err
	}
	defer q.leave()
	if err := q.settle(ctx); err != nil {
		return lease.Record{}, err
	}
	q.mu.Lock()
	if rec.Version != q.observed {
		q.mu.Unlock()
		return lease.Record{}, fmt.Errorf("quorumlease: break: the record (version %q) is not the one this Lease's latest Observe returned: %w", rec.Version, lease.ErrInvalid)
	}
	obs, ok := q.observedRecords()
	target := make([]bool, len(q.members))
	// marked: members an earlier Break freed from this term; seen: every
	// member was read (a record, or none).
	marked, seen := 0, true
	for i, r := range obs {
		t, _ := tokenOf(r.Annotations)
		target[i] = ok[i] && r.Held() && r.Holder == rec.Holder && t == rec.Token
		if ok[i] && !r.Held() && r.Holder == rec.Holder && t == rec.Token && r.Annotations.Get(lease.AnnotationBroken) == "1" {
			marked++
		}
		seen = seen && (ok[i] || errors.Is(q.members[i].obsErr, lease.ErrNoRecord))
	}
	q.mu.Unlock()
	out := q.each(func(i int) bool { return target[i] }, func(i int, l lease.Lease) outcome {
		b, ok := l.(lease.Breaker)
		if !ok {
			return outcome{err: fmt.Errorf("quorumlease: break: the member cannot be broken: %w", lease.ErrInvalid)}
		}
		r, err := b.Break(ctx, obs[i])
		return outcome{rec: r, err: err}
	})
	if err := ctx.Err(); err != nil {
		return lease.Record{}, err
	}
	// unknown: members whose break may have landed (its answer and its
	// read-back were lost).
	broken, unknown, whole := 0, 0, true
	var held *lease.HeldError
	for i, o := range out {
		switch {
		case !o.done:
		case o.err == nil && !o.rec.Held():
			obs[i] = o.rec
			broken++
		case o.err == nil: // held after all, as a member that breaks nothing says
			obs[i], whole = o.rec, false
			if held == nil {
				held = &lease.HeldError{Record: o.rec, Wait: q.waitOf(i, o.rec)}
			}
		default:
			whole = false
			if held == nil {
				errors.As(o.err, &held)
			}
			if !errors.Is(o.err, lease.ErrHeld) && lease.Retryable(o.err) {
				unknown++
			}
		}
	}
	after := q.summary(obs, ok)
	// The term is over only when its holder cannot renew a majority any
	// more: the members freed from it, by this Break or an earlier one
	// (whose records its Renew refuses to take back), are a majority. A
	// record that shows no majority held after the Break proves it only
	// when every member was read and every one of the term broken: a
	// member this Break could not break (its holder renewed it after the
	// read) or could not read may be the holder's, which takes back the
	// free ones and leads on (red team 17).
	//
	// A break whose outcome is unknown at members that would complete a
	// majority may have ended the term: that is said, not guessed either
	// way; and a failure that is not a renewal seen (a member that
	// refuses for good: no room for the broken mark) is no sign that the
	// holder is alive, and is reported as what it is (red team 18).
	switch {
	case broken+marked >= q.majority || seen && whole && !after.Held():
		return after, nil
	case unknown > 0 && broken+marked+unknown >= q.majority:
		return lease.Record{}, fmt.Errorf("quorumlease: break: broke %d of %d members, a majority is %d, and the outcome at %d is unknown: the term may be over; read the lease again: %w (%s)", broken+marked, len(q.members), q.majority, unknown, lease.ErrUnavailable, q.memberErrors(out))
	case held != nil:
		return lease.Record{}, &lease.HeldError{Record: quorumRecord(held.Record), Wait: held.Wait}
	case whole && !after.Held():
		return lease.Record{}, fmt.Errorf("quorumlease: break: broke %d of %d members, a majority is %d, and could not read the others, which may hold the term: %w", broken+marked, len(q.members), q.majority, lease.ErrUnavailable)
	}
	return lease.Record{}, q.failed("break", out)
}

// Idle is lease.Idler's: between a holder's renewals, every half renew
// interval until until, it reads each member the live quorum term does not
// hold, so that the member's Acquire, which Renew calls to take it back,
// finds an unbroken count of its record's expiry. The count goes only over
// reads no further apart than the holder's renew interval (rule 2, against
// a renewal hidden by a restore), and the runner's renewals are always more
// than a renew interval apart: taken back at renewals alone, a member that
// came back was never held again once calls took any time (chaos on the
// emulators: a MinIO member back from a two-minute outage stayed out, and a
// later partition from another member changed the leader). It only reads,
// each read bounded by CallTimeout and by until.
func (q *Lease) Idle(ctx context.Context, until time.Time) {
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	tick := q.opts.RenewInterval / 2
	for {
		ctxtime.Sleep(ctx, tick)
		if ctx.Err() != nil {
			return
		}
		if time.Until(until) < tick/2 {
			// Too late for a read to end before the renewal's: cut
			// off, it would break the member's count.
			ctxtime.Sleep(ctx, time.Until(until))
			return
		}
		q.mu.Lock()
		unheld := func(i int) bool { return false }
		if q.live {
			states := q.states()
			busy := make([]bool, len(q.members))
			for i, m := range q.members {
				busy[i] = m.busy != nil
			}
			unheld = func(i int) bool { return states[i] != quorum && !busy[i] }
		}
		q.mu.Unlock()
		q.each(unheld, func(_ int, l lease.Lease) outcome {
			rctx, cancel := context.WithTimeout(ctx, q.opts.CallTimeout)
			defer cancel()
			_, err := l.Observe(rctx)
			return outcome{err: err}
		})
	}
}
