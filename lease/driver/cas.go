package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// CAS is a compare-and-swap store holding one lease record at one key.
// Memory, S3 and DynamoDB implement it; NewCAS turns one into a
// lease.Lease. A driver only moves records: it judges nothing. All timing,
// fencing and resolution of unknown outcomes lives once, in the engine.
//
// Every method must return promptly once ctx ends. Errors must wrap one of
// package lease's sentinels, or ErrConflict: a driver maps its SDK's
// errors to them once. Records passed to Create and Replace have passed
// Check. A record that Get returns must have every field that Create or
// Replace stored (Version aside), Annotations included: the engine matches
// a record read back to its write with SameWrite, which compares them. The
// codecs in this package (EncodeJSON, EncodeNonce) do that for the drivers
// that use them.
type CAS interface {
	// Get returns the stored record with its Version set. It returns an
	// error wrapping lease.ErrNoRecord when the key holds nothing,
	// lease.ErrCorrupt when it holds something that is not a record, and
	// lease.ErrNotFound when the bucket or table itself is missing.
	Get(ctx context.Context) (lease.Record, error)
	// Create stores r only if the key holds nothing, and returns the new
	// version. It returns ErrConflict if the key holds anything.
	Create(ctx context.Context, r lease.Record) (version string, err error)
	// Replace stores r only if the key's current version is version, and
	// returns the new version, which must differ from every version the key
	// has had, as long as r's Nonce is fresh. It returns ErrConflict if the
	// version differs or the key holds nothing.
	Replace(ctx context.Context, r lease.Record, version string) (newVersion string, err error)
}

// NewCAS returns a lease.Lease over a CAS driver. It is the single implementation
// of the safety rules for compare-and-swap stores:
//
//   - Expiry is judged on this contender's monotonic clock: it takes over a
//     held record only after one of its reads returned the same version,
//     unchanged, a full TTL (the holder's, as recorded) earlier, and only by
//     a conditional write on that version. The Lease is a lease.Watcher:
//     its Wait tells that judgement without writing (leasehold break).
//   - Every write carries a fresh nonce, so every write changes the version.
//   - Every acquisition writes one more than the greater of the previous
//     token and the highest this Lease has read or tried to write
//     (NextToken), and records are never deleted: release marks the record
//     released and keeps its token. A record deleted all the same ends its
//     holder's term at the next renewal (lease.ErrLost), and a contender
//     never writes a token at or below that highest, so a record created
//     anew continues the count, and a token tried is not tried again.
//   - A write whose outcome is unknown (a timeout, a lost response, even a
//     failed condition, which a retried write can report although it
//     succeeded) is resolved by reading the record back and comparing
//     holder, token and nonce.
//   - Nothing is written before a driver that is a Verifier has found its
//     store keeping the contract; a store that does not is refused with
//     lease.ErrUnsafeStore.
func NewCAS(d CAS, opts lease.Options) (lease.Lease, error) {
	if d == nil {
		return nil, &lease.OptionError{Field: "driver", Value: nil, Reason: "must not be nil"}
	}
	opts, err := opts.Validate()
	if err != nil {
		return nil, err
	}
	return &casLease{d: d, opts: opts, acquiring: make(chan struct{}, 1)}, nil
}

type casLease struct {
	d    CAS
	opts lease.Options
	// verified: the driver's Verify (if it is a Verifier) returned nil.
	verified atomic.Bool
	// acquiring is held by the Lease's one Acquire under way: a Lease is
	// one contender (DESIGN rule 14), and two of its Acquires that read
	// before either wrote would judge the same record, and could both win
	// it, with one token, should a restore put it back between their
	// writes.
	acquiring chan struct{}

	mu sync.Mutex
	// seen is this contender's count towards expiry: the version its
	// latest unbroken run of reads returned (absent when they found no
	// record), when the first of them returned, when the latest was sent,
	// and the longest gap the run allows (the holder's renew interval).
	seen struct {
		version  string
		at, sent time.Time
		gap      time.Duration
		ttl      time.Duration // of the latest record read if held: one that vanishes is waited out
		token    uint64        // the highest token read or written: a lower one is a restore
		holder   string        // token's holder: another at that token is a restore too
		live     time.Duration // the TTL of token's record
		restored bool          // the run's record has a lower token: held or not, it is waited out
		// horizon is a TTL, the live holder's or the restored record's
		// if longer, after this Lease last read a restore: until then no
		// record is taken at once, nor before its count ends, since
		// records after the restore (a takeover of the restored body, at
		// any token, and its release) may all descend from it while the
		// holder it hid still leads (red team 11).
		horizon time.Time
	}
	// unseen is this Lease's latest Acquire write whose outcome was
	// unknown, and when it was sent: the one record it may take over at
	// once (see Acquire). Cleared by any other record read, and by every
	// write that succeeds.
	unseen struct {
		rec  lease.Record
		sent time.Time
	}
	// pending are the writes continuing a tenure (renewals, keeps,
	// releases) whose outcome was unknown since its latest successful
	// write, and acked that latest successful write: a tenure found
	// continuing at one of them goes on from it (a caller may hold a term
	// older than its latest renewal, whose answer it did not wait for).
	pending []lease.Record
	acked   lease.Record
	// landed is the latest record a read found at one of pending: a write
	// of the tenure whose answer was lost, seen landed. The next rewrite
	// of the tenure starts from its version (see rewrite).
	landed lease.Record

	// highest is the highest token this contender has read or tried to
	// write: it never writes a token at or below it.
	highest Highest
}

