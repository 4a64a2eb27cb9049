package runner

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
)

// CandidatesSuffix follows a lease's key in the key of its Candidates, as
// leasehold run --prefer and leasehold handoff open them (NAME.candidates
// beside NAME, in the same store), and the Terraform modules grant them
// (prefer = true).
const CandidatesSuffix = ".candidates"

// AnnotationPrefer is the key under which a leader with a Config.Prefer
// writes it into its lease's record, and a candidate into its record of
// Config.Candidates, so that each reads the other's.
const AnnotationPrefer = "runner/prefer"

// AnnotationHandoffTo, in a record of Config.Candidates, asks the leader
// to hand the lease over (leasehold handoff): to the contender it names,
// or, for "*", to any other, by a release after which the leader waits
// CoolDown before it campaigns again. A leader that reads Candidates (one
// with a Prefer) does so once it has seen that record renewed between two
// of its reads, whatever its Prefer; it ignores a request naming itself.
// A leader that handed the lease over, either way, does not announce
// itself as a candidate for CoolDown, so that it does not take the lease
// straight back by its Prefer; a contender whose Prefer orders after the
// one named still does, as preference always does.
const AnnotationHandoffTo = "runner/handoff-to"

// AnnotationHandoffTerm, beside AnnotationHandoffTo, is the fencing token
// of the term the request is for: a leader of another term ignores it, so
// that a request left renewed (an operator waiting for a contender that
// has gone) is obeyed once, by the leader it was made to, and not by each
// leader after it. leasehold handoff writes it; a request without it is
// any leader's.
const AnnotationHandoffTerm = "runner/handoff-term"

// HandoffToAnyOther is AnnotationHandoffTo's value that asks for any
// contender but the leader.
const HandoffToAnyOther = "*"

// ComparePrefer orders two Config.Prefer values as the runner does: -1
// when a orders before b, +1 after, 0 when equal. It compares them in
// natural order: runs of ASCII digits as numbers, everything else byte by
// byte (other scripts' digits too), so that "1.10.0" orders after "1.9.3"
// and "v12" after "v9"; "", no preference, orders before everything.
func ComparePrefer(a, b string) int {
	for a != "" && b != "" {
		ca, ra := chunk(a)
		cb, rb := chunk(b)
		if c := compareChunk(ca, cb); c != 0 {
			return c
		}
		a, b = ra, rb
	}
	switch {
	case a == b:
		return 0
	case a == "":
		return -1
	}
	return 1
}

