package runner_test

// Red team 13, held: what Config.Annotate returns is written only by a
// term whose task ran (1cf2ef6), also when Annotate takes past the renew
// deadline (the term then writes the annotations it took over, its task
// not started), and when Stop comes while Annotate runs.

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

func TestRedTeam13AnnotateImpliesTask(t *testing.T) {
	for _, tc := range []struct {
		name      string
		slow      time.Duration // how long Annotate takes
		stopAfter time.Duration // Stop this long after the start (0: never)
	}{
		{"quick", 0, 0},
		{"slow past the deadline", renewDeadline + time.Second, 0},
		{"slow past the TTL", 2 * renewDeadline, 0},
		{"stop during Annotate", renewDeadline / 2, time.Millisecond},
		{"stop during a slow Annotate", renewDeadline + time.Second, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				var annotated, ran atomic.Int32
				stop := start(t, runner.Config{
					Lease: openLease(t, store, "a"),
					Task: func(ctx context.Context) error {
						ran.Add(1)
						<-ctx.Done()
						return nil
					},
					Annotate: func(won lease.Term) lease.Annotations {
						annotated.Add(1)
						advance(tc.slow)
						return won.Annotations.With("test/ran", "a")
					},
				})
				if tc.stopAfter > 0 {
					advance(tc.stopAfter)
					_ = stop()
				} else {
					advance(3 * time.Minute)
					_ = stop()
				}
				synctest.Wait()
				rec, err := openLease(t, store, "c").Observe(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("annotate %d, task %d, record %+v", annotated.Load(), ran.Load(), rec)
				if rec.Annotations.Get("test/ran") != "" && ran.Load() == 0 {
					t.Errorf("the record carries Annotate's annotation, and no task ran")
				}
			})
		})
	}
}
