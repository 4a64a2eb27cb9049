package quorumlease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// class is what a read of a member, in an Acquire, says of it.
type class int

const (
	unread class = iota // not read: this Lease holds a term of it
	bad                 // the read failed
	free                // released, never written, or lapsed: Acquire may take it
	other               // held, and not yet lapsed as this Lease judges it
)

// look is one member as an Acquire's read found it.
type look struct {
	class class
	rec   lease.Record
	wait  time.Duration
}

// Acquire makes one attempt to take a majority of the members; see the
// package documentation for the order it takes them in.
func (q *Lease) Acquire(ctx context.Context) (lease.Term, error) {
	if err := q.enter(ctx); err != nil {
		return lease.Term{}, err
	}
	defer q.leave()
	if err := q.settle(ctx); err != nil {
		return lease.Term{}, err
	}
	now := time.Now()
	q.mu.Lock()
	q.lapse(campaign, now)
	q.lapse(quorum, now)
	if q.live && q.count(quorum) < q.majority {
		q.demote()
	}
	if q.live {
		err := &lease.HeldError{Record: q.liveRecord(), Wait: q.liveWait(now)}
		q.mu.Unlock()
		return lease.Term{}, err
	}
	held := q.states()
	q.mu.Unlock()

	looks, out := q.read(ctx, held)
	if err := ctx.Err(); err != nil {
		return lease.Term{}, err
	}
	if err := q.duplicates(looks); err != nil {
		return lease.Term{}, err
	}
	if err := q.strangers(looks); err != nil {
		return lease.Term{}, err
	}
	if err := q.exhausted(); err != nil {
		q.yield(ctx)
		return lease.Term{}, err
	}
	if h := q.holder(looks); h != nil {
		q.yield(ctx)
		return lease.Term{}, h
	}

	// Take the lowest member that is not unreachable, in the members'
	// order, before any other: of the contenders that start together,
	// the one that takes it is the only one to go on.
	anchored := false
	for i := range q.members {
		if held[i] == campaign {
			anchored = true
			break
		}
		if looks[i].class == bad {
			continue
		}
		if looks[i].class == other {
			if q.ending(looks, i) {
				continue
			}
			break
		}
		t, err := q.members[i].l.Acquire(ctx)
		out[i] = outcome{term: t, err: err, done: true}
		if err == nil {
			q.take(i, t)
			anchored = true
			break
		}
		if errors.Is(err, lease.ErrHeld) {
			looks[i] = heldLook(err)
			break
		}
		looks[i].class = bad
	}
	if !anchored {
		q.yield(ctx)
		return lease.Term{}, q.refused(ctx, looks, out)
	}

	q.mu.Lock()
	held = q.states()
	q.mu.Unlock()
	more := q.each(func(i int) bool { return held[i] == none && looks[i].class == free }, func(_ int, l lease.Lease) outcome {
		t, err := l.Acquire(ctx)
		return outcome{term: t, err: err}
	})
	for i, o := range more {
		if !o.done {
			continue
		}
		out[i] = o
		if o.err == nil {
			q.take(i, o.term)
		} else if errors.Is(o.err, lease.ErrHeld) {
			looks[i] = heldLook(o.err)
		}
	}
	q.mu.Lock()
	enough := q.count(campaign) >= q.majority
	q.mu.Unlock()
	if !enough {
		return lease.Term{}, q.keepMinority(ctx, looks, out)
	}
	return q.lead(ctx)
}

