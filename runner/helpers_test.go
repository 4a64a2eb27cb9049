package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// The tests run inside synctest bubbles: time is fake, and advances only
// when every goroutine in the bubble is blocked.
const (
	ttl           = 15 * time.Second
	renewDeadline = 8437500 * time.Microsecond // the default: 9/16 of ttl
	renewInterval = 5625 * time.Millisecond    // the default: 3/8 of ttl
)

// advance lets the bubble's fake clock run for d.
func advance(d time.Duration) { <-time.After(d) }

var quiet = slog.New(slog.DiscardHandler)

// openLease opens the lease "job" in store for identity.
func openLease(t *testing.T, store *memlease.Store, identity string) lease.Lease {
	t.Helper()
	l, err := store.Open("job", lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatalf("open lease for %s: %v", identity, err)
	}
	return l
}

// term is one leadership as the leader's own task saw it: from the moment
// the task started to the moment its context was cancelled.
type term struct {
	who        string
	token      uint64
	start, end time.Time
}

// journal records terms and demotions from any number of runners.
type journal struct {
	mu        sync.Mutex
	terms     []term
	demotions map[string][]runner.Demotion
	leading   map[string]bool
}

func newJournal() *journal {
	return &journal{demotions: map[string][]runner.Demotion{}, leading: map[string]bool{}}
}

// task returns a leader task that records its term and returns as soon as
// its context is cancelled.
func (j *journal) task(who string) func(context.Context) error {
	return func(ctx context.Context) error {
		lt, ok := runner.Term(ctx)
		if !ok {
			return fmt.Errorf("task of %s: no term in context", who)
		}
		j.mu.Lock()
		j.leading[who] = true
		j.mu.Unlock()
		start := time.Now()
		<-ctx.Done()
		j.mu.Lock()
		defer j.mu.Unlock()
		j.leading[who] = false
		j.terms = append(j.terms, term{who: who, token: lt.Token, start: start, end: time.Now()})
		return nil
	}
}

func (j *journal) demoted(who string) func(runner.Demotion) {
	return func(d runner.Demotion) {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.demotions[who] = append(j.demotions[who], d)
	}
}

// leader returns who is leading now, or "".
func (j *journal) leader() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	for who, on := range j.leading {
		if on {
			return who
		}
	}
	return ""
}

// checkSafety fails the test if two terms overlap or tokens do not strictly
// increase in the order the terms began.
func (j *journal) checkSafety(t *testing.T) {
	t.Helper()
	terms := j.recorded()
	slices.SortFunc(terms, func(a, b term) int { return a.start.Compare(b.start) })
	for i := 1; i < len(terms); i++ {
		prev, cur := terms[i-1], terms[i]
		// One contender's terms follow each other in one goroutine; another
		// contender's term must begin strictly after, as RenewDeadline < TTL.
		if cur.start.Before(prev.end) || cur.who != prev.who && cur.start.Equal(prev.end) {
			t.Errorf("two leaders at once: %s (token %d) began at %v, before %s (token %d) ended at %v",
				cur.who, cur.token, cur.start, prev.who, prev.token, prev.end)
		}
		if cur.token <= prev.token {
			t.Errorf("token did not increase: %s had %d, then %s got %d", prev.who, prev.token, cur.who, cur.token)
		}
	}
}

// shared is a value written by a runner's goroutines and read by the test.
type shared[T any] struct {
	mu sync.Mutex
	v  T
}

func (s *shared[T]) set(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.v = v
}

func (s *shared[T]) get() T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

func (s *shared[T]) update(f func(*T)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.v)
}

// recorded returns the terms recorded so far.
func (j *journal) recorded() []term {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.terms)
}

// demotionsOf returns the demotions of who.
func (j *journal) demotionsOf(who string) []runner.Demotion {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.demotions[who])
}

// start runs a runner with cfg until the test's bubble ends it, and returns
// a function that stops it and waits for Run to return.
func start(t *testing.T, cfg runner.Config) (stop func() error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	// stop may be called from several goroutines (a test's and its
	// cleanup); they wait on a channel, which inside a bubble is durably
	// blocking, unlike a sync.Once in progress.
	var once sync.Once
	var result error
	stopped := make(chan struct{})
	stop = func() error {
		once.Do(func() {
			go func() {
				cancel()
				result = <-done
				close(stopped)
			}()
		})
		<-stopped
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}
