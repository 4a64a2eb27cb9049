package quorumlease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// The quorum's own annotations, written into every member's record: the
// quorum token of the term that last wrote it, and the count of that
// term's writes, so that a successor picks the latest annotations among
// the records it took over, and a reader tells which write a majority
// took.
const (
	annotationToken = "quorum/token"
	annotationSeq   = "quorum/seq"
	// annotationMembers is a digest of the members' list, when the quorum
	// was opened with their names (from a URL): contenders that list other
	// members, or the same in another order, are told apart (strangers).
	annotationMembers = "quorum/members"
)

// state is what this Lease knows of its own hold on one member.
type state int

const (
	// none: this Lease holds no term of the member that it knows of.
	none state = iota
	// campaign: a member term taken on the way to a majority, not yet
	// part of a quorum term.
	campaign
	// quorum: a member term of the live quorum term.
	quorum
)

// member is one member lease and this Lease's hold on it. l and name
// never change, and are read without mu (by index, never by copying a
// member: the rest is mu's).
type member struct {
	l      lease.Lease
	name   string
	state  state
	term   lease.Term
	obs    lease.Record // what the latest Observe read
	obsOK  bool
	obsErr error // the latest Observe's error (lease.ErrNoRecord: no record)
	// renewErr is the error of the latest call of a renewal to the member
	// that returned, and failures counts those that failed.
	renewErr error
	failures uint64
	// busy is closed when a write's call to the member that outlived the
	// write returns; nil when none runs (eachUntil).
	busy chan struct{}
	// silent: until when the member counts as silent, a renew interval
	// after the latest read of it had no answer within CallTimeout (zero
	// when it answered), latest by heard, when the read that said so was
	// sent; reading: when the read of a silent member that runs, that
	// nobody waits for (readAll), was sent; zero when none runs.
	silent, heard, reading time.Time
}

// Member is one member of a quorum as the latest Observe read it.
type Member struct {
	// Name is "member 2", or with the member's URL, redacted, when the
	// quorum was opened from one: "member 2 (s3://jobs-euw1/nightly)".
	Name string
	// Record is the member's record: its Token is the member's own
	// counter; the quorum's token is in its annotation quorum/token
	// (QuorumToken).
	Record lease.Record
	// QuorumToken is the quorum token the record carries, 0 if none.
	QuorumToken uint64
	// Err is the read's error (lease.ErrNoRecord for a member never
	// written), nil when it returned a record.
	Err error
}

// Members returns every member as the latest Observe read it, in the
// members' order (leasehold status prints them); nil before the first
// Observe.
func (q *Lease) Members() []Member {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !slices.ContainsFunc(q.members, func(m member) bool { return m.obsOK || m.obsErr != nil }) {
		return nil
	}
	out := make([]Member, len(q.members))
	for i, m := range q.members {
		out[i] = Member{Name: m.name, Err: m.obsErr}
		if m.obsOK {
			out[i].Record = m.obs
			out[i].QuorumToken, _ = tokenOf(m.obs.Annotations)
		}
	}
	return out
}

// Hold is one member as this Lease's latest Renew left it.
type Hold struct {
	// Name is the member's name, as in Member.
	Name string
	// Held reports whether this Lease's quorum term holds a term on the
	// member.
	Held bool
	// Err is the error of the latest call of a renewal to the member (a
	// renewal, or an attempt to take it back) that returned, nil when it
	// took the renewal. A call that outlives its Renew (a member slower
	// than the majority) tells its outcome when it returns.
	Err error
	// Failures counts the calls of renewals to the member that failed,
	// since the Lease was opened.
	Failures uint64
}

// Holds returns, member by member, what this Lease's renewals did. A
// holder renews while a majority take its renewals; the members that did
// not (a minority down, slow or partitioned) are the ones with an Err:
// leasehold run exports their Failures as
// leasehold_quorum_member_failures_total.
func (q *Lease) Holds() []Hold {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Hold, len(q.members))
	for i, m := range q.members {
		out[i] = Hold{Name: m.name, Held: q.live && m.state == quorum, Err: m.renewErr, Failures: m.failures}
	}
	return out
}