// ending reports whether member i, held by another as the reads show
// it, holds what is left of a quorum term that is ending: another
// member's record of the same holder and quorum token hands the lease to
// this contender (lease.Handoffer), or was read released, or lapsed, and
// member i lapses within a renew interval. A term ends member by member,
// and the member whose last write landed last (a slower store, or one
// that missed the handoff) ends last; the members' order settles which of
// several contenders goes on, and the holder of a term that is ending is
// none of them, so Acquire does not wait for that member before it takes
// the free ones after it. A release or a lapse shows that only near the
// member's own lapse: a contender's campaign carries the quorum token of
// the records it took over, and the records it gave back in an earlier
// attempt show the same holder and token released, so a member it has
// just taken would look ending too, and passing over it would split the
// anchor that keeps two contenders from waiting each other out (red team
// 26: TestRedTeam26WriteRefusingMemberLivelock). A handoff shows it at
// once: no acquisition carries AnnotationSuccessor over, so only the
// holder's ReleaseTo of that very term writes it.
func (q *Lease) ending(looks []look, i int) bool {
	holder := looks[i].rec.Holder
	token, _ := tokenOf(looks[i].rec.Annotations)
	near := looks[i].wait <= q.opts.RenewInterval
	return slices.ContainsFunc(looks, func(l look) bool {
		t, _ := tokenOf(l.rec.Annotations)
		return l.class == free && l.rec.Holder == holder && t == token && (near || l.rec.Successor() == q.opts.Identity)
	})
}

// states returns the state of each member.
func (q *Lease) states() []state {
	s := make([]state, len(q.members))
	for i, m := range q.members {
		s[i] = m.state
	}
	return s
}

// take records a member term that Acquire won.
func (q *Lease) take(i int, t lease.Term) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.note(t.Annotations)
	q.members[i].state, q.members[i].term = campaign, t
}

// demote turns the live quorum term's members into members held on the
// way to a new one, and ends the quorum term.
func (q *Lease) demote() {
	for i := range q.members {
		if q.members[i].state == quorum {
			q.members[i].state = campaign
		}
	}
	q.live = false
}

// read reads every member this Lease holds no term of, and judges each.
func (q *Lease) read(ctx context.Context, held []state) ([]look, []outcome) {
	out := q.readAll(ctx, func(i int) bool { return held[i] == none })
	looks := make([]look, len(q.members))
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, o := range out {
		switch {
		case !o.done:
			looks[i].class = unread
		case errors.Is(o.err, lease.ErrNoRecord):
			looks[i].class = free
			out[i].err = nil
		case o.err != nil:
			looks[i].class = bad
		default:
			q.note(o.rec.Annotations)
			looks[i] = look{class: free, rec: o.rec}
			if o.rec.Held() {
				looks[i].wait = q.waitOf(i, o.rec)
				if looks[i].wait > 0 && !q.untold(i) {
					looks[i].class = other
				}
			}
		}
	}
	return looks, out
}

// heldLook is a member whose Acquire said it is held (err matches
// lease.ErrHeld).
func heldLook(err error) look {
	l := look{class: other}
	if he, ok := errors.AsType[*lease.HeldError](err); ok {
		l.rec, l.wait = he.Record, he.Wait
	}
	return l
}

// waitOf is how much longer member i's record rec, just read, must stay
// unchanged before the member's Acquire would take it: the member's own
// judgement where it has one (lease.Watcher), and otherwise the record's
// TTL, as a store that judges expiry shows a lapsed lease released (a
// member that judges on this contender's clock and does not tell, the
// record's TTL at most: see untold).
func (q *Lease) waitOf(i int, rec lease.Record) time.Duration {
	if w, ok := q.members[i].l.(lease.Watcher); ok {
		return w.Wait(rec)
	}
	return rec.TTL
}

// untold reports whether member i judges expiry on this contender's clock
// without telling how far its count has gone (a Lease of another module
// that is no lease.Watcher): only its own Acquire knows whether a held
// record has lapsed, so Acquire tries it as a free member, and the member
// refuses it (lease.ErrHeld) while it is held. Judged by the record's TTL
// alone, a holder that has gone would keep it for ever.
func (q *Lease) untold(i int) bool {
	_, ok := q.members[i].l.(lease.Watcher)
	return !ok && q.members[i].l.Judge() == lease.JudgedByContender
}

