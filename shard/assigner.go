package shard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// unknown is the stored version while a write's outcome is unknown: no
// listing shows it, so the next one settles the outcome (reconcile).
const unknown = "\x00unknown"

// errDeposed ends an assigner's task: a later assigner wrote the
// assignment.
var errDeposed = errors.New("shard: a later assigner wrote the assignment")

// errAtBound stops an assigner's writes: the group's records name Gens
// whose high half leaves no room above it (see atBound).
var errAtBound = errors.New("shard: the group's records name Gens at the bound")

// atBound is the task of an assigner term whose Gens would need a high
// half above maxToken, which only records a person put there name (2^31
// assigner terms are not run): it writes nothing until the term ends, so
// that no epoch repeats (Gens at the bound, each term's fence drawing a
// new low half, went back: red team 13), and nothing stops the group's
// workers (every one that took the lease stopped: red team 12). The
// shards stay where they are, none moves, and the error says which
// records to fix.
func (w *Worker) atBound(ctx context.Context, high uint64) error {
	w.cfg.Logger.Error("shard: assigner: the group's records name Gens that leave no room above them (the assigner lease's shard/gens annotation, the assignment's Gen, or an acknowledgement's); this assigner writes nothing and no shard moves until they are fixed", "high", high, "max", maxToken)
	<-ctx.Done()
	return nil
}

// errRaise ends an assigner's task: the group's records name Gens at or
// above the high half its lease record says (gensAnnotation), which only
// a later term, whose record says a higher one, may write above (see
// raise).
var errRaise = errors.New("shard: the group has Gens at or above this assigner term's; a new term writes above them")

// assigner is the state of one assigner term: what it wrote, and what it
// has seen of the workers.
type assigner struct {
	w      *Worker
	token  uint64 // the high half of every Gen of this term (gensOf)
	seq    uint64 // the low half of the latest Gen
	cur    *assignment
	stored string // the version of cur as stored: "" for none, or unknown
	fenced bool   // every known worker acknowledged the fence
	// stale is set when the assignment this term read at its start may not
	// be the latest written (see later): the fence then waits for the terms
	// that nothing the assigner reads names, too.
	stale  bool
	judge  *judge
	acks   map[string]ack    // what the acknowledgements seen say, by identity
	ackVer map[string]string // the version of the latest read
	// unvouched is the highest Gen that an acknowledgement ignored for
	// naming a term its worker's liveness record does not vouch for says
	// was applied or seen (see known).
	unvouched uint64
	shown     map[string]ack // what that version said
	// seenAt is when the term of acks first showed up, by identity: a
	// listing sent before it may not show that term's liveness (see
	// expired); and an earlier term of the worker is kept for a TTL from
	// it when the liveness record may have been deleted between (see dead).
	seenAt map[string]time.Time
	// names are the reads of the liveness records of the workers that own
	// shards in a term below the latest the assigner knows of them, by
	// identity (see readNames).
	names map[string]*nameRun
	// unreadSince is when the reads before the fence first failed (see
	// round).
	unreadSince time.Time
	// waitingOn is the worker the fence waited for in the latest round,
	// "" for none (see allAcknowledged).
	waitingOn string
	// leftAt is, by identity, the liveness record's version as listed
	// when it was found to name the term that left (see leftForGood).
	leftAt map[string]string
	// since is when the group was first found unsettled, zero while it
	// is settled; grants counts the shards given out since (see settle).
	since  time.Time
	grants int
	// ended is the liveness term that the assigner lease's record named
	// when this term won it (see session.campaign), zero if none: it has
	// stopped every shard and starts none, as from endedAt.
	ended   term
	endedAt time.Time
	// readFrom and buryFrom are the identities where the latest readAcks
	// and bury stopped at their deadline ("" when they went through): the
	// next begins there (see inTurn).
	readFrom, buryFrom string
}

// inTurn returns the identities of m in order, beginning at from (the
// first at or after it) and going round: a loop that may stop at a
// deadline visits each in its turn, the ones it did not reach first in
// the next round, and in the same order whatever a map's iteration would
// pick, so that a simulated run replays from its seed.
func inTurn[V any](m map[string]V, from string) []string {
	ids := slices.Sorted(maps.Keys(m))
	i, _ := slices.BinarySearch(ids, from)
	return slices.Concat(ids[i:], ids[:i])
}