// Lease is a lease held on a majority of independent member leases: see the
// package documentation. It is a lease.Lease, a lease.Breaker, a
// lease.Watcher, a lease.RenewalShower, a lease.FollowerReader and a
// lease.Idler, and
// when a majority of its members are lease.Keepers and lease.Handoffers
// (compare-and-swap stores), New returns it as a lease.Keeper and a
// lease.Handoffer as well.
type Lease struct {
	opts     lease.Options
	majority int
	slot     chan struct{} // one Acquire, Renew, Release, Keep or Break at a time

	mu       sync.Mutex
	members  []member
	live     bool   // a quorum term is live: Acquire or Renew returned it
	token    uint64 // the live quorum term's token
	seq      uint64 // the live quorum term's count of writes
	landed   uint64 // the count of its latest write that a majority took
	written  lease.Annotations
	seen     uint64    // the highest quorum token read or written (rule 10)
	minority time.Time // when this Lease began to keep a minority; zero when it keeps none
	observed string    // the Version of the latest Observe's record
	list     string    // the members' list's digest (annotationMembers); "" without names

	// The quorum term that Release or Keep ended last, and its member
	// terms, for a Release of it again.
	ended       uint64
	endedStates []state
	endedTerms  []lease.Term
}

// keeper is a Lease whose majority of members can keep their records
// held after their holder has gone (lease.Keeper), and hand them to a
// named contender (lease.Handoffer).
type keeper struct{ *Lease }

var (
	_ lease.Lease          = (*Lease)(nil)
	_ lease.Breaker        = (*Lease)(nil)
	_ lease.Watcher        = (*Lease)(nil)
	_ lease.RenewalShower  = (*Lease)(nil)
	_ lease.FollowerReader = (*Lease)(nil)
	_ lease.Idler          = (*Lease)(nil)
	_ lease.Keeper         = keeper{}
	_ lease.Handoffer      = keeper{}
)

// New returns a quorum lease over members, which must be an odd number
// (3 or more) of leases opened for one contender with the same Options,
// each on its own store and key, listed in the same order by every
// contender. names, if not nil, names each member in errors (its URL,
// redacted); otherwise members are called "member 1" and so on.
//
// It returns a *lease.OptionError naming the field: an even or too small
// number of members, or a member whose Options differ from the first's.
// The returned lease is a lease.Keeper and a lease.Handoffer when a
// majority of members are both.
func New(members []lease.Lease, names []string) (lease.Lease, error) {
	if err := checkCount(len(members)); err != nil {
		return nil, err
	}
	if names != nil && len(names) != len(members) {
		return nil, &lease.OptionError{Pkg: "quorumlease", Field: "names", Value: len(names), Reason: fmt.Sprintf("must name each of the %d members", len(members))}
	}
	q := &Lease{majority: len(members)/2 + 1, slot: make(chan struct{}, 1)}
	if names != nil {
		q.list = digest(names)
	}
	keepers := 0
	for i, l := range members {
		name := "member " + strconv.Itoa(i+1)
		if names != nil {
			name = "member " + strconv.Itoa(i+1) + " (" + names[i] + ")"
		}
		if l == nil {
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: "members", Value: name, Reason: "is nil"}
		}
		o := l.Options()
		if i == 0 {
			q.opts = o
		} else if o != q.opts {
			return nil, &lease.OptionError{Pkg: "quorumlease", Field: "members", Value: name, Reason: fmt.Sprintf("has options %s, want the first member's %s: every member is one contender with one TTL", optionsText(o), optionsText(q.opts))}
		}
		_, keeps := l.(lease.Keeper)
		_, hands := l.(lease.Handoffer)
		if keeps && hands {
			keepers++
		}
		q.members = append(q.members, member{l: l, name: name})
	}
	if keepers >= q.majority {
		return keeper{q}, nil
	}
	return q, nil
}