// absent is seen.version while this contender's reads find no record.
const absent = "\x00absent"

var (
	_ lease.Breaker   = (*casLease)(nil)
	_ lease.Keeper    = (*casLease)(nil)
	_ lease.Watcher   = (*casLease)(nil)
	_ lease.Handoffer = (*casLease)(nil)
)

func (c *casLease) Options() lease.Options { return c.opts }

func (c *casLease) Judge() lease.Judge { return lease.JudgedByContender }

func (c *casLease) Observe(ctx context.Context) (lease.Record, error) {
	return c.read(ctx)
}

func (c *casLease) Acquire(ctx context.Context) (lease.Term, error) {
	select {
	case c.acquiring <- struct{}{}:
		defer func() { <-c.acquiring }()
	case <-ctx.Done():
		return lease.Term{}, ctx.Err()
	}
	cur, err := c.read(ctx)
	if err != nil && !errors.Is(err, lease.ErrNoRecord) {
		return lease.Term{}, err
	}
	if wait := c.Wait(cur); wait > 0 {
		return lease.Term{}, &lease.HeldError{Record: cur, Wait: wait}
	}
	token, err := c.highest.Next(cur)
	if err != nil {
		return lease.Term{}, err
	}
	ann := CarriedOver(cur.Annotations)
	if cur.Held() && !c.ownUnseen(cur) {
		// The mark of a held record says how its holder took it over; on
		// this Lease's own acquisition, whose answer it did not see, it
		// says how this one did.
		ann = ann.With(lease.AnnotationBroken, "")
	}
	t, got, err := c.write(ctx, cur.Version, c.record(lease.Record{Token: token, Annotations: ann}), true)
	switch {
	case err == nil:
		return t, nil
	case got.Held() && got.Version != cur.Version: // another contender won
		return lease.Term{}, &lease.HeldError{Record: got, Wait: c.wait(got)}
	case got.Version != "": // unchanged, or changed and left free: try again
		return lease.Term{}, transient(err)
	}
	return lease.Term{}, err
}

func (c *casLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := CheckTerm(t, c.opts); err != nil {
		return lease.Term{}, err
	}
	return c.rewrite(ctx, t, c.record(t.Record()))
}

func (c *casLease) Release(ctx context.Context, t lease.Term) error {
	if err := CheckTerm(t, c.opts); err != nil {
		return err
	}
	r := t.Record()
	r.Released = true
	_, err := c.rewrite(ctx, t, c.record(r))
	return err
}

// ReleaseTo is lease.Handoffer's: a renewal of t that names successor
// (lease.AnnotationSuccessor), which Wait then lets that contender take at
// once and every other wait out as a held record.
func (c *casLease) ReleaseTo(ctx context.Context, t lease.Term, successor string) error {
	if err := CheckTerm(t, c.opts); err != nil {
		return err
	}
	if err := lease.ValidateSuccessor(successor, t.Holder); err != nil {
		return err
	}
	r := t.Record()
	r.Annotations = r.Annotations.With(lease.AnnotationSuccessor, successor)
	if err := r.Annotations.Validate(); err != nil {
		return err
	}
	_, err := c.rewrite(ctx, t, c.record(r))
	return err
}

