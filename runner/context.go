package runner

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// leadership is the state of one term of leadership, shared by the task
// (through its context), the renew loop and the health watch.
type leadership struct {
	mu       sync.Mutex
	current  tenure
	renew    time.Duration // RenewInterval: see expiry
	deadline time.Duration // RenewDeadline: see stepDownAt
	lostAt   time.Time     // when a renewal found the lease lost; zero until then
	// annotated: Config.Annotate changed the term's annotations, which
	// the first renewal, made at once, writes.
	annotated bool
	progress  chan struct{}
	// failed is closed when the renew loop ended the term (leadership.fail).
	failed   chan struct{}
	failOnce sync.Once
	// renewalsDone is closed when the renew loop has returned.
	renewalsDone chan struct{}
	// completed: the task said its work finished before it was told to
	// stop (Completed).
	completed atomic.Bool
}

func newLeadership(tn tenure, renew, deadline time.Duration) *leadership {
	return &leadership{current: tn, renew: renew, deadline: deadline, progress: make(chan struct{}, 1), failed: make(chan struct{}), renewalsDone: make(chan struct{})}
}

// fail is how the renew loop steps down: it ends the term with cause
// (stopTerm), and tells renewUntil that the renewals are over, even while
// draining.
func (ld *leadership) fail(stopTerm context.CancelCauseFunc, cause error) {
	stopTerm(cause)
	ld.failOnce.Do(func() { close(ld.failed) })
}

// setLost records that a renewal found the lease lost.
func (ld *leadership) setLost() {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.lostAt = time.Now()
}

// lost reports whether a renewal found the lease lost.
func (ld *leadership) lost() bool {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return !ld.lostAt.IsZero()
}

// expiry is Expiry's answer: a renew interval before the term's Expires,
// as a follower's count of an unchanged version can start up to a renew
// interval before the holder's latest write, when a restore hid that
// write (see lease/driver's package doc).
func (ld *leadership) expiry() time.Time {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	at := ld.current.term.Expires().Add(-ld.renew)
	if !ld.lostAt.IsZero() && ld.lostAt.Before(at) {
		return ld.lostAt
	}
	return at
}

// stepDownAt is when the leader steps down unless a renewal succeeds
// first: the current tenure's leadsUntil (rule 3).
func (ld *leadership) stepDownAt() time.Time {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.current.leadsUntil(ld.deadline)
}

// get returns the current term, as Term reports it.
func (ld *leadership) get() lease.Term {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.current.term
}

// tenure returns the current term with when its latest write was sent,
// for the next write of it.
func (ld *leadership) tenure() tenure {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.current
}

func (ld *leadership) set(tn tenure) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.current = tn
}

type termKey struct{}

// terms is what a task's context carries under termKey: one term (a
// *leadership), or the terms of a Joint context.
type terms interface {
	// first is the term whose Term and Progress the context gives, nil
	// if none.
	first() *leadership
	expiry() time.Time
	stepDownAt() time.Time
	changed() <-chan struct{}
}

func (ld *leadership) first() *leadership       { return ld }
func (ld *leadership) changed() <-chan struct{} { return ld.renewalsDone }

func termsOf(ctx context.Context) (terms, bool) {
	v, ok := ctx.Value(termKey{}).(terms)
	return v, ok
}

// Term returns the leader's current term from the context Task was given:
// its fencing token, and the Sent time of the last successful renewal. It
// keeps reporting the latest renewal after the task's context is cancelled,
// while the runner drains (Config.DrainTimeout). On a Joint context it is
// the term of the context Joint was given. ok is false outside a task's
// context.
func Term(ctx context.Context) (t lease.Term, ok bool) {
	v, ok := termsOf(ctx)
	if !ok || v.first() == nil {
		return lease.Term{}, false
	}
	return v.first().get(), true
}

// Progress tells the stall watchdog that the task is still making progress.
// Call it with the context Task was given (on a Joint context, it feeds
// the watchdog of the term of the context Joint was given); elsewhere it
// does nothing. It never blocks.
func Progress(ctx context.Context) {
	if v, ok := termsOf(ctx); ok && v.first() != nil {
		select {
		case v.first().progress <- struct{}{}:
		default:
		}
	}
}

// Completed tells RunOnce that the task's work finished by itself before
// the task was told to stop, although its context may have ended since:
// a task that returns only after its context ended (it still flushed
// output, or waited for a child process it had seen exit on its own) but
// calls Completed first counts as having returned by itself, as if its
// context had not ended. RunOnce then reports Ran, with the task's error,
// and with a nil error the period is done (Config.Period). Call it with
// the context Task was given, before the task returns, and only when the
// work did finish before any stop reached it: the runner cannot check.
// A task that does not call it counts as having returned by itself only
// when its context had not ended when it returned. On a Joint context it
// tells the term of the context Joint was given; Run, and contexts that
// are no task's, ignore it.
func Completed(ctx context.Context) {
	if v, ok := termsOf(ctx); ok && v.first() != nil {
		v.first().completed.Store(true)
	}
}

// completed reports whether the task of ctx's term called Completed.
func completed(ctx context.Context) bool {
	v, ok := termsOf(ctx)
	return ok && v.first() != nil && v.first().completed.Load()
}