// assign is the assigner lease's task: a round every listing interval
// until the term ends (twice as often until the fence is acknowledged,
// while the workers hurry to read it: see session.hurry), given
// the term the lease's record named when it was won (see
// session.campaign), the high half of its Gens, and a channel closed once
// the lease's record says so (gensAnnotation): nothing is written before.
func (w *Worker) assign(ctx context.Context, ended term, gens uint64, landed <-chan struct{}) error {
	lt, _ := runner.Term(ctx)
	if err := checkTokenFits("assigner", lt.Token); err != nil {
		w.fatal(err)
		return err
	}
	if gens > maxToken {
		return w.atBound(ctx, gens)
	}
	select {
	case <-landed:
	case <-ctx.Done():
		return nil
	}
	a := &assigner{w: w, token: gens, acks: map[string]ack{}, ackVer: map[string]string{}, shown: map[string]ack{}, seenAt: map[string]time.Time{}, names: map[string]*nameRun{}, leftAt: map[string]string{}, since: time.Now(), ended: ended, endedAt: time.Now()}
	if ended.Token != 0 {
		w.cfg.Logger.Info("shard: assigner: the previous assigner's liveness term has ended with its assigner term; its shards are free", "identity", ended.ID, "token", ended.Token)
	}
	for {
		next := time.Now().Add(w.cfg.listInterval())
		if !a.fenced {
			next = time.Now().Add(w.cfg.listInterval() / 2)
		}
		if err := a.round(ctx, next); err != nil {
			switch {
			case errors.Is(err, errDeposed) || errors.Is(err, errRaise):
				return err
			case errors.Is(err, errAtBound):
				return w.atBound(ctx, a.known()>>32+1)
			}
			w.fatal(err)
			return err
		}
		if at, ok := a.due(); ok && at.Before(next) {
			next = at
		}
		ctxtime.Sleep(ctx, time.Until(next))
		if ctx.Err() != nil {
			return nil
		}
	}
}

// due returns when a worker that owns shards and seems to have stopped
// renewing can be judged expired, if one does (see judge.due).
func (a *assigner) due() (time.Time, bool) {
	if a.judge == nil || a.cur == nil {
		return time.Time{}, false
	}
	ids := make([]string, 0, len(a.cur.Members))
	for _, m := range a.cur.Members {
		ids = append(ids, m.ID)
	}
	return a.judge.due(ids, time.Now())
}

// round lists the group, reads the acknowledgements that changed (until
// next, when the next round is due, so that slow reads do not leave a gap
// between listings that would break every count towards expiry; the rest
// are read in later rounds), and writes the next assignment if it differs.
// It returns an error only when the assigner must stop.
func (a *assigner) round(ctx context.Context, next time.Time) error {
	cfg := &a.w.cfg
	prefix := cfg.Group + "/"
	sent := time.Now()
	listing, err := a.w.list(ctx, prefix)
	now := time.Now()
	if err != nil {
		if a.judge != nil {
			a.judge.failed()
		}
		clear(a.names)
		cfg.Logger.Warn("shard: assigner: listing failed", "err", err)
		return nil
	}
	members, acks := map[string]string{}, map[string]string{}
	for k, v := range listing {
		switch rest := strings.TrimPrefix(k, prefix); {
		case strings.HasPrefix(rest, "members/"):
			if id, ok := memberID(memberKey(cfg.Group, ""), k); ok {
				members[id] = v
			}
		case strings.HasPrefix(rest, "acks/"):
			acks[strings.TrimPrefix(rest, "acks/")] = v
		}
	}
	if a.cur == nil {
		// Read before the fence, which the workers acknowledge over them:
		// every one listed, however long it takes (no count towards
		// expiry runs before the fence, so slow reads break none), since
		// the fence's Gen goes above every Gen they name (raise). A
		// fence written with one of them unread could repeat a Gen that
		// its worker applied from an earlier assigner's write, and that
		// worker's acknowledgement of it would then pass for one of the
		// fence (see load). A read that fails leaves the fence to a later
		// round.
		//
		// For a TTL: an acknowledgement that can never be read (an object
		// a lifecycle rule archived, a key whose reads hang) would keep
		// every fence from being written, and nothing would run again.
		// After that the fence is written without them: an
		// acknowledgement counts for the fence only if it names the
		// fence's Gen, whose low half is random (see fence), and one that
		// names a Gen above it, once read, raises the Gens again (see
		// outrun). A read that vouch cannot check counts as unread.
		if !a.readAcks(ctx, acks, time.Time{}) {
			unread := a.unreadOf(acks)
			if a.unreadSince.IsZero() {
				a.unreadSince = now
			}
			if now.Sub(a.unreadSince) < cfg.TTL {
				cfg.Logger.Warn("shard: assigner: acknowledgements could not be read; the fence waits for them, for a TTL", "identities", slices.Sorted(maps.Keys(unread)))
				return nil
			}
			cfg.Logger.Error("shard: assigner: acknowledgements could not be read for a TTL; writing the fence without them", "identities", slices.Sorted(maps.Keys(unread)))
		}
		return a.load(ctx, listing[assignmentKey(cfg.Group)], acks) // the next listing shows how the fence went
	}
	// Watched besides the listed members: the owners the assignment names,
	// and every worker with an acknowledgement, whose liveness key may have
	// been deleted while its term runs shards (an absent key counts
	// towards expiry as a version of its own).
	var watch []string
	for _, m := range a.cur.Members {
		watch = append(watch, m.ID)
	}
	for id := range acks {
		watch = append(watch, id)
	}
	broken := a.judge.saw(members, watch, sent, now)
	a.readAcks(ctx, acks, next)
	a.readNames(ctx, members, broken)
	a.bury(ctx, next)
	if v := listing[assignmentKey(cfg.Group)]; v != a.stored {
		if err := a.reconcile(ctx, v); err != nil {
			return err
		}
	}
	if err := a.outrun(); err != nil {
		return err
	}
	if a.stored == unknown {
		return nil // settled by the next listing
	}
	if !a.fenced {
		if !a.allAcknowledged(ctx, a.cur.Gen) || a.stale && !a.judge.unknownExpired(now) {
			return nil
		}
		a.fenced = true
	}
	planned, changed := plan(a.cur, a, a.nextGen())
	expect := a.expect()
	switch {
	case changed:
		planned.Expect = expect
		a.grants += planned.granted()
		a.write(ctx, planned)
	case !expect.IsZero() && expect.Sub(a.cur.Expect).Abs() > cfg.listInterval():
		a.rewriteExpecting(ctx, expect)
	}
	a.settle(sent, changed)
	return nil
}