// Keep is lease.Keeper's: a renewal of t that writes d as the record's TTL.
func (c *casLease) Keep(ctx context.Context, t lease.Term, d time.Duration) error {
	if err := CheckTerm(t, c.opts); err != nil {
		return err
	}
	if d < time.Millisecond || d%time.Millisecond != 0 {
		return &lease.OptionError{Field: "Keep's d", Value: d, Reason: "must be a positive whole number of milliseconds"}
	}
	r := t.Record()
	r.TTL = d
	_, err := c.rewrite(ctx, t, c.record(r))
	return err
}

// Wait is lease.Watcher's: the judgement Acquire makes of the record it
// read, cur (the zero Record for none), before it writes.
func (c *casLease) Wait(cur lease.Record) time.Duration {
	switch {
	case cur.Version == "": // no record: waited out if it vanished while this Lease watched
		return max(c.wait(lease.Record{}), c.sinceRestore())
	case c.ownUnseen(cur):
		return 0
	case cur.Successor() == c.opts.Identity && !c.restored(cur): // handed to this contender
		return c.sinceRestore()
	case cur.Held() || c.restored(cur):
		return max(c.wait(cur), c.sinceRestore())
	}
	return c.sinceRestore()
}

// sinceRestore is how long until the horizon of the latest restore this
// Lease read has passed (seen.horizon), 0 if it has.
func (c *casLease) sinceRestore() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(time.Until(c.seen.horizon), 0)
}

// Break is lease.Breaker's: a conditional Replace on rec's version with
// rec marked released and broken (lease.AnnotationBroken), holder and
// token kept, on a store that passed Verify. An unknown outcome is resolved by reading back, as for every
// write.
func (c *casLease) Break(ctx context.Context, rec lease.Record) (lease.Record, error) {
	if needed, err := BreakNeeded(rec); err != nil || !needed {
		return rec, err
	}
	if err := c.Verify(ctx); err != nil { // as before every write
		return lease.Record{}, err
	}
	want := lease.Record{Holder: rec.Holder, Token: rec.Token, TTL: rec.TTL, Released: true, Nonce: NewNonce(), Annotations: rec.Annotations.With(lease.AnnotationBroken, "1").With(lease.AnnotationSuccessor, "")}
	if err := want.Annotations.Validate(); err != nil {
		return lease.Record{}, fmt.Errorf("marking the record broken (%s): %w", lease.AnnotationBroken, err)
	}
	err := c.call(ctx, func(ctx context.Context) (err error) {
		want.Version, err = c.d.Replace(ctx, want, rec.Version)
		return err
	})
	if err == nil {
		return want, nil
	}
	got, err := ReadBack(ctx, err, want, c.read)
	switch {
	case err == nil: // broken after all
		return got, nil
	case got.Version == "": // not re-read: the outcome is unknown
		return lease.Record{}, err
	case !got.Held(): // freed meanwhile
		return got, nil
	case got.Version == rec.Version: // unchanged: the write failed, try again
		return lease.Record{}, transient(err)
	}
	return lease.Record{}, &lease.HeldError{Record: got, Wait: c.wait(got)}
}

// rewrite writes want, a new record for term t's tenure (a renewal, a
// release or a keep). If the write fails and a re-read shows the tenure
// continuing at another version that is one of this Lease's own writes of
// it whose answer was lost, or its latest successful one (pending), it
// writes once more on that version.
// A re-read that finds the tenure at any other version of its own (an
// earlier record of the term put back, by a restore from a backup) ends
// it: a contender may be counting that version towards a takeover. A
// re-read that finds no record ends the tenure at once: the record was
// deleted.
func (c *casLease) rewrite(ctx context.Context, t lease.Term, want lease.Record) (lease.Term, error) {
	version, released := c.from(t), want.Released
	for retried := false; ; retried = true {
		want.Nonce = NewNonce()
		nt, got, err := c.write(ctx, version, want, false)
		switch {
		case err == nil:
			return nt, nil
		case errors.Is(err, lease.ErrNoRecord):
			return lease.Term{}, fmt.Errorf("%w: the record of token %d was deleted (by a lifecycle rule, a person, a restore?): %v", lease.ErrLost, t.Token, err)
		case got.Version == "": // not re-read: the outcome is unknown
			return lease.Term{}, err
		case got.Holder == t.Holder && got.Token == t.Token && (got.Released || got.Successor() != ""):
			// The term was released or handed off already: a release, or
			// the same handoff again, has nothing left to do.
			switch {
			case released || got.Successor() != "" && got.Successor() == want.Successor():
				return lease.Term{}, nil
			case got.Released:
				return lease.Term{}, LostTo(got)
			}
			return lease.Term{}, fmt.Errorf("%w: the term of token %d was handed to %q", lease.ErrLost, t.Token, got.Successor())
		case got.Holder != t.Holder || got.Token != t.Token || got.Released:
			return lease.Term{}, LostTo(got)
		case got.Version == version:
			return lease.Term{}, transient(err)
		case !c.ownTenure(got):
			return lease.Term{}, fmt.Errorf("%w: the record of token %d went back to an earlier write of this term (restored from a backup?)", lease.ErrLost, t.Token)
		case retried:
			return lease.Term{}, transient(err)
		}
		version = got.Version
	}
}

