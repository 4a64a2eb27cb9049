package quorumlease_test

// Red team sequences against the quorum lease that held on c770cd7: kept
// as regression tests beside redteam_test.go's, which each failed there.
// Each checks one leader at a time with increasing tokens (claims a and
// b), and the liveness or contract the sequence aims at.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

func TestRedTeamHeldTwoRunnersOneLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3)
		l := f.open("a")
		for i := range 2 {
			who := fmt.Sprintf("a%d", i)
			r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Task: func(ctx context.Context) error {
				term, _ := runner.Term(ctx)
				f.mu.Lock()
				f.terms = append(f.terms, tenure{who: who, token: term.Token, start: time.Now()})
				j := len(f.terms) - 1
				f.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(ttl * 3 / 2):
				}
				f.mu.Lock()
				f.terms[j].end = time.Now()
				f.mu.Unlock()
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			f.cancel[who] = cancel
			f.wg.Go(func() { r.Run(ctx) })
		}
		f.start("b")
		for i := range 20 {
			time.Sleep(ttl / 2)
			if i%5 == 2 {
				f.q.stores[i%3].LoseResponses("a", 2)
				f.q.stores[(i+1)%3].FailNext("a", 1)
			}
		}
		terms := f.stop()
		t.Logf("%d tenures", len(terms))
		checkOneAtATime(t, terms)
	})
}

func TestRedTeamHeldLostAnswersAndFailures(t *testing.T) {
	for seed := range 20 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				for _, w := range []string{"a", "b", "c"} {
					f.start(w)
				}
				for i := range 40 {
					time.Sleep(ttl / 3)
					w := []string{"a", "b", "c"}[(i*7+seed)%3]
					m := (i*5 + seed) % 3
					switch (i + seed) % 4 {
					case 0:
						f.q.stores[m].LoseResponses(w, 1+i%3)
					case 1:
						f.q.stores[m].FailNext(w, 1+i%2)
					case 2:
						f.q.stores[m].Delay(w, ttl/5)
					case 3:
						f.q.stores[m].Heal(w)
					}
				}
				terms := f.stop()
				checkOneAtATime(t, terms)
			})
		})
	}
}

func TestRedTeamHeldTwoMembersDeleted(t *testing.T) {
	for _, pair := range [][2]int{{0, 1}, {1, 2}, {0, 2}} {
		t.Run(fmt.Sprint(pair), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				f.start("a")
				time.Sleep(ttl)
				f.start("b")
				f.start("c")
				time.Sleep(ttl)
				f.q.stores[pair[0]].Delete("job")
				f.q.stores[pair[1]].Delete("job")
				time.Sleep(6 * ttl)
				terms := f.stop()
				t.Logf("%+v", terms)
				checkOneAtATime(t, terms)
			})
		})
	}
}

func TestRedTeamHeldFiveMembersTwoDown(t *testing.T) {
	for _, down := range [][2]int{{0, 1}, {0, 4}, {2, 3}, {3, 4}} {
		t.Run(fmt.Sprint(down), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 5)
				who := []string{"a", "b", "c", "d"}
				for _, w := range who {
					f.q.stores[down[0]].Partition(w)
					f.q.stores[down[1]].Partition(w)
				}
				for _, w := range who {
					f.start(w)
				}
				time.Sleep(6 * ttl)
				terms := f.stop()
				if len(terms) != 1 {
					t.Errorf("tenures %+v, want one", terms)
				}
				checkOneAtATime(t, terms)
			})
		})
	}
}

type noKeep struct{ lease.Lease }

func (n noKeep) Wait(r lease.Record) time.Duration { return n.Lease.(lease.Watcher).Wait(r) }

func TestRedTeamHeldKeepWithANonKeeper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		openQ := func(who string) lease.Lease {
			var ms []lease.Lease
			for i, s := range h.stores {
				l, _ := s.Open("job", lease.Options{Identity: who, TTL: ttl})
				if i == 0 {
					l = noKeep{l}
				}
				ms = append(ms, l)
			}
			q, err := newQ(ms)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
		a, b := openQ("a"), openQ("b")
		ta := acquire(t, a)
		k, ok := a.(lease.Keeper)
		if !ok {
			t.Fatal("not a keeper")
		}
		if err := k.Keep(ctx, ta, 5*ttl); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for time.Since(start) < 5*ttl-ttl/4 {
			if tb, err := b.Acquire(ctx); err == nil {
				t.Fatalf("b acquired %+v after %v, during a's hold of %v", tb, time.Since(start), 5*ttl)
			}
			time.Sleep(ttl / 8)
		}
		tb := waitAcquire(t, b)
		if tb.Token <= ta.Token {
			t.Errorf("token %d after %d", tb.Token, ta.Token)
		}
	})
}

func newQ(ms []lease.Lease) (lease.Lease, error) { return quorumlease.New(ms, nil) }