func (a *assigner) nextGen() uint64 { return a.token<<32 | (a.seq + 1) }

// expect returns the wall-clock time at which the assigner expects to free
// a crashed worker's shards (see due), or zero.
func (a *assigner) expect() time.Time {
	at, ok := a.due()
	if !ok {
		return time.Time{}
	}
	return time.Now().Add(time.Until(at)).Round(0)
}

// rewriteExpecting writes the current assignment again, ownership
// unchanged, with a new Gen and Expect, so that the workers read the
// assignment just after a crashed worker can be judged expired: one write
// per crash, and one read per worker.
func (a *assigner) rewriteExpecting(ctx context.Context, expect time.Time) {
	again := *a.cur
	again.Gen, again.Expect = a.nextGen(), expect
	a.write(ctx, &again)
}

// load reads the assignment at the start of the term, or starts one, and
// writes the fence: the same owners, every epoch made this term's, so that
// no shard starts on an epoch an earlier assigner gave out. An assignment
// that cannot be read (lease.ErrCorrupt: bytes that are not one, or an
// object the store cannot return whole) is as good as none: the fence,
// with no owners, is written over the version listed, so that every
// worker stops what it runs and nothing starts until all have said so. A
// read that fails otherwise leaves cur nil, for the next round. acks are
// the acknowledgements listed with it, read just before (see later).
func (a *assigner) load(ctx context.Context, listed string, acks map[string]string) error {
	cfg := &a.w.cfg
	data, version, err := a.w.get(ctx, assignmentKey(cfg.Group), "")
	var cur *assignment
	if err == nil {
		if cur, err = decodeAssignment(data); err == nil {
			if err := cur.checkGroup(cfg.Shards, cfg.MaxPerWorker, cfg.TTL, cfg.RenewInterval); err != nil {
				return err
			}
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, lease.ErrNoRecord), errors.Is(err, lease.ErrCorrupt):
		if errors.Is(err, lease.ErrCorrupt) {
			cfg.Logger.Error("shard: assigner: the assignment object cannot be read; writing a fence with no owners over it", "err", err)
			version = cmp.Or(version, listed)
		}
		cur = &assignment{Shards: cfg.Shards, MaxPerWorker: cfg.MaxPerWorker, TTL: cfg.TTL, Renew: cfg.RenewInterval, Slots: make([]slot, cfg.Shards)}
		for s := range cur.Slots {
			cur.Slots[s].Owner = -1
		}
	case lease.Retryable(err):
		cfg.Logger.Warn("shard: assigner: reading the assignment failed; will retry", "err", err)
		return nil
	default:
		return fmt.Errorf("shard: assigner: reading the assignment: %w", err)
	}
	a.stale = a.later(cur.Gen, acks)
	if err := a.raise(cur.Gen); err != nil {
		return err
	}
	a.judge = newJudge(cur.TTL, cur.Renew)
	if cfg.expireAfter > 0 {
		a.judge.ttl = cfg.expireAfter
	}
	a.cur, a.stored = cur, version
	a.fence(ctx, cur)
	return nil
}