// from is the version a rewrite of t's tenure is first written on: t's,
// unless a read since found the tenure held at a later write of this
// Lease whose answer was lost (landed; not a release nor a handoff, which
// end it, red team 27: TestRedTeam27HandoffSeenLandedIsWrittenOver): then
// that one's, which a rewrite on t's
// version would only find by conflicting and reading back, one more call
// each, and a call too many for a holder whose writes must land within a
// TTL of its latest (sim seed 31356120: a renewal cut off as the task
// returned, the done mark's write, read-back and rewrite over it each
// answered late). The write is conditional on that version: if the record
// moved on since, it conflicts and is read back as every write is.
func (c *casLease) from(t lease.Term) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.landed; r.Held() && r.Successor() == "" && r.Version != t.Version && r.Holder == t.Holder && r.Token == t.Token && slices.ContainsFunc(c.pending, func(w lease.Record) bool { return SameWrite(r, w) }) {
		return r.Version
	}
	return t.Version
}

// write stores want: created when version is empty, else replacing version;
// acquire says whether it is an Acquire's write. On failure it reads the
// record back (ReadBack); got is that record when the read succeeded, and
// if it is want the write succeeded after all. It writes nothing before
// the store has passed Verify.
func (c *casLease) write(ctx context.Context, version string, want lease.Record, acquire bool) (t lease.Term, got lease.Record, err error) {
	if err := c.Verify(ctx); err != nil {
		return lease.Term{}, lease.Record{}, err
	}
	// Tried, it may land whatever the answer, the read-back's included (a
	// restore may put an earlier record back before it): never again.
	c.highest.Note(want.Token)
	sent := time.Now()
	err = c.call(ctx, func(ctx context.Context) (err error) {
		if version == "" {
			want.Version, err = c.d.Create(ctx, want)
		} else {
			want.Version, err = c.d.Replace(ctx, want, version)
		}
		return err
	})
	if err == nil {
		c.wrote(want, sent)
		return termOf(want, sent), want, nil
	}
	got, err = ReadBack(ctx, err, want, c.read) // a read notes the token it finds
	switch {
	case err == nil:
		c.wrote(got, sent)
		return termOf(got, sent), got, nil
	case got.Version == "": // want may have been stored, unseen
		c.mu.Lock()
		if acquire {
			c.unseen.rec, c.unseen.sent = want, sent
		} else {
			c.pending = append(c.pending, want)
		}
		c.mu.Unlock()
	}
	return lease.Term{}, got, err
}

// wrote notes a write of this Lease that succeeded: it is someone's term
// (or the end of one), never again a record to take over at once, and the
// tenure's earlier writes whose answers were lost are behind it.
func (c *casLease) wrote(r lease.Record, sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unseen.rec, c.pending, c.acked, c.landed = lease.Record{}, nil, r, lease.Record{}
	c.seen.version, c.seen.at, c.seen.sent, c.seen.gap, c.seen.ttl = r.Version, time.Now(), sent, r.HolderRenewInterval(), heldTTL(r)
	c.noteToken(r)
}

// noteToken notes r's token and reports whether r is a restore: its token
// is below the highest this Lease has seen, or at it under another holder
// (a token names one term: sim seed 6000727864, a contender that took over
// a body restore-under put back under a live holder, unable to tell, then
// released it with the live holder's token). Under c.mu.
func (c *casLease) noteToken(r lease.Record) (restored bool) {
	restored = r.Token < c.seen.token || r.Token == c.seen.token && r.Holder != c.seen.holder
	if !restored {
		c.seen.token, c.seen.holder, c.seen.live = r.Token, r.Holder, r.TTL
	}
	return restored
}

