package runner_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// twoHidden records the bytes after each of the holder's writes. The write
// after the task returned (the done mark) lands, and a restore then puts
// back the record from BEFORE the renewal that preceded it, hiding two
// writes sent a moment apart; the done mark's answer is held until gate
// closes.
type twoHidden struct {
	lease.Lease
	store    *memlease.Store
	mu       sync.Mutex
	hist     [][]byte
	renews   atomic.Int32
	taskDone atomic.Bool
	doneMark atomic.Pointer[[]byte]
	gate     chan struct{}
}

func (l *twoHidden) snap() {
	b, _ := l.store.Bytes("job")
	l.mu.Lock()
	l.hist = append(l.hist, b)
	l.mu.Unlock()
}

func (l *twoHidden) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	if err == nil {
		l.snap()
	}
	return t, err
}

func (l *twoHidden) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	isDone := l.taskDone.Load() && l.doneMark.Load() == nil
	nt, err := l.Lease.Renew(ctx, t)
	if err != nil {
		return nt, err
	}
	l.snap()
	l.renews.Add(1)
	if isDone {
		l.mu.Lock()
		b := l.hist[len(l.hist)-1]
		old := l.hist[len(l.hist)-3] // before the renewal before the done mark
		l.mu.Unlock()
		l.doneMark.Store(&b)
		l.store.Put("job", old) // restore: hides the renewal AND the done mark
		<-l.gate
	}
	return nt, err
}

// TestRedTeam3ReleaseAfterRestoreHidingTwoWrites: a's RunOnce acquires (0 s)
// and writes its period mark; its task returns right after its first
// renewal (5.625 s), and the done mark follows at once. A restore then puts
// back the period mark's record, hiding both the renewal and the done mark
// (which b, polling, never saw). b, which has counted that version since
// 0.1 s, takes over a TTL later (~15.1 s). A second restore puts the done
// mark back under b; a's done-mark answer arrives and a releases: the
// release's deadline is a TTL after the renewal was sent (20.625 s), not
// after the record b took over was sent (0 s).
func TestRedTeam3ReleaseAfterRestoreHidingTwoWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		began := time.Now()
		la := openLease(t, store, "a")
		hl := &twoHidden{Lease: la, store: store, gate: make(chan struct{})}
		j := newJournal()
		res := make(chan runner.Once, 1)
		go func() {
			res <- runPeriod(t, hl, "p1", runner.Config{}, func(ctx context.Context) error {
				_ = ctx
				for hl.renews.Load() < 2 { // period mark + first renewal
					advance(time.Millisecond)
				}
				hl.taskDone.Store(true)
				return nil
			})
		}()
		advance(100 * time.Millisecond)
		stopB := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: j.task("b")})
		for j.leader() != "b" && time.Since(began) < 40*time.Second {
			advance(10 * time.Millisecond)
		}
		bLed := time.Since(began)
		if j.leader() != "b" {
			t.Fatalf("b does not lead %v after a's acquisition (done mark %v)", bLed, hl.doneMark.Load() != nil)
		}
		if hl.doneMark.Load() == nil {
			t.Fatalf("b led at %v, renews %d, taskDone %v, no done mark", bLed, hl.renews.Load(), hl.taskDone.Load())
		}
		store.Hang("b")
		advance(500 * time.Millisecond)
		store.Put("job", *hl.doneMark.Load()) // second restore: a's done mark back under b
		close(hl.gate)
		a := <-res
		advance(100 * time.Millisecond)
		stopD := start(t, runner.Config{Lease: openLease(t, store, "d"), Task: j.task("d")})
		advance(10 * time.Second)
		_, _ = stopB(), stopD()
		t.Logf("b led from %v; released %t", bLed, a.Demotion.Released)
		for _, tm := range j.recorded() {
			t.Logf("%s (token %d) led from %v to %v", tm.who, tm.token, tm.start.Sub(began), tm.end.Sub(began))
		}
		j.checkSafety(t)
		if a.Demotion.Released {
			t.Errorf("a released the record a restore put back under b (b led from %v)", bLed)
		}
	})
}