// checkCount refuses an even number of members, or fewer than three.
func checkCount(n int) error {
	if n < 3 || n%2 == 0 {
		return &lease.OptionError{Pkg: "quorumlease", Field: "members", Value: n, Reason: "must be an odd number, 3 or more: a quorum needs a majority that any two majorities share"}
	}
	return nil
}

func optionsText(o lease.Options) string {
	return fmt.Sprintf("{Identity %q, TTL %v, CallTimeout %v, RenewInterval %v}", o.Identity, o.TTL, o.CallTimeout, o.RenewInterval)
}

// Options returns the options every member was opened with.
func (q *Lease) Options() lease.Options { return q.opts }

// Judge is lease.JudgedByStore when a majority of the members' stores
// judge expiry (every majority could then be taken at a contender's first
// look), and lease.JudgedByContender otherwise: every majority then holds
// a member that a contender must have watched for its holder's TTL.
func (q *Lease) Judge() lease.Judge {
	byStore := 0
	for i := range q.members {
		if q.members[i].l.Judge() == lease.JudgedByStore {
			byStore++
		}
	}
	if byStore >= q.majority {
		return lease.JudgedByStore
	}
	return lease.JudgedByContender
}

// RenewalsShow reports whether every member's renewals change its
// record's Version, and so the quorum record's.
func (q *Lease) RenewalsShow() bool {
	for i := range q.members {
		if !lease.RenewalsShow(q.members[i].l) {
			return false
		}
	}
	return true
}

// FollowerReads is the most any member asks for.
func (q *Lease) FollowerReads() int {
	n := 0
	for i := range q.members {
		n = max(n, lease.FollowerReads(q.members[i].l))
	}
	return n
}

// enter takes the slot that Acquire, Renew, Release, Keep and Break share.
func (q *Lease) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case q.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *Lease) leave() { <-q.slot }

// outcome is what one call to a member returned.
type outcome struct {
	term lease.Term
	rec  lease.Record
	err  error
	done bool // the call was made
	won  bool // an Acquire won the member, and the call after it failed
}

// each calls f for the members whose index ok accepts, all at once, and
// returns their outcomes by index.
func (q *Lease) each(ok func(i int) bool, f func(i int, l lease.Lease) outcome) []outcome {
	out := make([]outcome, len(q.members))
	var wg sync.WaitGroup
	for i := range q.members {
		if ok(i) {
			l := q.members[i].l
			wg.Go(func() {
				out[i] = f(i, l)
				out[i].done = true
			})
		}
	}
	wg.Wait()
	return out
}

