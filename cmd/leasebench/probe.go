package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

var (
	quiet      = slog.New(slog.DiscardHandler)
	discardLog = log.New(io.Discard, "", 0)
)

// probe wraps one contender's Lease for the measurements: it notes when
// an acquisition succeeded, the Sent of the latest successful acquire or
// renew, and when Release was called; and it can crash the contender. After
// a crash every call hangs until its context ends and sends nothing, as if
// the process had died: the lease is neither renewed nor released.
type probe struct {
	lease.Lease

	mu          sync.Mutex
	acquiredAt  time.Time // when the first successful Acquire returned
	acquired    chan struct{}
	lastSent    time.Time // Term.Sent of the latest successful acquire or renew
	releaseSent time.Time // when Release was called
	armed       bool      // crash right after the next successful renewal
	crashed     chan struct{}
	isCrashed   bool
}

func newProbe(l lease.Lease) *probe {
	return &probe{Lease: l, acquired: make(chan struct{}), crashed: make(chan struct{})}
}

// RenewalsShow forwards lease.RenewalShower, which embedding does not, so
// that the runner reads just after the renewals of a native lease that
// shows them (Azure) as it does on the compare-and-swap stores.
func (p *probe) RenewalsShow() bool { return lease.RenewalsShow(p.Lease) }

// FollowerReads forwards lease.FollowerReader, which embedding does not, so
// that the runner reads a lease as often as its store asks (Azure).
func (p *probe) FollowerReads() int { return lease.FollowerReads(p.Lease) }

// dead reports whether the contender has crashed.
func (p *probe) dead() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.isCrashed
}

// hang is a dead contender's call.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func (p *probe) Acquire(ctx context.Context) (lease.Term, error) {
	if p.dead() {
		return lease.Term{}, hang(ctx)
	}
	t, err := p.Lease.Acquire(ctx)
	if err == nil {
		p.mu.Lock()
		p.lastSent = t.Sent
		if p.acquiredAt.IsZero() {
			p.acquiredAt = time.Now()
			close(p.acquired)
		}
		p.mu.Unlock()
	}
	return t, err
}

func (p *probe) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if p.dead() {
		return lease.Term{}, hang(ctx)
	}
	nt, err := p.Lease.Renew(ctx, t)
	if err == nil {
		p.mu.Lock()
		p.lastSent = nt.Sent
		if p.armed && !p.isCrashed {
			p.isCrashed = true
			close(p.crashed)
		}
		p.mu.Unlock()
	}
	return nt, err
}

func (p *probe) Release(ctx context.Context, t lease.Term) error {
	if p.dead() {
		return hang(ctx)
	}
	p.mu.Lock()
	p.releaseSent = time.Now()
	p.mu.Unlock()
	return p.Lease.Release(ctx, t)
}

func (p *probe) Observe(ctx context.Context) (lease.Record, error) {
	if p.dead() {
		return lease.Record{}, hang(ctx)
	}
	return p.Lease.Observe(ctx)
}

// armCrash makes the contender crash right after its next successful
// renewal, so that the Sent of that renewal is the last the store saw.
func (p *probe) armCrash() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
}

func (p *probe) times() (acquiredAt, lastSent, releaseSent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acquiredAt, p.lastSent, p.releaseSent
}

// contender is a runner for one lease, running until stop is called.
type contender struct {
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	demoted []runner.Demotion
	led     []tenure
}

// tenure is one term a contender led, as its task saw it: from the task's
// start to its context's end (zero while it leads), and its token; began
// and ended number those two moments among every tenure's starts and ends
// in this process (ended 0 while it leads), which their times cannot
// order when equal: in a synctest bubble, time stands still while
// goroutines run, so that one term can begin and another end after it at
// one instant.
type tenure struct {
	start, end   time.Time
	token        uint64
	began, ended uint64
}

// tenureEvents numbers the starts and ends of every tenure (tenure.began,
// tenure.ended).
var tenureEvents atomic.Uint64

// variant is how a pair's contenders run: runners with a renew interval
// (zero for the default), written into their records as
// lease.Options.RenewInterval, and a renew deadline that leaves a
// sixteenth of the TTL, as the defaults do; and with a Prefer (empty:
// none), their Candidates the lease's name and runner.CandidatesSuffix, as
// leasehold run --prefer opens it.
type variant struct {
	renew  time.Duration
	prefer string
}