// fence writes the first assignment of this term's Gens at a.token: cur's
// owners, every epoch made the fence's Gen, so that no shard starts on an
// epoch an earlier assigner gave out; nothing is planned until every
// worker known has acknowledged it (allAcknowledged). Its low half is 30
// random bits, the Gens after it counting on from them: a fence's Gen
// tells it from an earlier assigner's with the same high half (its lease
// record deleted: the same token again, or raised to the same), whose
// acknowledgements would otherwise pass for the fence's, and which its
// workers, having applied it, would ignore the fence for.
func (a *assigner) fence(ctx context.Context, cur *assignment) {
	fence := *cur
	a.seq = uint64(a.w.random32() >> 2)
	fence.Gen, fence.Fence, a.fenced = a.token<<32|a.seq, true, false
	fence.FenceGen = fence.Gen
	fence.Slots = slices.Clone(cur.Slots)
	for s := range fence.Slots {
		fence.Slots[s].Epoch = fence.Gen
	}
	a.write(ctx, &fence)
}

// outrun ends this term (raise) when an acknowledgement read since the
// last fence names a Gen above the latest this term wrote (applied or
// seen) at or above this term's high half: a worker that applied Gens
// above this term's takes its fence for a restore and never acknowledges
// it, and says so (session.poll); the group would wait for it for as long
// as it lives. The next term writes above them.
func (a *assigner) outrun() error {
	if a.known() <= a.cur.Gen {
		return nil
	}
	return a.raise(0)
}

// unreadOf returns the acknowledgements of listed not read at the
// version listed, by identity.
func (a *assigner) unreadOf(listed map[string]string) map[string]string {
	out := map[string]string{}
	for id, v := range listed {
		if a.ackVer[id] != v {
			out[id] = v
		}
	}
	return out
}

// raise ends this term (errRaise) when a Gen it knows of has a high half
// at or above its own (a.token, which the lease's record says:
// gensAnnotation): read, the Gen of the assignment read; the Gens the
// acknowledgements read say their workers applied, and their processes
// had seen (ack.Seen); and the highest this process has read or written
// (Worker.genSeen), which it notes them in, so that this worker's next
// term, and the next assigner after it, take their high half above. A
// lease token orders assigner terms only while the lease's record lasts
// and only for a contender that has seen it: a record deleted (a
// lifecycle rule, a person) or restored as an earlier holder wrote it
// gives a process that started since a token at or below one already
// used, whose Gens the running workers would take for a restore's, never
// acknowledging its fence (the group halts), and whose epochs would not
// increase on a worker that applied them. A Gen whose high half is
// maxToken leaves no room above it: only a record put there names one
// (2^31 assigner terms are not run), and the term writes nothing more
// (errAtBound, atBound).
func (a *assigner) raise(read uint64) error {
	known := max(read, a.known())
	switch high := known >> 32; {
	case high < a.token:
		return nil
	case high >= maxToken:
		return errAtBound
	default:
		a.w.cfg.Logger.Warn("shard: assigner: the group has Gens at or above this term's (the assigner lease's record was deleted or restored); ending this term, so that the next writes above them", "high", a.token, "gen", known)
		a.w.genSeen.note(known)
		return errRaise
	}
}

// known returns the highest Gen that the acknowledgements read name
// (applied or seen) and that this process has read or written.
func (a *assigner) known() uint64 {
	known := max(a.w.genSeen.get(), a.unvouched)
	for _, k := range a.acks {
		known = max(known, k.Applied, k.Seen)
	}
	return known
}

// later reports whether an assignment later than gen, the one read at the
// start of the term (0 for none), may have been written: an
// acknowledgement listed says that its worker applied one, or could not be
// read. A later assignment may have given shards to a term that nothing
// the assigner reads names (its liveness record and its acknowledgement
// deleted); a restore or a delete of the assignment hid it.
func (a *assigner) later(gen uint64, listed map[string]string) bool {
	for id, v := range listed {
		if a.ackVer[id] != v || a.acks[id].Applied > gen {
			return true
		}
	}
	return false
}

// write stores next over the version last stored, and makes it current
// whatever the outcome: its decisions stand, and a write whose outcome is
// unknown is settled by the next listing (reconcile).
func (a *assigner) write(ctx context.Context, next *assignment) {
	cfg := &a.w.cfg
	a.seq = next.Gen & (1<<32 - 1)
	a.w.genSeen.note(next.Gen)
	prev := a.stored
	a.cur, a.stored = next, unknown
	v, err := a.w.put(ctx, assignmentKey(cfg.Group), next.encode(), prev)
	if err != nil {
		cfg.Logger.Warn("shard: assigner: writing the assignment failed; the next listing settles it", "gen", next.Gen, "err", err)
		return
	}
	a.stored = v
}

