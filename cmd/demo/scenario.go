package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// The scenarios use a short TTL so that they run in seconds. The runner's
// other timings are its defaults, derived from the TTL.
const (
	demoTTL      = 2 * time.Second
	stallTimeout = 600 * time.Millisecond
	waitLimit    = 10 * time.Second
)

// runScenarios plays the four scenarios on an in-memory store and prints
// their timeline to w. It fails if two workers ever led at once.
func runScenarios(ctx context.Context, w io.Writer) error {
	c := &cluster{store: memlease.NewStore(), tl: newTimeline(w), workers: map[string]*worker{}, elected: make(chan string, 16)}
	defer c.stopAll()

	c.tl.heading("1. Election: three workers campaign for one lease (TTL %v); one wins a fencing token", demoTTL)
	for _, name := range []string{"worker-1", "worker-2", "worker-3"} {
		if err := c.start(ctx, name); err != nil {
			return err
		}
		c.tl.event(name, "campaigning", "")
	}
	leader, err := c.nextElected(ctx)
	if err != nil {
		return err
	}
	pause(ctx, 1500*time.Millisecond)

	c.tl.heading("2. Crash: %s dies without releasing; the others wait until its record has been unchanged for the TTL", leader)
	crashed := time.Now()
	dead := leader
	c.crash(dead)
	if leader, err = c.nextElected(ctx); err != nil {
		return err
	}
	c.tl.event(leader, "took over", "%.1fs after the crash (TTL %v from its first sight of the last renewal)", time.Since(crashed).Seconds(), demoTTL)
	if err := c.restart(ctx, dead); err != nil {
		return err
	}
	pause(ctx, time.Second)

	c.tl.heading("3. Graceful handover: %s stops and releases; a follower takes over at its next poll, without waiting a TTL", leader)
	stopped := time.Now()
	gone := leader
	c.stop(gone)
	if leader, err = c.nextElected(ctx); err != nil {
		return err
	}
	c.tl.event(leader, "took over", "%.1fs after the release", time.Since(stopped).Seconds())
	if err := c.restart(ctx, gone); err != nil {
		return err
	}
	pause(ctx, time.Second)

	c.tl.heading("4. Stall: %s's task stops making progress; after StallTimeout (%v) it steps down, releases and cools down", leader, stallTimeout)
	c.stall(leader)
	if _, err = c.nextElected(ctx); err != nil {
		return err
	}
	pause(ctx, time.Second)

	c.stopAll()
	return c.summary()
}

// cluster is a set of workers competing for mem://demo, watched for safety.
type cluster struct {
	store   *memlease.Store
	tl      *timeline
	elected chan string

	mu       sync.Mutex
	workers  map[string]*worker
	leading  int // workers whose task is running now
	most     int // the most that ever were at once
	tokens   []uint64
	stopOnce sync.Once
}

type worker struct {
	name    string
	cancel  context.CancelFunc
	done    chan struct{}
	stalled bool
	silent  bool // crashed: a dead process reports nothing
}

func (c *cluster) start(ctx context.Context, name string) error {
	l, err := c.store.Open("demo", lease.Options{Identity: name, TTL: demoTTL})
	if err != nil {
		return err
	}
	wk := &worker{name: name, done: make(chan struct{})}
	r, err := runner.New(runner.Config{
		Lease:           l,
		Task:            func(ctx context.Context) error { return c.work(ctx, wk) },
		StallTimeout:    stallTimeout,
		Logger:          slog.New(slog.DiscardHandler),
		OnElected:       func(t lease.Term) { c.onElected(wk, t) },
		OnDemoted:       func(d runner.Demotion) { c.report(wk, "demoted", "%s (released: %t)", d.Reason, d.Released) },
		OnLeaderChanged: func(id string) { c.report(wk, "sees leader", "%s", id) },
	})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	wk.cancel = cancel
	c.mu.Lock()
	c.workers[name] = wk
	c.mu.Unlock()
	go func() {
		defer close(wk.done)
		_ = r.Run(wctx)
	}()
	return nil
}