// duplicates refuses members that show one record: the same nonce, which
// every write draws afresh, read at two members' keys means two of the
// URLs name one object (or a replica of it), and a majority counted on
// them would not be one.
func (q *Lease) duplicates(looks []look) error {
	for i := range looks {
		for j := i + 1; j < len(looks); j++ {
			a, b := looks[i].rec, looks[j].rec
			if a.Nonce != "" && a.Nonce == b.Nonce && looks[i].class != bad && looks[j].class != bad {
				return fmt.Errorf("quorumlease: %s and %s hold the same record (nonce %q): they are one store's object, or replicas of one, and cannot count as two members: %w", q.members[i].name, q.members[j].name, a.Nonce, lease.ErrInvalid)
			}
		}
	}
	return nil
}

// strangers returns lease.ErrInvalid, naming the member, when another
// contender holds a member in a quorum over another list of members (the
// record's annotationMembers differs from this Lease's): two lists can
// have majorities that share no member, and two leaders, one on each.
// A record released or lapsed is taken over, whatever list wrote it, so
// that the members can be changed once every contender over the old list
// has stopped. Only quorums opened with their members' names (from a
// URL) write and compare the list.
func (q *Lease) strangers(looks []look) error {
	if q.list == "" {
		return nil
	}
	for i, l := range looks {
		if list := l.rec.Annotations.Get(annotationMembers); l.class == other && list != "" && list != q.list {
			return fmt.Errorf("quorumlease: %s is held by %q in a quorum over other members, or the same in another order (%s %s, this contender's %s): every contender must list the same members in the same order; to change them, stop every contender first: %w", q.members[i].name, l.rec.Holder, annotationMembers, list, q.list, lease.ErrInvalid)
		}
	}
	return nil
}

// holder returns the HeldError naming a contender that holds a majority
// of the members, as the reads show it, or nil when none does.
func (q *Lease) holder(looks []look) *lease.HeldError {
	for _, g := range q.groups(looks) {
		if len(g.waits) >= q.majority {
			// It keeps a majority until all but a minority lapse.
			slices.Sort(g.waits)
			return &lease.HeldError{Record: g.rec, Wait: g.waits[len(g.waits)-q.majority]}
		}
	}
	return nil
}

// group is the members held in one quorum term of another contender.
type group struct {
	rec   lease.Record
	waits []time.Duration
	seqs  []uint64
	recs  []lease.Record
}

// groups gathers the members held by others by holder and quorum token,
// largest first, each with the quorum record of its latest write: its
// Version as Observe's names it (see version), marked "?" for a group
// short of a majority.
func (q *Lease) groups(looks []look) []group {
	type key struct {
		holder string
		token  uint64
	}
	index := map[key]int{}
	var gs []group
	for _, l := range looks {
		if l.class != other {
			continue
		}
		t, seq := tokenOf(l.rec.Annotations)
		k := key{l.rec.Holder, t}
		i, ok := index[k]
		if !ok {
			i = len(gs)
			index[k] = i
			gs = append(gs, group{rec: l.rec})
		}
		if len(gs[i].seqs) > 0 && seq > slices.Max(gs[i].seqs) {
			gs[i].rec = l.rec // its latest write: the same token, a later count
		}
		gs[i].waits = append(gs[i].waits, l.wait)
		gs[i].seqs = append(gs[i].seqs, seq)
		gs[i].recs = append(gs[i].recs, l.rec)
	}
	for i := range gs {
		g := &gs[i]
		g.rec = quorumRecord(g.rec)
		slices.Sort(g.seqs)
		slices.Reverse(g.seqs)
		if len(g.seqs) >= q.majority {
			// The record of the write the Version names, which a
			// majority took: not a later one that fewer took (a reader
			// counts what the record carries as written, as on one
			// store).
			g.rec = quorumRecord(atSeq(g.recs, g.seqs[q.majority-1]))
			g.rec.Version = version(g.rec.Token, g.seqs[q.majority-1], "")
		} else {
			g.rec.Version = version(g.rec.Token, g.seqs[0], "?")
		}
		g.rec.RenewInterval = renewInterval(g.recs)
	}
	slices.SortStableFunc(gs, func(a, b group) int { return len(b.waits) - len(a.waits) })
	return gs
}