// reconcile settles a stored version other than the one this term last
// wrote: its own write whose answer was lost, a restore of an earlier
// assignment, a later assigner's, or an object that cannot be read (see
// unreadable).
func (a *assigner) reconcile(ctx context.Context, listed string) error {
	cfg := &a.w.cfg
	want := a.cur.encode()
	if listed == "" { // deleted: write it anew
		a.rewrite(ctx, "")
		return nil
	}
	data, v, err := a.w.get(ctx, assignmentKey(cfg.Group), "")
	if errors.Is(err, lease.ErrCorrupt) {
		a.unreadable(ctx, listed, err)
		return nil
	}
	if err != nil {
		return nil
	}
	if bytes.Equal(data, want) {
		a.stored = v
		return nil
	}
	got, err := decodeAssignment(data)
	switch {
	case err != nil:
		a.unreadable(ctx, v, err)
		return nil
	case got.Gen > a.cur.Gen:
		return fmt.Errorf("%w (gen %d after this term's %d)", errDeposed, got.Gen, a.cur.Gen)
	}
	cfg.Logger.Warn("shard: assigner: the assignment went back (a restore, or a write that did not land); writing it again", "stored_gen", got.Gen, "gen", a.cur.Gen)
	a.stored = v
	a.rewrite(ctx, v)
	return nil
}

// unreadable writes a fence over an assignment at version that cannot be
// read (why): bytes that are not an assignment, or an object the store
// cannot return whole (a DynamoDB head item restored after its parts were
// deleted). Nobody could read it, nor apply it; but nor can this term
// tell whose it was, so it does not write over it as over an earlier one
// of its own: the fence gives what this term's latest assignment gives,
// starts nothing, and every worker acknowledges it before the next plan,
// as at the start of a term. The write is conditional on version: an
// assignment written since is settled by the next listing.
func (a *assigner) unreadable(ctx context.Context, version string, why error) {
	a.w.cfg.Logger.Error("shard: assigner: the assignment object cannot be read; writing a fence over it", "err", why)
	fence := *a.cur
	fence.Gen, fence.Fence = a.nextGen(), true
	a.stored, a.fenced = version, false
	a.write(ctx, &fence)
}

// rewrite writes the current assignment again with a new Gen, so that
// every worker that read the stored one sees it as newer.
func (a *assigner) rewrite(ctx context.Context, version string) {
	again := *a.cur
	again.Gen = a.nextGen()
	a.stored = version
	a.write(ctx, &again)
}

// readAcks reads the acknowledgements whose version changed, until
// deadline (none if zero), merging each with what was known of its worker
// (a restored one takes nothing away). It reports whether it read every
// one: none left for a later round by the deadline, and no read failed,
// except for an acknowledgement gone since the listing (or one that cannot
// be read, lease.ErrCorrupt), which names nothing; its version stays
// unread, so that later reports that an assignment later than the one
// read may have been written.
func (a *assigner) readAcks(ctx context.Context, listed map[string]string, deadline time.Time) (all bool) {
	cfg := &a.w.cfg
	from := a.readFrom
	a.readFrom = ""
	all = true
	for _, id := range inTurn(listed, from) {
		v := listed[id]
		if a.ackVer[id] == v {
			continue
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			a.readFrom = id
			return false
		}
		data, got, err := a.w.get(ctx, ackKey(cfg.Group, id), a.ackVer[id])
		if err != nil {
			all = all && namesNothing(err)
			continue
		}
		if data != nil {
			k, err := decodeAck(data)
			if err == nil && k.Token > a.acks[id].Token {
				if err = a.vouch(ctx, id, k); err != nil && !errors.Is(err, errUnvouched) {
					all = false
					continue // its liveness record could not be read: a later round reads both again
				}
			}
			if errors.Is(err, errUnvouched) {
				// Its term is none the assigner waits for, but the Gens it
				// says its worker applied and saw were given out: the next
				// go above them (red team 12: a worker whose liveness record
				// was deleted, alive and acknowledged, started its shards
				// again at lower epochs).
				a.unvouched = max(a.unvouched, k.Applied, k.Seen)
			}
			if err != nil {
				cfg.Logger.Warn("shard: assigner: ignoring an acknowledgement", "identity", id, "err", err)
			} else {
				merged := k.merge(a.acks[id])
				if merged.Token != a.acks[id].Token {
					a.seenAt[id] = time.Now()
				}
				a.acks[id], a.shown[id] = merged, k
			}
		}
		a.ackVer[id] = got
	}
	return all
}