// Expiry returns the instant, on this process's monotonic clock, after which
// the lease of the term ctx belongs to may be someone else's, so by which a
// task that cannot stop at once (a child process, say) must have stopped
// acting as leader: Term(ctx).Expires() of the latest successful acquire or
// renew less one RenewInterval (a follower's count can start that much
// before the holder's latest write, when a restore hid it), or the moment
// a renewal found the lease lost, whichever is earlier.
// It moves forward with each renewal, including those made while draining
// (Config.DrainTimeout), and no longer changes once RenewalsDone(ctx) is
// closed. On a Joint context it is the earliest of its terms' expiries.
// Subtract a margin for latency and scheduling before acting on it.
// It returns the zero time outside a task's context.
func Expiry(ctx context.Context) time.Time {
	if v, ok := termsOf(ctx); ok {
		return v.expiry()
	}
	return time.Time{}
}

// Deadline returns the instant, on this process's monotonic clock, at which
// the leader of the term ctx belongs to steps down unless a renewal
// succeeds first: RenewDeadline after its latest successful acquire or
// renew was sent (or was due, for a renewal sent late; see Term). It moves
// forward with each renewal. On a Joint context it is the earliest of its
// terms' deadlines. It returns the zero time outside a task's context.
func Deadline(ctx context.Context) time.Time {
	if v, ok := termsOf(ctx); ok {
		return v.stepDownAt()
	}
	return time.Time{}
}

// RenewalsDone returns a channel that is closed when the runner stops
// renewing the lease of the term ctx belongs to: when a renewal found it
// lost, when no renewal succeeded within RenewDeadline, when the task's
// context was cancelled (without DrainTimeout), or when a drain ended
// (the task returned, or DrainTimeout passed). Call Expiry again when it
// closes: it is final from then on. On a Joint context the channel is
// closed when Expiry may have moved back or become final: when one more
// of its terms' renewals stop, or a term joins it; call Expiry and
// RenewalsDone again then. Once the renewals of every term of ctx have
// stopped, RenewalsDone returns the same closed channel on every call,
// and Expiry is final. Outside a task's context it returns nil, a channel
// that never closes.
func RenewalsDone(ctx context.Context) <-chan struct{} {
	if v, ok := termsOf(ctx); ok {
		return v.changed()
	}
	return nil
}

// Joint returns a context derived from ctx for work that rests on the
// lease of ctx's term (ctx is a task's context, or one derived from it)
// and on the leases of the terms that join it later: join(other), with
// other another runner's task context (or one derived from it), adds the
// terms other carries. Work whose every lease must stay its own while it
// runs (shards that an assigner term and a liveness term both vouch for,
// say) stops, then, by the earliest of their expiries: on the returned
// context, and those derived from it, Expiry and Deadline are the
// earliest of every term's, and RenewalsDone closes when one of them may
// have moved back (see RenewalsDone); Term and Progress are ctx's term's.
// A term that joined stays: its Expiry, final once its renewals stopped,
// still bounds the work. So join only a term whose task outlasts the work,
// as a task's lease is released only after the task returned. Cancelling
// the returned context is still the caller's: Joint does not end the
// work when a term ends.
func Joint(ctx context.Context) (jctx context.Context, join func(other context.Context)) {
	j := &joint{ch: make(chan struct{})}
	if v, ok := termsOf(ctx); ok {
		j.lead = v.first()
		j.add(v)
	}
	return context.WithValue(ctx, termKey{}, j), func(other context.Context) {
		if v, ok := termsOf(other); ok {
			j.add(v)
		}
	}
}

// joint is the value of a Joint context.
type joint struct {
	lead *leadership // the term of the context Joint was given, or nil

	mu      sync.Mutex
	terms   []*leadership
	stopped int // how many of terms' renewals have stopped
	// ch is closed when one more term's renewals stop or a term joins,
	// and replaced then unless every term's renewals have stopped.
	ch chan struct{}
}

// add adds v's terms (a joint's, as they are now), and watches each
// until its renewals stop.
func (j *joint) add(v terms) {
	var added []*leadership
	switch v := v.(type) {
	case *leadership:
		added = []*leadership{v}
	case *joint:
		v.mu.Lock()
		added = slices.Clone(v.terms)
		v.mu.Unlock()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, ld := range added {
		j.terms = append(j.terms, ld)
		go func() {
			<-ld.renewalsDone
			j.mu.Lock()
			defer j.mu.Unlock()
			j.stopped++
			j.changeLocked()
		}()
	}
	j.changeLocked()
}

// changeLocked closes ch, and replaces it while some term still renews.
func (j *joint) changeLocked() {
	select {
	case <-j.ch:
	default:
		close(j.ch)
	}
	if j.stopped < len(j.terms) {
		j.ch = make(chan struct{})
	}
}

func (j *joint) first() *leadership { return j.lead }

func (j *joint) changed() <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.ch
}

func (j *joint) expiry() time.Time     { return j.earliest((*leadership).expiry) }
func (j *joint) stepDownAt() time.Time { return j.earliest((*leadership).stepDownAt) }

// earliest is the earliest of at over the terms, zero if there are none.
func (j *joint) earliest(at func(*leadership) time.Time) time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out time.Time
	for _, ld := range j.terms {
		if t := at(ld); out.IsZero() || t.Before(out) {
			out = t
		}
	}
	return out
}