// atSeq returns the record of recs, records of one quorum term, that
// its write seq left (there is one when seq is a count recs show).
func atSeq(recs []lease.Record, seq uint64) lease.Record {
	for _, r := range recs {
		if _, s := tokenOf(r.Annotations); s == seq {
			return r
		}
	}
	return recs[0]
}

// renewInterval is the renew interval of the holder of recs, records of
// one quorum term: the one its members on compare-and-swap stores show
// (its Options.RenewInterval, the same on every member). A store that
// judges expiry itself (Azure) keeps none, so a record of its reads 0.
func renewInterval(recs []lease.Record) time.Duration {
	var d time.Duration
	for _, r := range recs {
		d = max(d, r.RenewInterval)
	}
	return d
}

// later reports whether a carries later quorum annotations than b.
func later(a, b lease.Record) bool {
	at, as := tokenOf(a.Annotations)
	bt, bs := tokenOf(b.Annotations)
	return at > bt || at == bt && as > bs
}

// quorumRecord is a member's record as the quorum's: its quorum token for
// its token, the quorum's annotations left out.
func quorumRecord(r lease.Record) lease.Record {
	r.Token, _ = tokenOf(r.Annotations)
	r.Annotations = own(r.Annotations)
	r.Nonce = ""
	return r
}

// yield releases the members this Lease took on the way to a majority that
// another contender is nearer to: one that holds a majority, or a member
// before them in the members' order.
func (q *Lease) yield(ctx context.Context) {
	q.mu.Lock()
	held := q.states()
	terms := q.terms()
	q.minority = time.Time{}
	for i := range q.members {
		if held[i] == campaign {
			q.members[i].state = none
		}
	}
	q.mu.Unlock()
	q.each(func(i int) bool { return held[i] == campaign }, func(i int, l lease.Lease) outcome {
		return outcome{err: l.Release(ctx, terms[i])}
	})
}

// terms returns each member's term.
func (q *Lease) terms() []lease.Term {
	t := make([]lease.Term, len(q.members))
	for i, m := range q.members {
		t[i] = m.term
	}
	return t
}

// keepMinority keeps the members an anchored Acquire took, short of a
// majority, so that the next attempt may complete it: until another
// contender holds a majority, takes a member before them, or, while
// another holds any member, for at most a TTL, so that contenders that
// each hold some never wait each other out.
func (q *Lease) keepMinority(ctx context.Context, looks []look, out []outcome) error {
	now := time.Now()
	q.mu.Lock()
	if q.minority.IsZero() {
		q.minority = now
	}
	contested := slices.ContainsFunc(looks, func(l look) bool { return l.class == other })
	over := contested && now.Sub(q.minority) >= q.opts.TTL
	q.mu.Unlock()
	if over {
		q.yield(ctx)
	}
	return q.refused(ctx, looks, out)
}

// refused is Acquire's error when it holds no majority: a HeldError for
// the largest group of members others hold, when any does, and otherwise
// the members' failures.
func (q *Lease) refused(ctx context.Context, looks []look, out []outcome) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if gs := q.groups(looks); len(gs) > 0 {
		g := gs[0]
		return &lease.HeldError{Record: g.rec, Wait: slices.Min(g.waits)}
	}
	return q.failed("acquire", out)
}