// errUnvouched: an acknowledgement names a term that the worker's
// liveness record does not vouch for (see vouch).
var errUnvouched = errors.New("its worker's liveness record cannot have been acquired by the term it names")

// vouch checks k, an acknowledgement of id naming a term above every one
// of id that the assigner knows, against id's liveness record, read now:
// it must be id's, with a token at least k's liveness token (leaseOf). A
// term writes its first acknowledgement only after it acquired that
// record, whose tokens only grow while it lasts, so a lower token means
// the record was deleted or restored since (the term ends at its next
// renewal, and its worker's next term writes its own) or that no term of
// id wrote k (rule 8: a copy from another group or bucket, a tool's
// write). Such a term is not taken as id's latest: taken, it would stand
// for the worker in the plan, and its After could end the live term's
// claim to its shards (see dead). An error other than errUnvouched is a
// read that failed.
func (a *assigner) vouch(ctx context.Context, id string, k ack) error {
	l, err := a.w.cfg.Store.Lease(memberKey(a.w.cfg.Group, id), a.w.cfg.leaseOptions())
	if err != nil {
		return err
	}
	rec, err := l.Observe(ctx)
	switch {
	case errors.Is(err, lease.ErrNoRecord):
		return fmt.Errorf("%w: term %d (liveness token %d), and the record is gone", errUnvouched, k.Token, k.leaseOf())
	case err != nil:
		return err
	case rec.Holder != id || rec.Token < k.leaseOf():
		return fmt.Errorf("%w: term %d (liveness token %d), the record's holder %q, token %d", errUnvouched, k.Token, k.leaseOf(), rec.Holder, rec.Token)
	}
	return nil
}

// bury writes, for each worker whose latest term the assigner has read is
// dead (see dead) while its acknowledgement as stored does not say so (a
// restore may have put back one that did not), that the term
// left, until deadline: true of the term from then on, so that the
// assigners after this one do not wait for it, or count a TTL of their own
// towards its liveness's expiry, before the first assignment of their
// term. One write per worker term that ended without leaving. A write that
// fails is tried again in a later round; one that meets a change of the
// worker's own (a later term's hello, say) fails, and the next round reads
// that instead.
func (a *assigner) bury(ctx context.Context, deadline time.Time) {
	cfg := &a.w.cfg
	from := a.buryFrom
	a.buryFrom = ""
	for _, id := range inTurn(a.acks, from) {
		k := a.acks[id]
		if shown := a.shown[id]; shown.Left && shown.Token == k.Token || !a.dead(term{id, k.Token}) {
			continue
		}
		if time.Now().After(deadline) {
			a.buryFrom = id
			return
		}
		k.Left = true
		v, err := a.w.put(ctx, ackKey(cfg.Group, id), k.encode(), a.ackVer[id])
		if err != nil {
			continue
		}
		a.acks[id], a.ackVer[id], a.shown[id] = k, v, k
		cfg.Logger.Info("shard: assigner: a worker's term ended without leaving; its acknowledgement now says so", "identity", id, "token", k.Token)
	}
}

// allAcknowledged reports whether every worker whose liveness key the
// assigner lists, and whose liveness has not expired, has acknowledged gen,
// the fence's (named it: see fence), or left. A worker whose latest term the assigner has read is the ended
// one (a.ended) has nothing to acknowledge. A term that left counts only
// while the worker's liveness record names it (see leftForGood): an
// acknowledgement restored from an earlier term that left may hide the
// hello of a later one, which runs shards that an assignment restored too
// does not give it. The worker it waits for is watched (waitingOn), so
// that readNames reads its liveness record: a restore may have put back
// the acknowledgement of an earlier term of the worker, with a greater
// token, that no process runs, over the live term's, and the fence would
// wait for it for as long as the live term renews. Once the record has
// named other terms for a TTL, that term is dead (see dead), bury writes
// it left, and the live term finds it and ends; its worker's next term
// acknowledges the fence.
func (a *assigner) allAcknowledged(ctx context.Context, gen uint64) bool {
	now := time.Now()
	// In order: the first worker found waiting ends the loop, and the
	// liveness records read before it (leftForGood) are calls to the
	// store, which a simulated run replays in the same order.
	for _, id := range slices.Sorted(maps.Keys(a.judge.counts)) {
		k := a.acks[id]
		if a.expired(id, now) || k.Applied == gen || (term{id, k.Token}) == a.ended {
			continue
		}
		if !k.Left || !a.leftForGood(ctx, id, k) {
			a.waitingOn = id
			return false
		}
	}
	a.waitingOn = ""
	return true
}

