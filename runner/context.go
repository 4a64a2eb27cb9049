package runner

import (
	"context"
	"sync"
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

// Term returns the leader's current term from the context Task was given:
// its fencing token, and the Sent time of the last successful renewal. It
// keeps reporting the latest renewal after the task's context is cancelled,
// while the runner drains (Config.DrainTimeout). ok is false outside a
// task's context.
func Term(ctx context.Context) (t lease.Term, ok bool) {
	st, ok := ctx.Value(termKey{}).(*leadership)
	if !ok {
		return lease.Term{}, false
	}
	return st.get(), true
}

// Progress tells the stall watchdog that the task is still making progress.
// Call it with the context Task was given; elsewhere it does nothing. It
// never blocks.
func Progress(ctx context.Context) {
	if st, ok := ctx.Value(termKey{}).(*leadership); ok {
		select {
		case st.progress <- struct{}{}:
		default:
		}
	}
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
// closed. Subtract a margin for latency and scheduling before acting on it.
// It returns the zero time outside a task's context.
func Expiry(ctx context.Context) time.Time {
	if st, ok := ctx.Value(termKey{}).(*leadership); ok {
		return st.expiry()
	}
	return time.Time{}
}

// Deadline returns the instant, on this process's monotonic clock, at which
// the leader of the term ctx belongs to steps down unless a renewal
// succeeds first: RenewDeadline after its latest successful acquire or
// renew was sent (or was due, for a renewal sent late; see Term). It moves
// forward with each renewal. It returns the zero time outside a task's
// context.
func Deadline(ctx context.Context) time.Time {
	if st, ok := ctx.Value(termKey{}).(*leadership); ok {
		return st.stepDownAt()
	}
	return time.Time{}
}

// RenewalsDone returns a channel that is closed when the runner stops
// renewing the lease of the term ctx belongs to: when a renewal found it
// lost, when no renewal succeeded within RenewDeadline, when the task's
// context was cancelled (without DrainTimeout), or when a drain ended
// (the task returned, or DrainTimeout passed). Call Expiry again when it
// closes: it is final from then on. Outside a task's context it returns
// nil, a channel that never closes.
func RenewalsDone(ctx context.Context) <-chan struct{} {
	if st, ok := ctx.Value(termKey{}).(*leadership); ok {
		return st.renewalsDone
	}
	return nil
}