func TestRedTeamHeldReleaseAfterAPartialRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		a, b := open(t, h, "a"), open(t, h, "b")
		ta := acquire(t, a)
		h.stores[1].FailNext("a", 2)
		h.stores[2].FailNext("a", 2)
		if _, err := a.Renew(ctx, ta.Annotate("x/y", "1")); err == nil {
			t.Fatal("nil")
		}
		if err := a.Release(ctx, ta); err != nil {
			t.Fatalf("release: %v", err)
		}
		if err := a.Release(ctx, ta); err != nil {
			t.Fatalf("release again: %v", err)
		}
		if _, err := a.Renew(ctx, ta); err == nil {
			t.Fatalf("renew after release: nil")
		}
		rec, err := b.Observe(ctx)
		t.Logf("%+v %v", rec, err)
		tb, err := b.Acquire(ctx)
		if err != nil {
			t.Fatalf("b after release: %v", err)
		}
		if tb.Token <= ta.Token {
			t.Fatal("token")
		}
		if _, err := a.Renew(ctx, ta); err == nil {
			t.Fatalf("renew after b: nil")
		}
		if err := a.Release(ctx, ta); err == nil {
			t.Fatalf("release after b took over: nil")
		}
		if _, err := b.Renew(ctx, tb); err != nil {
			t.Fatalf("b renew: %v", err)
		}
	})
}

func TestRedTeamHeldBreakOfAStaleRecordThenRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		a, b, op := open(t, h, "a"), open(t, h, "b"), open(t, h, "op")
		ta := acquire(t, a)
		h.stores[2].Partition("op")
		rec, err := op.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// stale: a renews in between
		ta, err = a.Renew(ctx, ta)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := op.(lease.Breaker).Break(ctx, rec); err == nil {
			t.Fatalf("break of a stale record: %+v, nil", r)
		} else {
			t.Logf("stale break: %v", err)
		}
		rec, _ = op.Observe(ctx)
		r, err := op.(lease.Breaker).Break(ctx, rec)
		if err != nil || r.Held() {
			t.Fatalf("break: %+v %v", r, err)
		}
		tb, err := b.Acquire(ctx)
		if err != nil || tb.Token <= ta.Token {
			t.Fatalf("b after break: %+v %v", tb, err)
		}
		if _, err := a.Renew(ctx, ta); err == nil {
			t.Fatalf("a renew after break and b: nil")
		} else {
			t.Logf("a: %v", err)
		}
	})
}

func TestRedTeamHeldSlowStoresTakeBack(t *testing.T) {
	for _, d := range []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 45 * time.Millisecond} {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				for _, s := range f.q.stores {
					s.Delay("a", d)
					s.Delay("b", d)
				}
				f.start("a")
				time.Sleep(ttl)
				f.start("b")
				time.Sleep(ttl)
				f.q.stores[2].Partition("a")
				time.Sleep(3 * ttl)
				f.q.stores[2].Heal("a")
				f.q.stores[2].Delay("a", d)
				time.Sleep(4 * ttl)
				rec := f.q.holderOf(t, 2)
				terms := f.stop()
				if len(terms) != 1 {
					t.Errorf("tenures %+v", terms)
				}
				if rec.Holder != "a" || rec.Annotations.Get("quorum/token") != "1" {
					t.Errorf("member 3 not taken back: %+v", rec)
				}
			})
		})
	}
}

func TestRedTeamHeldTwoMembersRestored(t *testing.T) {
	for seed := range 12 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 3)
				var copies [3][][]byte
				for _, w := range []string{"a", "b", "c"} {
					f.start(w)
					time.Sleep(ttl / 3)
				}
				for i := range 60 {
					time.Sleep(ttl / 5)
					for m := range 3 {
						if b, ok := f.q.stores[m].Bytes("job"); ok {
							copies[m] = append(copies[m], b)
						}
					}
					if i%7 == seed%7 {
						for _, m := range []int{seed % 3, (seed + 1) % 3} {
							if n := len(copies[m]); n > 0 {
								f.q.stores[m].Put("job", copies[m][(i*13+seed)%n])
							}
						}
					}
				}
				terms := f.stop()
				checkOneAtATime(t, terms)
			})
		})
	}
}

func TestRedTeamHeldContendersListingOtherOrders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3)
		openOrder := func(who string, order []int) lease.Lease {
			var ms []lease.Lease
			for _, i := range order {
				l, _ := f.q.stores[i].Open("job", lease.Options{Identity: who, TTL: ttl})
				ms = append(ms, l)
			}
			q, err := quorumlease.New(ms, nil)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
		orders := map[string][]int{"a": {0, 1, 2}, "b": {2, 1, 0}, "c": {1, 2, 0}}
		for who, o := range orders {
			r, _ := runner.New(runner.Config{Lease: openOrder(who, o), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Task: func(ctx context.Context) error {
				term, _ := runner.Term(ctx)
				f.mu.Lock()
				f.terms = append(f.terms, tenure{who: who, token: term.Token, start: time.Now()})
				j := len(f.terms) - 1
				f.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(ttl):
				}
				f.mu.Lock()
				f.terms[j].end = time.Now()
				f.mu.Unlock()
				return nil
			}})
			ctx, cancel := context.WithCancel(context.Background())
			f.cancel[who] = cancel
			f.wg.Go(func() { r.Run(ctx) })
		}
		time.Sleep(20 * ttl)
		terms := f.stop()
		t.Logf("%d tenures", len(terms))
		checkOneAtATime(t, terms)
	})
}