// work is the leader task: it reports progress until it stalls, and counts
// how many tasks run at once.
func (c *cluster) work(ctx context.Context, wk *worker) error {
	c.mu.Lock()
	c.leading++
	c.most = max(c.most, c.leading)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.leading--
		c.mu.Unlock()
	}()
	return everyTick(ctx, 100*time.Millisecond, func() {
		c.mu.Lock()
		stalled := wk.stalled
		c.mu.Unlock()
		if !stalled {
			runner.Progress(ctx)
		}
	})
}

// everyTick is a leader's task that calls f every d until ctx ends, and
// then returns nil.
func everyTick(ctx context.Context, d time.Duration, f func()) error {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			f()
		}
	}
}

func (c *cluster) onElected(wk *worker, t lease.Term) {
	c.mu.Lock()
	c.tokens = append(c.tokens, t.Token)
	c.mu.Unlock()
	c.report(wk, "elected", "fencing token %d", t.Token)
	c.elected <- wk.name
}

// nextElected waits for the next election.
func (c *cluster) nextElected(ctx context.Context) (string, error) {
	select {
	case name := <-c.elected:
		return name, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(waitLimit):
		return "", fmt.Errorf("nobody was elected within %v", waitLimit)
	}
}

// crash kills a worker as a crashed process would die: cut off from the
// store, so it cannot release, and silent from then on.
func (c *cluster) crash(name string) {
	c.mu.Lock()
	wk := c.workers[name]
	wk.silent = true
	c.mu.Unlock()
	c.tl.event(name, "CRASHED", "no more renewals, no release")
	c.store.Partition(name)
	wk.cancel()
	<-wk.done
}

// restart starts a crashed or stopped worker again, as a new process with
// the same name: it rejoins as a follower.
func (c *cluster) restart(ctx context.Context, name string) error {
	c.store.Heal(name)
	c.tl.event(name, "restarted", "rejoins as a follower")
	return c.start(ctx, name)
}

// stop shuts a worker down gracefully: it releases the lease.
func (c *cluster) stop(name string) {
	c.mu.Lock()
	wk := c.workers[name]
	c.mu.Unlock()
	c.tl.event(name, "stopping", "graceful shutdown")
	wk.cancel()
	<-wk.done
}

func (c *cluster) stall(name string) {
	c.mu.Lock()
	c.workers[name].stalled = true
	c.mu.Unlock()
	c.tl.event(name, "STALLED", "task stops reporting progress")
}

func (c *cluster) stopAll() {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		workers := slices.Collect(func(yield func(*worker) bool) {
			for _, wk := range c.workers {
				if !yield(wk) {
					return
				}
			}
		})
		for _, wk := range workers {
			wk.silent = true
		}
		c.mu.Unlock()
		for _, wk := range workers {
			wk.cancel()
			<-wk.done
		}
	})
}

func (c *cluster) report(wk *worker, what, format string, args ...any) {
	c.mu.Lock()
	silent := wk.silent
	c.mu.Unlock()
	if !silent {
		c.tl.event(wk.name, what, format, args...)
	}
}

// summary prints the fencing tokens and checks the safety properties.
func (c *cluster) summary() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tl.heading("Summary")
	fmt.Fprintf(c.tl.w, "fencing tokens in order of election: %v\n", c.tokens)
	fmt.Fprintf(c.tl.w, "most leaders at any instant: %d\n", c.most)
	if c.most > 1 {
		return fmt.Errorf("safety violated: %d leaders at once", c.most)
	}
	if !slices.IsSorted(c.tokens) || len(slices.Compact(slices.Clone(c.tokens))) != len(c.tokens) {
		return fmt.Errorf("safety violated: fencing tokens %v do not strictly increase", c.tokens)
	}
	return nil
}

// pause waits for d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