// readAll reads the members that ok accepts, all at once, and returns
// their outcomes when every read returned, except the reads of members
// that are silent (the latest read of the member that returned had no
// answer within CallTimeout: a store that hangs, a partition that drops
// packets): those go on, until CallTimeout, without being waited for, and
// count as failed reads (errSilent). So does a member whose read left
// running that way is younger than a renew interval, even once its
// silence is over: that read's answer, or its lack, says whether the
// member is back. A member that answers again is waited for again from
// the read after. Waiting out a hung member's CallTimeout at every attempt
// delayed each takeover by a fifth of the TTL (leasebench, one member
// hanging), and so did waiting it out every few attempts, when a silence
// ended while the read an attempt within it had left running still ran.
// A member that is up, however slow, is waited for, so that contenders
// that start together agree on the first member they can reach (red team
// 19's RT19-2: reads cut off at a grace made each anchor on another
// member); and so is one whose read left running is older than a renew
// interval: with CallTimeout near the TTL, a contender that skipped a
// member back from a hang until its read lost there returned anchored
// elsewhere than another for most of a TTL, and the two led nobody for two
// (red team 23's RT23-1). A member back from a hang is thus read again
// within CallTimeout and a renew interval, or two renew intervals,
// whichever is less.
//
// A member is silent for a renew interval after its read that had no
// answer returned: a contender that tries at a follower's pace reads it
// again within that (each of those reads, left running, says it anew),
// and one that has not read it since (a leader, one that waited out a
// cool-down) waits for it, once, as at its first read. A member counted
// silent until the next read, however late, was not waited for by a
// contender that had led through its hang, long after it came back, and
// with another member down, that contender and another that started with
// it each anchored on a member of their own, and neither led (red team
// 22's RT22-1). A read's verdict stands only over the reads sent before
// it: a read left running from a hang, lost there, that returns after a
// later read of the member answered does not silence it again (RT22-2).
func (q *Lease) readAll(ctx context.Context, ok func(i int) bool) []outcome {
	out := make([]outcome, len(q.members))
	var wg sync.WaitGroup
	q.mu.Lock()
	defer func() {
		q.mu.Unlock()
		wg.Wait()
	}()
	for i := range q.members {
		m := &q.members[i]
		if !ok(i) {
			continue
		}
		// sent is taken before the read's deadline is set from it: taken
		// in the goroutine, a moment later, it made a read left running
		// that timed out look shorter than CallTimeout, so not silent,
		// and the next attempt waited it out again (leasebench, one
		// member hanging: one crash failover in ten at 1.22 TTL).
		rctx, cancel, sent := ctx, context.CancelFunc(func() {}), time.Now()
		wait := !sent.Before(m.silent)
		switch {
		case !m.reading.IsZero() && (!wait || sent.Before(m.reading.Add(q.opts.RenewInterval))):
			// A read left running from an earlier call, younger than a
			// renew interval, says whether the member is back.
			out[i] = outcome{err: errSilent, done: true}
			continue
		case wait:
			wg.Add(1)
		default:
			out[i] = outcome{err: errSilent, done: true}
			m.reading = sent
			rctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), sent.Add(q.opts.CallTimeout))
		}
		l := m.l
		go func() {
			defer cancel()
			rec, err := l.Observe(rctx)
			q.mu.Lock()
			if !wait {
				m.reading = time.Time{}
			}
			if !sent.Before(m.heard) { // not outrun by a later read's answer
				m.heard, m.silent = sent, time.Time{}
				if err != nil && !errors.Is(err, lease.ErrNoRecord) && rctx.Err() != context.Canceled && time.Since(sent) >= q.opts.CallTimeout {
					m.silent = time.Now().Add(q.opts.RenewInterval)
				}
			}
			q.mu.Unlock()
			if wait {
				out[i] = outcome{rec: rec, err: err, done: true}
				wg.Done()
			}
		}()
	}
	return out
}

// errSilent is readAll's outcome for a member it did not wait for.
var errSilent = fmt.Errorf("no answer within CallTimeout at the latest read, not waited for: %w", lease.ErrUnavailable)