// handoffProbe is a probe of a lease.Handoffer that hands off too, so
// that a runner with a Prefer takes it.
type handoffProbe struct{ *probe }

func (p handoffProbe) ReleaseTo(ctx context.Context, t lease.Term, successor string) error {
	if p.dead() {
		return hang(ctx)
	}
	return p.Lease.(lease.Handoffer).ReleaseTo(ctx, t, successor)
}

// contend opens the lease name for the contender role with open, in a
// probe, and starts its runner; with a Prefer, its Candidates through
// open too, so that a counting opener counts their requests as the
// contender's.
func (v variant) contend(ctx context.Context, open opener, name, role string, ttl time.Duration) (*probe, *contender, error) {
	l, err := openRetrying(ctx, open, name, v.options(role, ttl))
	if err != nil {
		return nil, nil, err
	}
	pr := newProbe(l)
	if v.prefer == "" {
		c, err := v.start(ctx, pr)
		return pr, c, err
	}
	if _, ok := l.(lease.Handoffer); !ok {
		return nil, nil, fmt.Errorf("%T cannot hand off (lease.Handoffer), which Prefer needs", l)
	}
	cands, err := openRetrying(ctx, open, name+runner.CandidatesSuffix, v.options(role, ttl))
	if err != nil {
		return nil, nil, err
	}
	c, err := v.startWith(ctx, handoffProbe{pr}, cands)
	return pr, c, err
}

// options are the lease options of a contender called role.
func (v variant) options(role string, ttl time.Duration) lease.Options {
	return lease.Options{Identity: role, TTL: ttl, RenewInterval: v.renew}
}

// openRetrying opens the lease name with open, retrying a transient
// failure (dynamolease describes its table within the CallTimeout, which
// a busy emulator misses) every TTL/3, for up to three TTLs.
func openRetrying(ctx context.Context, open opener, name string, opts lease.Options) (lease.Lease, error) {
	deadline := time.Now().Add(3 * opts.TTL)
	for {
		l, err := open(ctx, name, opts)
		if err == nil || !lease.Retryable(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return l, err
		}
		ctxtime.Sleep(ctx, opts.TTL/3)
	}
}

// start starts l's contender: a runner's campaign in the background,
// until stopped.
func (v variant) start(ctx context.Context, l lease.Lease) (*contender, error) {
	return v.startWith(ctx, l, nil)
}

// startWith is start with v.prefer and cands as the runner's Prefer and
// Candidates, when v has a Prefer.
func (v variant) startWith(ctx context.Context, l, cands lease.Lease) (*contender, error) {
	c := &contender{done: make(chan struct{})}
	ttl := l.Options().TTL
	var deadline time.Duration
	if v.renew > 0 {
		deadline = min(runner.DefaultRenewDeadline(ttl), ttl-v.renew-ttl/16)
	}
	cfg := runner.Config{
		Lease:         l,
		RenewInterval: v.renew,
		RenewDeadline: deadline,
		Logger:        quiet,
		Task: func(ctx context.Context) error {
			t, _ := runner.Term(ctx)
			c.mu.Lock()
			c.led = append(c.led, tenure{start: time.Now(), token: t.Token, began: tenureEvents.Add(1)})
			i := len(c.led) - 1
			c.mu.Unlock()
			<-ctx.Done()
			c.mu.Lock()
			c.led[i].end, c.led[i].ended = time.Now(), tenureEvents.Add(1)
			c.mu.Unlock()
			return nil
		},
		OnDemoted: func(d runner.Demotion) {
			c.mu.Lock()
			c.demoted = append(c.demoted, d)
			c.mu.Unlock()
		},
	}
	if v.prefer != "" {
		cfg.Prefer, cfg.Candidates = v.prefer, cands
	}
	r, err := runner.New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, c.cancel = context.WithCancel(ctx)
	go func() {
		defer close(c.done)
		_ = r.Run(ctx)
	}()
	return c, nil
}

// stop ends the campaign and waits for Run to return.
func (c *contender) stop() {
	c.cancel()
	<-c.done
}

// tenures returns the terms it led so far.
func (c *contender) tenures() []tenure {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tenure(nil), c.led...)
}

// demotions returns the terms that ended so far.
func (c *contender) demotions() []runner.Demotion {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]runner.Demotion(nil), c.demoted...)
}
