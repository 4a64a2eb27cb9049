package main

import (
	"context"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// resourceUse is what holding many leases costs one process.
type resourceUse struct {
	leases     int
	ttl        time.Duration
	heap       uint64  // heap in use while holding them, above the process's before
	stacks     uint64  // goroutine stacks in use, above the process's before
	goroutines int     // above the process's before
	cpuPerHour float64 // CPU seconds (user + system) per hour of holding them
	renewals   float64 // successful renewals per second
}

// resources opens n leases on st through one connection, holds each with a
// runner at the defaults for ttl, and once all are held measures, over
// window, the process's CPU time and its renewals, and then its heap.
func resources(ctx context.Context, st *store, n int, ttl, window time.Duration) (resourceUse, error) {
	open, err := st.connect(st.endpoint)
	if err != nil {
		return resourceUse{}, err
	}
	baseHeap, baseStacks := memInUse()
	baseG := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(ctx)
	var (
		wg       sync.WaitGroup
		elected  atomic.Int64
		all      = make(chan struct{})
		renewals atomic.Int64
	)
	defer func() {
		cancel()
		wg.Wait()
	}()
	run := randomHex(4)
	for i := range n {
		l, err := open(ctx, fmt.Sprintf("resources-%s-%d", run, i), lease.Options{Identity: "bench-resources", TTL: ttl})
		if err != nil {
			return resourceUse{}, err
		}
		r, err := runner.New(runner.Config{
			Lease:  l,
			Logger: quiet,
			Task: func(ctx context.Context) error {
				<-ctx.Done()
				return nil
			},
			OnElected: func(lease.Term) {
				if elected.Add(1) == int64(n) {
					close(all)
				}
			},
			OnRenew: func(_ time.Duration, err error) {
				if err == nil {
					renewals.Add(1)
				}
			},
		})
		if err != nil {
			return resourceUse{}, err
		}
		wg.Go(func() { _ = r.Run(ctx) })
	}
	if err := waitFor(ctx, all, 2*ttl+time.Minute, fmt.Sprintf("the election of all %d leases", n)); err != nil {
		return resourceUse{}, fmt.Errorf("%w (%d elected)", err, elected.Load())
	}
	ctxtime.Sleep(ctx, ttl/3) // every lease's renewals under way
	window = wholeRenewals(window, ttl)
	cpu0, r0, t0 := cpuTime(), renewals.Load(), time.Now()
	ctxtime.Sleep(ctx, window)
	cpu1, r1, elapsed := cpuTime(), renewals.Load(), time.Since(t0)
	if ctx.Err() != nil {
		return resourceUse{}, ctx.Err()
	}
	if e := elected.Load(); e != int64(n) {
		return resourceUse{}, fmt.Errorf("%d elections for %d leases: some lost their lease while measured", e, n)
	}
	heap, stacks := memInUse()
	return resourceUse{
		leases:     n,
		ttl:        ttl,
		heap:       heap - min(baseHeap, heap),
		stacks:     stacks - min(baseStacks, stacks),
		goroutines: runtime.NumGoroutine() - baseG,
		cpuPerHour: (cpu1 - cpu0).Seconds() * float64(time.Hour) / float64(elapsed),
		renewals:   float64(r1-r0) / elapsed.Seconds(),
	}, nil
}

// memInUse returns the heap's in-use bytes after a garbage collection, and
// the goroutine stacks' (which the heap figure leaves out).
func memInUse() (heap, stacks uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.StackInuse
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wholeRenewals returns window rounded up to a whole number of the renew
// intervals of the runner's defaults for ttl. The leases are elected
// within moments of each other, so their renewals come in rounds: a window
// that ends mid-interval counts one round too many or too few (30s at a
// TTL of 15s saw six rounds of 5.625s, 200 renewals/s for 1,000 leases,
// where the rate is 178).
func wholeRenewals(window, ttl time.Duration) time.Duration {
	every := runner.DefaultRenewInterval(ttl)
	return (window + every - 1) / every * every
}