// chunk splits s into its first run of digits or of other bytes, and the
// rest.
func chunk(s string) (string, string) {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i], s[i:]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// compareChunk compares two chunks: as numbers when both are digits
// (leading zeros aside, the longer is greater), byte by byte otherwise.
func compareChunk(a, b string) int {
	if isDigit(a[0]) && isDigit(b[0]) {
		a, b = trimZeros(a), trimZeros(b)
		if len(a) != len(b) {
			return cmpInt(len(a), len(b))
		}
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func cmpInt(a, b int) int {
	if a < b {
		return -1
	}
	return 1
}

// checkPrefer refuses a Prefer without Candidates or the reverse, a Prefer
// that cannot be stored, a Lease that cannot hand off, and a Candidates
// opened for another identity.
func checkPrefer(cfg Config) error {
	switch {
	case cfg.Prefer == "" && cfg.Candidates == nil:
		return nil
	case cfg.Candidates == nil:
		return invalid("Candidates", nil, "is required with Prefer ("+strconv.Quote(cfg.Prefer)+"): the lease on which a better candidate announces itself")
	case cfg.Prefer == "":
		return invalid("Prefer", `""`, "is required with Candidates")
	}
	if err := lease.NewAnnotations(map[string]string{AnnotationPrefer: cfg.Prefer}).Validate(); err != nil {
		return invalid("Prefer", strconv.Quote(cfg.Prefer), "cannot be stored in a record: "+err.Error())
	}
	if _, ok := cfg.Lease.(lease.Handoffer); !ok {
		return invalid("Lease", fmt.Sprintf("%T", cfg.Lease), "cannot hand the lease to a named contender (lease.Handoffer), which Prefer needs: every leasehold backend's lease can but an Azure Blob lease of infinite duration, and a quorum of them")
	}
	if id, cid := cfg.Lease.Options().Identity, cfg.Candidates.Options().Identity; id != cid {
		return invalid("Candidates", cid, "must be opened with the Lease's Identity ("+id+")")
	}
	if same(cfg.Lease, cfg.Candidates) {
		return invalid("Candidates", fmt.Sprintf("%T", cfg.Candidates), "is the Lease itself: open it at another key")
	}
	if !lease.RenewalsShow(cfg.Candidates) {
		return invalid("Candidates", fmt.Sprintf("%T", cfg.Candidates), "does not show its holder's renewals (lease.RenewalsShow), by which the leader tells a live candidate")
	}
	return nil
}

// same reports whether a and b are one value, without comparing values of
// a type that cannot be compared (which would panic).
func same(a, b lease.Lease) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Comparable() && va.Equal(vb)
}

// distinctCandidates refuses a Candidates at the Lease's own key, which
// New cannot see (another value on the same key): its record is the
// lease's, the same nonce (every write draws one afresh). Announcements
// on it would campaign for the lease itself, as a second contender of
// this identity, and the leader would read its own record as the
// candidates'. It reads each once; with no record yet it cannot tell.
func (r *Runner) distinctCandidates(ctx context.Context) error {
	a, errA := r.cfg.Lease.Observe(ctx)
	b, errB := r.cfg.Candidates.Observe(ctx)
	if errA == nil && errB == nil && a.Nonce != "" && a.Nonce == b.Nonce {
		return invalid("Candidates", fmt.Sprintf("%T", r.cfg.Candidates), "reads the Lease's own record: open it at another key")
	}
	return nil
}

// preferOf is the Prefer a record of the lease, or of Candidates, carries.
func preferOf(rec lease.Record) string { return rec.Annotations.Get(AnnotationPrefer) }

// watchCandidates reads Candidates every RenewInterval while this runner
// leads the term of token, and ends it (HandedOff) once it has seen a
// record there that asks it to hand over (handoffTo) renewed between two
// reads: a candidate, or an operator, alive within the last renew
// interval or two.
func (r *Runner) watchCandidates(ctx context.Context, token uint64, stopTerm context.CancelCauseFunc) {
	var prev lease.Record
	for {
		if ctxtime.Sleep(ctx, r.cfg.RenewInterval); ctx.Err() != nil {
			return
		}
		rec, err := r.cfg.Candidates.Observe(ctx)
		if err != nil {
			prev = lease.Record{}
			continue
		}
		if to, why, ok := r.handoffTo(rec, token); ok && prev.Held() && prev.Holder == rec.Holder && prev.Version != rec.Version {
			r.cfg.Logger.Info("handing the lease over", "to", to, "why", why, "by", rec.Holder)
			stopTerm(&stepDown{reason: HandedOff, successor: to})
			return
		}
		prev = rec
	}
}

// handoffTo says whether rec, Candidates' record, asks this leader, of
// the term of token, to hand the lease over, to whom ("" for any other
// contender, by a release), and why: an operator's request
// (AnnotationHandoffTo, for this term if AnnotationHandoffTerm says), or a
// candidate whose Prefer orders after this runner's.
func (r *Runner) handoffTo(rec lease.Record, token uint64) (to, why string, ok bool) {
	self := r.cfg.Lease.Options().Identity
	asked := rec.Annotations.Get(AnnotationHandoffTo)
	term := rec.Annotations.Get(AnnotationHandoffTerm)
	switch {
	case !rec.Held() || (rec.Holder == self && asked == ""):
		return "", "", false
	case asked != "" && term != "" && term != strconv.FormatUint(token, 10):
		return "", "", false // a request for another leader's term
	case asked == HandoffToAnyOther:
		return "", "asked, to any other contender", true
	case asked == self:
		return "", "", false
	case asked != "":
		return asked, "asked", true
	case ComparePrefer(preferOf(rec), r.cfg.Prefer) > 0:
		return rec.Holder, "a preferred candidate (" + preferOf(rec) + " after " + r.cfg.Prefer + ")", true
	}
	return "", "", false
}

// candidacy is a follower's announcement of itself on Candidates, while
// its Prefer orders after the leader's: a runner of its own on Candidates
// whose task waits, holding it, until the announcement is withdrawn.
type candidacy struct {
	r       *Runner
	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	leading bool
	quiet   time.Time // no announcement before then
}

// follow announces this contender, or withdraws its announcement, as the
// lease's record rec, just read, says: on while its leader, not handing
// off, has a Prefer that orders before this runner's (a leader without one
// reads no Candidates: announcing to it costs and does nothing). It
// reports whether this contender is announced. A nil candidacy (no
// Prefer) does nothing, as do all its methods.
func (c *candidacy) follow(ctx context.Context, rec lease.Record) bool {
	if c == nil {
		return false
	}
	c.want(ctx, rec.Held() && rec.Successor() == "" && preferOf(rec) != "" && ComparePrefer(c.r.cfg.Prefer, preferOf(rec)) > 0)
	return c.announced()
}

// want starts the announcement (on) or withdraws it (off), once.
func (c *candidacy) want(ctx context.Context, on bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	on = on && !time.Now().Before(c.quiet)
	switch {
	case on && c.cancel == nil:
		if c.done != nil {
			select {
			case <-c.done:
			default:
				return // the announcement withdrawn last is still releasing Candidates: one runner at a time on it
			}
		}
		cr, err := New(Config{
			Lease:         c.r.cfg.Candidates,
			RenewInterval: c.r.cfg.Candidates.Options().RenewInterval,
			Rand:          c.r.cfg.Rand,
			Logger:        c.r.cfg.Logger.With("role", "candidate"),
			Task:          c.hold,
			Annotate: func(won lease.Term) lease.Annotations {
				// An operator's request, carried over from the record
				// it released, is not this candidate's.
				return won.Annotations.With(AnnotationHandoffTo, "").With(AnnotationHandoffTerm, "")
			},
			announce: c.r.cfg.Prefer,
		})
		if err != nil {
			c.r.cfg.Logger.Warn("cannot announce this contender as a preferred candidate", "err", err)
			return
		}
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c.cancel, c.done = cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			cr.Run(cctx)
		}(c.done)
	case !on && c.cancel != nil:
		c.cancel()
		c.cancel = nil
	}
}

// quietFor keeps this contender from announcing itself for d: a leader
// that handed the lease over, as an operator asked, does not ask for it
// back at once.
func (c *candidacy) quietFor(d time.Duration) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quiet = time.Now().Add(d)
}

// hold is the announcement's task: it holds Candidates until withdrawn.
func (c *candidacy) hold(ctx context.Context) error {
	c.setLeading(true)
	defer c.setLeading(false)
	<-ctx.Done()
	return nil
}

func (c *candidacy) setLeading(v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leading = v
}

// announced reports whether this contender holds Candidates: the leader
// may hand it the lease at any moment.
func (c *candidacy) announced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading
}

// wait withdraws the announcement and waits until its runner has released
// Candidates (want starts no runner while the one before still runs, so
// that is the only one).
func (c *candidacy) wait() {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
		c.cancel = nil
	}
	done := c.done
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// announceStep is how often a follower that has announced itself reads
// the lease, so that it takes a handoff soon after it was written: a
// twentieth of the TTL, as a follower that has just started reads.
func (r *Runner) announceStep() time.Duration { return r.cfg.Lease.Options().TTL / burstStep }