// eachUntil is each for a write that a majority decides (a renewal, the
// new token's write): it returns once a majority of the calls returned
// outcomes that won (with grace, a grace later: as long again as the
// majority took, between an eighth and a quarter of CallTimeout), or
// every call returned, or ctx ended, so that a member that hangs or
// crawls delays the write by that grace at most. A renewal has none: it
// takes as long as the majority's slowest member, as on one store (the
// runner renews a renew interval after each renewal returned and counts
// from when the one before was sent, so no lease whose renewals take
// longer than a sixteenth of the TTL keeps its term). A new token's
// write has it, so that the members a little slower than the majority
// carry the token when Acquire returns, as every member does on a store
// that answers at once: a reader (leasehold break) then finds the whole
// term where it looks for it, not a member held with no token yet.
//
// A call still running then is not cut off: it goes on, until CallTimeout
// after the write began, and late is called, with mu held, with its
// outcome when it returns. Until then its member is busy: the next
// write's call to it waits for that call to return first (or its own
// context to end), and settle waits for it. Calls cut off a grace
// after the majority answered left a member slower than that grace, up
// and answering, never renewed or taken back (red team 19's RT19-1), and
// the quorum rode out one outage fewer than it promises; and the grace
// made a renewal twice as slow as its majority.
func (q *Lease) eachUntil(ctx context.Context, ok func(i int) bool, f func(ctx context.Context, i int, l lease.Lease) outcome, won func(outcome) bool, late func(i int, o outcome), grace bool) []outcome {
	start := time.Now()
	// The calls' context ends with ctx until eachUntil returns, and then
	// CallTimeout after start.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	out := make([]outcome, len(q.members))
	var (
		mu       sync.Mutex
		wins     int
		pending  int  // calls running
		returned bool // eachUntil has returned, or is about to
		done     = make(chan struct{})
	)
	finish := func() { // with mu held
		if !returned {
			returned = true
			close(done)
		}
	}
	type call struct {
		i          int
		l          lease.Lease
		busy, prev chan struct{}
	}
	var calls []call
	q.mu.Lock()
	for i := range q.members {
		m := &q.members[i]
		if !ok(i) {
			continue
		}
		c := call{i: i, l: m.l, busy: make(chan struct{}), prev: m.busy}
		m.busy = c.busy
		calls = append(calls, c)
	}
	q.mu.Unlock()
	if len(calls) == 0 {
		cancel()
		stop()
		return out
	}
	pending = len(calls)
	for _, c := range calls {
		i, l, busy, prev := c.i, c.l, c.busy, c.prev
		go func() {
			var o outcome
			if prev != nil {
				select {
				case <-prev: // the call before it, which outlived its write
				case <-cctx.Done():
					o.err = cctx.Err()
				}
			}
			if o.err == nil {
				o = f(cctx, i, l)
			}
			o.done = true
			mu.Lock()
			after := returned
			if !after {
				out[i] = o
				if won(o) {
					if wins++; wins == q.majority {
						if !grace {
							finish()
						} else {
							ct := q.opts.CallTimeout
							time.AfterFunc(min(max(time.Since(start), ct/8), ct/4), func() {
								mu.Lock()
								defer mu.Unlock()
								finish()
							})
						}
					}
				}
			}
			if pending--; pending == 0 {
				finish()
				cancel()
			}
			mu.Unlock()
			q.mu.Lock()
			defer q.mu.Unlock()
			if after {
				late(i, o)
			}
			if q.members[i].busy == busy {
				q.members[i].busy = nil
			}
			close(busy)
		}()
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	// stop unregisters cancel from ctx whether or not a call still runs:
	// left registered, it would be held by ctx until ctx ends, one for
	// every write under a long-lived context (red team 21).
	if stop() && pending > 0 {
		time.AfterFunc(time.Until(start.Add(q.opts.CallTimeout)), cancel)
	}
	return out
}

// settle waits until no member is busy with a call that outlived its
// write (eachUntil), or ctx ends: Acquire, Release, Keep and Break act on
// the members as that call left them.
func (q *Lease) settle(ctx context.Context) error {
	for {
		q.mu.Lock()
		var busy chan struct{}
		for _, m := range q.members {
			if m.busy != nil {
				busy = m.busy
				break
			}
		}
		q.mu.Unlock()
		if busy == nil {
			return nil
		}
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func all(int) bool { return true }

// succeeded is eachUntil's won for a write: the member took it.
func succeeded(o outcome) bool { return o.err == nil }

// tokenOf returns the quorum token and annotation count a member's
// annotations carry; 0 for a record no quorum term wrote.
func tokenOf(a lease.Annotations) (token, seq uint64) {
	if a == (lease.Annotations{}) {
		return 0, 0
	}
	for k, v := range a.All() { // one parse of the annotations for both
		switch k {
		case annotationToken:
			token, _ = strconv.ParseUint(v, 10, 64)
		case annotationSeq:
			seq, _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return token, seq
}

// own strips the quorum's annotations, leaving the layers' above.
func own(a lease.Annotations) lease.Annotations {
	return a.With(annotationToken, "").With(annotationSeq, "").With(annotationMembers, "")
}

// stamped returns a with the quorum's annotations set.
func (q *Lease) stamped(a lease.Annotations, token, seq uint64) lease.Annotations {
	return own(a).With(annotationToken, strconv.FormatUint(token, 10)).With(annotationSeq, strconv.FormatUint(seq, 10)).With(annotationMembers, q.list)
}

// digest is the members' list's annotationMembers: the first 8 bytes of
// the SHA-256 of their names, each a URL reduced to the store and key it
// names (sameStore) when it is one, in order.
func digest(names []string) string {
	h := sha256.New()
	for _, n := range names {
		if u, err := url.Parse(n); err == nil && u.Scheme != "" {
			n = sameStore(u)
		}
		h.Write([]byte(n + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// note raises seen to the quorum token of annotations read.
func (q *Lease) note(a lease.Annotations) {
	if t, _ := tokenOf(a); t > q.seen {
		q.seen = t
	}
}

// nth returns the n-th latest of times (n from 1), and false when there
// are fewer.
func nth(times []time.Time, n int) (time.Time, bool) {
	if len(times) < n {
		return time.Time{}, false
	}
	s := slices.Clone(times)
	slices.SortFunc(s, func(a, b time.Time) int { return b.Compare(a) })
	return s[n-1], true
}

// sents returns the Sent times of the members in state s.
func (q *Lease) sents(s state) []time.Time {
	var ts []time.Time
	for _, m := range q.members {
		if m.state == s {
			ts = append(ts, m.term.Sent)
		}
	}
	return ts
}

// count returns how many members are in state s.
func (q *Lease) count(s state) int {
	n := 0
	for _, m := range q.members {
		if m.state == s {
			n++
		}
	}
	return n
}

// lapse forgets the member terms in state s whose TTL has passed since
// they were sent: they cannot be renewed any more, and a member's own
// Acquire judges when it may be taken again.
func (q *Lease) lapse(s state, now time.Time) {
	for i := range q.members {
		m := &q.members[i]
		if m.state == s && !now.Before(m.term.Expires()) {
			m.state = none
		}
	}
}

// memberErrors describes the members' failures for a message.
func (q *Lease) memberErrors(out []outcome) string {
	var parts []string
	for i, o := range out {
		if o.done && o.err != nil {
			parts = append(parts, q.members[i].name+": "+o.err.Error())
		}
	}
	return strings.Join(parts, "; ")
}

// ctxErr returns ctx's error, unwrapped, once ctx has ended.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

// failed classifies a failure to hold a majority: the first permanent
// error when too many members fail permanently for a majority ever to be
// held, and otherwise ErrUnavailable with every member's error.
func (q *Lease) failed(what string, out []outcome) error {
	permanent := 0
	var first error
	for _, o := range out {
		if o.done && o.err != nil && !lease.Retryable(o.err) {
			permanent++
			if first == nil {
				first = o.err
			}
		}
	}
	if permanent > len(q.members)-q.majority {
		return fmt.Errorf("quorumlease: %s: %d of %d members refuse for good, a majority is %d: %w (%s)", what, permanent, len(q.members), q.majority, sentinel(first), q.memberErrors(out))
	}
	return fmt.Errorf("quorumlease: %s: no majority (%d of %d members): %w (%s)", what, q.majority, len(q.members), lease.ErrUnavailable, q.memberErrors(out))
}

// sentinel returns the package lease sentinel err wraps.
func sentinel(err error) error {
	for _, s := range []error{lease.ErrInvalid, lease.ErrNotFound, lease.ErrPermission, lease.ErrCorrupt, lease.ErrUnsafeStore, lease.ErrLost, lease.ErrHeld, lease.ErrNoRecord} {
		if errors.Is(err, s) {
			return s
		}
	}
	return lease.ErrUnavailable
}