// leftForGood reports whether id's liveness record, read once per listed
// version, names the term k, which left: no later term of the worker had
// acquired it when it was read (one that acquires it afterwards has run
// nothing an earlier assignment gave), and the record does not name
// another term (shard/live: a term that acquired it anew after a delete
// has k's liveness token again). An acknowledgement that does not say
// which liveness term it is (an earlier version's) never counts: the
// fence then waits for the worker's acknowledgement or its expiry.
func (a *assigner) leftForGood(ctx context.Context, id string, k ack) bool {
	listed := a.judge.counts[id].last
	if v, ok := a.leftAt[id]; ok && v == listed {
		return true
	}
	l, err := a.w.cfg.Store.Lease(memberKey(a.w.cfg.Group, id), a.w.cfg.leaseOptions())
	if err != nil || k.Lease == 0 {
		return false
	}
	rec, err := l.Observe(ctx)
	if err != nil || rec.Holder != id || rec.Token != k.Lease {
		return false
	}
	if name := rec.Annotations.Get(liveAnnotation); name != "" && name != liveName(k.Token) {
		return false // another term renews it, with k's token again after a delete
	}
	a.leftAt[id] = listed
	return true
}

// expired reports whether id's liveness has expired (judge.expired) for
// every term of it that the assigner knows: a term whose hello was first
// read after the latest listing was sent may have acquired its liveness
// after that listing, which showed the version before it; the next
// listing shows that term's own.
func (a *assigner) expired(id string, now time.Time) bool {
	return a.judge.expired(id, now) && a.seenAt[id].Before(a.judge.lastSent)
}

// over reports whether term t's liveness is over: judged expired, or the
// ended term (a.ended); and if so, for how long.
func (a *assigner) over(t term, now time.Time) (bool, time.Duration) {
	switch {
	case t == a.ended:
		return true, now.Sub(a.endedAt)
	case !a.expired(t.ID, now):
		return false, 0
	}
	return true, a.judge.expiredFor(t.ID, now)
}

// dead implements view. A term whose liveness is over while a new process
// of its worker said it is restarting (ack.Restarting) is kept, its shards
// with it, until that process's term says hello or a TTL has passed, so
// that the restarted worker gets its shards back.
//
// A later term of the same worker ends t at once when its liveness lease
// took over the record that named t (ack.After, as its liveness record,
// read, says too: see nameRun.took): t had released it after
// its shards returned, or its lease was judged expired by rule 2, after
// its renew deadline; either way t has stopped for good, and a record of
// t's put back later cannot be renewed by a term that stepped down.
// Otherwise t's liveness record may have been deleted (or restored) in
// between, and the later term acquired it anew while t may still run,
// until its next renewal fails, and at the latest at its renew deadline:
// t is dead once the liveness record, read at every version listed, has
// named other terms (or none) for a TTL (see readNames). Neither the later
// term's token nor its acknowledgement says that t's record was taken from
// it: a restore brings back the acknowledgement, and the liveness record,
// of a term that began before t with a greater token, while t renews.
//
// That count ends the latest term the assigner knows of a worker too, one
// whose acknowledgement a restore brought back while the term that renews
// the record runs shards below it: bury then writes it left, over the
// running term's acknowledgement, which finds it at its next check and
// ends (session.laterAcked), so that its worker's next term, above it,
// takes over its record and frees its shards (ack.After). Without it, a
// term whose own acknowledgement was put back after the restore would
// keep its shards for as long as it lives, and no other worker that
// joins would get any.
func (a *assigner) dead(t term) bool {
	k := a.acks[t.ID]
	now := time.Now()
	over, since := a.over(t, now)
	switch {
	case k.Token == t.Token && k.Left, a.namedOthersFor(t, now) >= a.judge.ttl:
		return true
	case k.Token > t.Token:
		return over || t.Token >= 1<<32 && k.After == liveName(t.Token) && a.names[t.ID].took(k)
	case !over:
		return false
	}
	return k.Token != t.Token || !k.Restarting || since >= a.judge.ttl
}

// nameRun is the assigner's reads of one worker's liveness record: the
// version listed when it last read it, and what each read named, oldest
// first, within the latest unbroken run of listings (judge.saw).
type nameRun struct {
	version string
	reads   []nameRead
	// afters are the terms that the records read named as taken over
	// (afterAnnotation), by the name of the term that took them over.
	afters map[string]string
}