// lead writes a new quorum token, above every one this Lease has read or
// written, with the latest annotations of the records its members took
// over, to every member it holds, and makes the quorum term live when a
// majority took it.
func (q *Lease) lead(ctx context.Context) (lease.Term, error) {
	q.mu.Lock()
	held := q.states()
	terms := q.terms()
	var from lease.Annotations
	best := lease.Record{}
	for i := range q.members {
		if held[i] == campaign && (best.Annotations == lease.Annotations{} || later(lease.Record{Annotations: terms[i].Annotations}, best)) {
			best = lease.Record{Annotations: terms[i].Annotations}
		}
	}
	from = own(best.Annotations)
	if err := q.exhaustedLocked(); err != nil {
		q.mu.Unlock()
		q.yield(ctx)
		return lease.Term{}, err
	}
	q.seen++
	token, seq := q.seen, uint64(1)
	q.mu.Unlock()

	out := q.eachUntil(ctx, func(i int) bool { return held[i] == campaign }, func(ctx context.Context, i int, l lease.Lease) outcome {
		t := terms[i]
		t.Annotations = q.stamped(from, token, seq)
		nt, err := l.Renew(ctx, t)
		return outcome{term: nt, err: err}
	}, succeeded, func(i int, o outcome) {
		q.renewed(i, o, token)
	}, true)

	q.mu.Lock()
	defer q.mu.Unlock()
	wrote := 0
	for i, o := range out {
		switch {
		case !o.done:
		case o.err == nil:
			q.members[i].state, q.members[i].term = quorum, o.term
			wrote++
		case errors.Is(o.err, lease.ErrLost):
			q.members[i].state = none
		}
	}
	if err := ctx.Err(); err != nil || wrote < q.majority {
		for i := range q.members {
			if q.members[i].state == quorum {
				q.members[i].state = campaign
			}
		}
		if err != nil {
			return lease.Term{}, err
		}
		return lease.Term{}, fmt.Errorf("quorumlease: acquire: wrote quorum token %d to %d of %d members, a majority is %d: %w (%s)", token, wrote, len(q.members), q.majority, lease.ErrUnavailable, q.memberErrors(out))
	}
	for i := range q.members {
		if q.members[i].state == campaign {
			q.members[i].state = quorum
		}
	}
	q.live, q.token, q.seq, q.landed, q.written, q.minority = true, token, seq, seq, from, time.Time{}
	return q.liveTerm(from), nil
}

// exhausted returns lease.ErrCorrupt when the highest quorum token read
// or written cannot grow: a record (a hostile or corrupt annotation) shows
// the largest uint64, and the next token would wrap round to 0, below
// every earlier one (rule 10). As the engine's NextToken, no writer
// reaches it.
func (q *Lease) exhausted() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.exhaustedLocked()
}

func (q *Lease) exhaustedLocked() error {
	if q.seen == math.MaxUint64 {
		return fmt.Errorf("quorumlease: acquire: quorum token %d (annotation %q) cannot grow: %w", q.seen, annotationToken, lease.ErrCorrupt)
	}
	return nil
}

// liveTerm is the live quorum term with annotations a: its Sent is the
// latest instant by which a majority of its member terms were sent, so
// that a majority stays held until Sent plus the TTL, and its Version
// names its latest write that a majority took, as Observe's does.
func (q *Lease) liveTerm(a lease.Annotations) lease.Term {
	sent, _ := nth(q.sents(quorum), q.majority)
	return lease.Term{Holder: q.opts.Identity, Token: q.token, TTL: q.opts.TTL, Sent: sent, Version: version(q.token, q.landed, ""), Annotations: a}
}

// version is a quorum record's Version: its quorum token and the
// greatest count of its term's writes that a majority of the members
// reached (each by that write or a later one), and a mark for a record
// released ("r") or held by no majority ("?"). It changes only when a
// majority took writes sent since, so a reader that sees it change after
// a write whose answer was lost may count that write as landed, as on a
// single store.
func version(token, seq uint64, mark string) string {
	return strconv.FormatUint(token, 10) + "." + strconv.FormatUint(seq, 10) + mark
}

// liveRecord is the live quorum term as a record.
func (q *Lease) liveRecord() lease.Record {
	return lease.Record{Holder: q.opts.Identity, Token: q.token, TTL: q.opts.TTL, Annotations: q.written, RenewInterval: q.opts.RenewInterval, Version: version(q.token, q.landed, "")}
}

// liveWait is how long the live quorum term lasts without renewal.
func (q *Lease) liveWait(now time.Time) time.Duration {
	return max(0, q.liveTerm(q.written).Expires().Sub(now))
}