// read gets and checks the record, and counts it towards expiry (see
// Lease.Acquire): a read that fails breaks the count; one that returns
// another version, or the version of the run more than the run's gap after
// the previous read was sent, starts it again. A run whose record has a
// token below one this Lease has seen, or that token under another holder
// (a restore), is marked, so that its record is waited out even when it
// reads released.
func (c *casLease) read(ctx context.Context) (lease.Record, error) {
	sent := time.Now()
	var r lease.Record
	err := c.call(ctx, func(ctx context.Context) (err error) {
		r, err = c.d.Get(ctx)
		return err
	})
	if err == nil {
		err = Check(r)
	}
	switch {
	case errors.Is(err, lease.ErrNoRecord):
		c.observe(absent, sent, lease.Record{})
		return lease.Record{}, err
	case err != nil:
		c.mu.Lock()
		c.seen.version = ""
		c.mu.Unlock()
		return lease.Record{}, err
	}
	c.highest.Note(r.Token)
	c.observe(r.Version, sent, r)
	c.mu.Lock()
	if slices.ContainsFunc(c.pending, func(w lease.Record) bool { return SameWrite(r, w) }) {
		c.landed = r
	}
	c.mu.Unlock()
	return r, nil
}

// observe counts a read sent at sent that returned version now: r, or
// no record (absent), which is waited out as the record before it.
func (c *casLease) observe(version string, sent time.Time, r lease.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	gap, ttl, restored := c.seen.gap, c.seen.ttl, false
	if version != absent {
		gap, ttl, restored = r.HolderRenewInterval(), heldTTL(r), c.noteToken(r)
		if !SameWrite(r, c.unseen.rec) {
			c.unseen.rec = lease.Record{}
		}
	}
	if version != c.seen.version || now.Sub(c.seen.sent) > c.seen.gap {
		c.seen.version, c.seen.at, c.seen.gap, c.seen.restored = version, now, gap, restored
		if h := now.Add(max(c.seen.live, r.TTL)); restored && h.After(c.seen.horizon) {
			c.seen.horizon = h
		}
	}
	c.seen.sent, c.seen.ttl = sent, ttl
}

// heldTTL is how long r, if it vanishes, is waited out: its TTL while
// held; nothing once released.
func heldTTL(r lease.Record) time.Duration {
	if r.Held() {
		return r.TTL
	}
	return 0
}

// wait returns how much longer r must stay unchanged before this contender
// may take it over. r must be the record read last; the zero Record stands
// for no record, which is waited out for the TTL of the record this Lease
// saw before it vanished.
func (c *casLease) wait(r lease.Record) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	version, ttl := r.Version, r.TTL
	if version == "" {
		version, ttl = absent, c.seen.ttl
	}
	if version != c.seen.version {
		return ttl
	}
	return max(ttl-time.Since(c.seen.at), 0)
}

// ownUnseen reports whether r is this Lease's latest Acquire write whose
// answer was lost, read within its TTL of sending it: nobody acts on it,
// and no other contender can have judged it expired.
func (c *casLease) ownUnseen(r lease.Record) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return SameWrite(r, c.unseen.rec) && time.Since(c.unseen.sent) < c.unseen.rec.TTL
}

// restored reports whether r, the record read last, has a token below
// one this Lease saw before it, or that token under another holder: a
// restore, whose holder may be live although it reads released.
func (c *casLease) restored(r lease.Record) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen.restored && r.Version == c.seen.version
}

// ownTenure reports whether r is this Lease's latest successful write, or
// one of its writes continuing the current tenure whose answer was lost
// since.
func (c *casLease) ownTenure(r lease.Record) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if SameWrite(r, c.acked) {
		return true
	}
	for _, w := range c.pending {
		if SameWrite(r, w) {
			return true
		}
	}
	return false
}

// call runs one driver call under CallTimeout.
func (c *casLease) call(ctx context.Context, f func(context.Context) error) error {
	return Call(ctx, c.opts.CallTimeout, f)
}

// record returns r as this contender writes it: its identity as holder, a
// fresh nonce, and the lease's TTL unless r has one.
func (c *casLease) record(r lease.Record) lease.Record {
	r.Holder, r.Nonce, r.RenewInterval = c.opts.Identity, NewNonce(), c.opts.RenewInterval
	if r.TTL == 0 {
		r.TTL = c.opts.TTL
	}
	return r
}

func termOf(r lease.Record, sent time.Time) lease.Term {
	return lease.Term{Holder: r.Holder, Token: r.Token, TTL: r.TTL, Sent: sent, Version: r.Version, Annotations: r.Annotations}
}