// took reports whether a read of the liveness record found it naming
// k's term and the term it took over as k.After says: an acknowledgement
// says what it likes (a copy, a tool's write), but a liveness record
// names the term that renews it.
func (r *nameRun) took(k ack) bool {
	return r != nil && r.afters[liveName(k.Token)] == k.After
}

// nameRead is one read of a liveness record: when it returned, and the
// term the record named (liveAnnotation), "" when it named none of its
// worker's (gone, or another's).
type nameRead struct {
	at   time.Time
	name string
}

// readNames reads, in order of identity, the liveness record of each
// worker that owns shards in the current assignment in a term below the
// latest the assigner knows of it (see dead), and of the worker the fence
// waits for (see allAcknowledged), whenever the listing shows
// a version it has not read; it forgets the others. A listing that broke
// the judge's run (broken), or a read that fails, begins the reads anew.
func (a *assigner) readNames(ctx context.Context, members map[string]string, broken bool) {
	cfg := &a.w.cfg
	pending := map[string]bool{}
	if a.waitingOn != "" {
		pending[a.waitingOn] = true
	}
	for _, m := range a.cur.Members {
		if a.acks[m.ID].Token > m.Token {
			pending[m.ID] = true
		}
	}
	for id := range a.names {
		if !pending[id] {
			delete(a.names, id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(pending)) {
		r := a.names[id]
		v, ok := members[id]
		if !ok {
			v = absent
		}
		switch {
		case r == nil:
			r = &nameRun{afters: map[string]string{}}
			a.names[id] = r
		case broken:
			r.version, r.reads = "", nil
		case v == r.version:
			continue
		}
		name, after, err := a.liveNameOf(ctx, id)
		if err != nil {
			cfg.Logger.Warn("shard: assigner: reading a liveness record failed", "identity", id, "err", err)
			r.version, r.reads = "", nil
			continue
		}
		if name != "" && after != "" {
			r.afters[name] = after
		}
		now := time.Now()
		for len(r.reads) > 1 && now.Sub(r.reads[0].at) > 2*a.judge.ttl {
			r.reads = r.reads[1:] // an earlier start only makes a count later
		}
		r.version, r.reads = v, append(r.reads, nameRead{now, name})
	}
}

// liveNameOf reads id's liveness record and returns the term it names and
// the term that one took over, "" if none of id's: no record, or another's.
func (a *assigner) liveNameOf(ctx context.Context, id string) (name, after string, err error) {
	l, err := a.w.cfg.Store.Lease(memberKey(a.w.cfg.Group, id), a.w.cfg.leaseOptions())
	if err != nil {
		return "", "", err
	}
	rec, err := l.Observe(ctx)
	switch {
	case errors.Is(err, lease.ErrNoRecord):
		return "", "", nil
	case err != nil:
		return "", "", err
	case rec.Holder != id:
		return "", "", nil
	}
	return rec.Annotations.Get(liveAnnotation), rec.Annotations.Get(afterAnnotation), nil
}

// namedOthersFor returns for how long the reads of t's worker's liveness
// record (readNames) have named terms other than t, without a break: from
// the first read after the latest that named t, and after the worker's
// latest term was first read (seenAt): a term acquires its record before
// its hello, and names it only from its first renewal on, which may come
// late; its renew deadline counts from the acquisition. A term renews its record
// every renew interval, conditionally on the version it wrote, so once a
// read has found the record naming another, t's renewals since have
// failed (unless a restore put its own back, which a later listing shows
// and a read finds), and t stops by its renew deadline, counted from a
// renewal sent before that read.
func (a *assigner) namedOthersFor(t term, now time.Time) time.Duration {
	r := a.names[t.ID]
	if r == nil {
		return 0
	}
	name, from := liveName(t.Token), 0
	for i, rd := range r.reads {
		if rd.name == name || rd.at.Before(a.seenAt[t.ID]) {
			from = i + 1
		}
	}
	if from == len(r.reads) {
		return 0
	}
	return now.Sub(r.reads[from].at)
}

// released implements view.
func (a *assigner) released(t term, gen uint64) bool {
	k := a.acks[t.ID]
	return k.Token == t.Token && k.Applied >= gen
}

// live implements view: the workers alive (see judge.alive) whose latest
// term said hello and has not left.
func (a *assigner) live() []term {
	now := time.Now()
	var out []term
	for id := range a.judge.counts {
		k := a.acks[id]
		if a.judge.alive(id, now) && k.Token > 0 && !k.Left && (term{id, k.Token}) != a.ended && a.namedOthersFor(term{id, k.Token}, now) < a.judge.ttl {
			out = append(out, term{id, k.Token})
		}
	}
	slices.SortFunc(out, func(x, y term) int { return strings.Compare(x.ID, y.ID) })
	return out
}
