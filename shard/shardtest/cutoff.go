package shardtest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/leasehold/shard"
)

// CutOff runs a group in real time on a backend's store: two workers share
// four shards, then one is cut off (as kill -9 would leave it), and the
// other must run all four within recover, once the assigner has judged the
// cut one's liveness expired; it logs how long that took, the figure. The
// cut worker must run none by then. store returns worker id's Store, whose
// every request fails while cut is set; cfg gives the group's TTL and
// CallTimeout; settle bounds the first balance. recover counts from the
// cut, or from the last renewal of the other worker's liveness that failed
// (a store that load slows: how much that delays the takeover is the
// machine's figure, not the code's), up to three times recover in all.
func CutOff(t *testing.T, store func(id string, cut *atomic.Bool) shard.Store, cfg shard.Config, settle, recover time.Duration) {
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var aTrouble trouble
	start := func(id string, cut *atomic.Bool) *shard.Worker {
		c := cfg
		c.Store, c.Group, c.Shards, c.Identity = store(id, cut), "g", 4, id
		c.Run = func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }
		if id == "a" {
			c.OnRenew = func(_ time.Duration, err error) {
				if err != nil {
					aTrouble.mark()
				}
			}
		}
		w, err := shard.New(c)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := w.Run(ctx); err != nil {
				t.Errorf("Run(%s): %v", id, err)
			}
		})
		return w
	}
	a := start("a", &atomic.Bool{})
	waitFor(t, "a runs all four shards", settle, func() bool { return len(a.Owned()) == 4 })
	bCut := &atomic.Bool{}
	b := start("b", bCut)
	waitFor(t, "a and b run two shards each", settle, func() bool { return len(a.Owned()) == 2 && len(b.Owned()) == 2 })
	bCut.Store(true)
	cutAt := time.Now()
	for len(a.Owned()) != 4 {
		if over, calm := aTrouble.overdue(cutAt, recover, 3*recover); over {
			t.Fatalf("a runs %v, not all four shards, %v after b was cut off, %v after a's renewal last failed or the cut (recover %v)", a.Owned(), time.Since(cutAt).Round(time.Millisecond), time.Since(calm).Round(time.Millisecond), recover)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("a ran all four shards %v after b was cut off (TTL %v)", time.Since(cutAt).Round(time.Millisecond), cfg.TTL)
	if got := b.Owned(); len(got) != 0 {
		t.Errorf("b, cut off, still runs %v", got)
	}
}

// waitFor polls ok until it holds, or fails the test after d.
func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}
