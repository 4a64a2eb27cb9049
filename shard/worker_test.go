package shard

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

func TestConfigNamesTheField(t *testing.T) {
	store := memlease.NewStore().Objects("w")
	run := func(context.Context, Shard) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", Config{Group: "g", Shards: 1, Identity: "w", Run: run}, "Store"},
		{"no group", Config{Store: store, Shards: 1, Identity: "w", Run: run}, "Group"},
		{"no shards", Config{Store: store, Group: "g", Identity: "w", Run: run}, "Shards (0) must be between 1 and 100000"},
		{"too many shards", Config{Store: store, Group: "g", Shards: MaxShards + 1, Identity: "w", Run: run}, "Shards (100001)"},
		{"negative cap", Config{Store: store, Group: "g", Shards: 2, MaxPerWorker: -1, Identity: "w", Run: run}, "MaxPerWorker (-1) must be between 0 (no cap) and Shards (2)"},
		{"cap above the shards", Config{Store: store, Group: "g", Shards: 2, MaxPerWorker: 3, Identity: "w", Run: run}, "MaxPerWorker (3) must be between 0 (no cap) and Shards (2)"},
		{"no run", Config{Store: store, Group: "g", Shards: 1, Identity: "w"}, "Run"},
		{"no identity", Config{Store: store, Group: "g", Shards: 1, Run: run}, "Identity"},
		{"a probe's name", Config{Store: store, Group: "g", Shards: 1, Identity: "w.leasehold-probe", Run: run}, "Identity (w.leasehold-probe) must not end with .leasehold-probe"},
		{"renew interval too long", Config{Store: store, Group: "g", Shards: 1, Identity: "w", Run: run, TTL: 10 * time.Second, RenewInterval: 20 * time.Second}, "RenewInterval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an invalid option naming %q", err, tc.want)
			}
		})
	}
}

// TestSubMillisecondRenewIntervalRefusedByNew: the assignment keeps the
// group's renew interval in whole milliseconds, so a RenewInterval of
// 5.6255s would read back from the worker's own assignment as 5.625s, and
// Run would fail as a group mismatch even on the group's only worker. New
// refuses it up front, naming the field.
func TestSubMillisecondRenewIntervalRefusedByNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := New(Config{
			Store: memlease.NewStore().Objects("w"), Group: "g", Shards: 2, Identity: "w", Logger: simLogger(),
			RenewInterval: 5625500 * time.Microsecond,
			Run:           func(ctx context.Context, s Shard) error { <-ctx.Done(); return nil },
		})
		if err == nil {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			t.Fatalf("New accepted RenewInterval 5.6255s; Run, the group's only worker, then returned: %v", w.Run(ctx))
		}
		const want = "shard: RenewInterval (5.6255s) must be a whole number of milliseconds"
		if !errors.Is(err, lease.ErrInvalid) || err.Error() != want {
			t.Fatalf("New: %v, want %q", err, want)
		}
	})
}

// TestLeaseTokenAbove31BitsRefused: a Gen and a term token carry a lease's
// token in their high 32 bits, below 2^63 (the decoders' bound). A lease
// whose record puts its token at 2^31 (a record copied from another lease,
// restored from another system, written by a tool) would make the
// assigner write assignments that every worker's decoder refuses, halting
// the group for ever, or, above 2^32, epochs that wrap below earlier ones.
// The worker that takes such a token fails with an error naming it, and
// writes no assignment.
func TestLeaseTokenAbove31BitsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, key, want string
	}{
		{"assigner", assignerKey("g"), "shard: the assigner lease's token 2147483649 exceeds 2147483647"},
		{"liveness", memberKey("g", "a"), "shard: the liveness lease's token 2147483649 exceeds 2147483647"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const ttl = 15 * time.Second
				store := memlease.NewStore()
				store.Put(tc.key, driver.EncodeJSON(lease.Record{Holder: "older", Token: 1 << 31, TTL: ttl, Released: true, Nonce: "0123456789abcdef"}))
				w, err := New(Config{
					Store: store.Objects("a"), Group: "g", Shards: 4, Identity: "a", Logger: simLogger(),
					Run: func(ctx context.Context, s Shard) error { <-ctx.Done(); return nil },
				})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 20*ttl)
				defer cancel()
				err = w.Run(ctx)
				if data, ok := store.Bytes(assignmentKey("g")); ok {
					_, derr := decodeAssignment(data)
					t.Errorf("the worker wrote an assignment, which decodes as %v", derr)
				}
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Run: %v, want an error containing %q", err, tc.want)
				}
			})
		})
	}
}

// TestStalledWorkerLosesItsShards: the runner's stall watchdog, applied to
// the liveness, stops every shard of a worker whose shards make no
// progress (Lost), and they start again elsewhere; Progress through a
// shard's context keeps a worker's shards.
func TestStalledWorkerLosesItsShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var mu sync.Mutex
		events := map[string][]Event{}
		start := func(ctx context.Context, id string, progress bool) chan error {
			w, err := New(Config{
				Store: store.Objects(id), Group: "g", Shards: 4, Identity: id, Logger: simLogger(),
				StallTimeout: 15 * time.Second,
				Run: func(ctx context.Context, s Shard) error {
					for progress {
						select {
						case <-ctx.Done():
							return nil
						case <-time.After(time.Second):
							runner.Progress(ctx)
						}
					}
					<-ctx.Done()
					return nil
				},
				OnEvent: func(e Event) {
					mu.Lock()
					defer mu.Unlock()
					events[id] = append(events[id], e)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			return done
		}
		ctx, cancel := context.WithCancel(t.Context())
		stalled := start(ctx, "stalled", false)
		time.Sleep(10 * time.Second)
		healthy := start(ctx, "healthy", true)
		time.Sleep(2 * time.Minute)
		cancel()
		<-stalled
		<-healthy
		mu.Lock()
		defer mu.Unlock()
		kinds := func(id string) map[EventKind]int {
			out := map[EventKind]int{}
			for _, e := range events[id] {
				out[e.Kind]++
			}
			return out
		}
		if k := kinds("stalled"); k[Lost] == 0 {
			t.Fatalf("the stalled worker's events: %v; want shards lost to the stall watchdog", k)
		}
		if k := kinds("healthy"); k[Lost] != 0 || k[Assigned] == 0 {
			t.Fatalf("the healthy worker's events: %v; want shards assigned and none lost", k)
		}
	})
}

// TestEndedShardIsNotRestarted: a shard whose function returns by itself
// stays its worker's and does not start again (a start needs a new epoch);
// it is reported ended, and not revoked again when the worker leaves.
func TestEndedShardIsNotRestarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		kinds := map[EventKind]int{}
		w, err := New(Config{
			Store: memlease.NewStore().Objects("w"), Group: "g", Shards: 3, Identity: "w", Logger: simLogger(),
			Run: func(context.Context, Shard) error { return errors.New("done") },
			OnEvent: func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				kinds[e.Kind]++
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := runWorker(t, w)
		time.Sleep(time.Minute)
		if owned := w.Owned(); len(owned) != 0 {
			t.Errorf("Owned: %v; want none running", owned)
		}
		stop()
		mu.Lock()
		defer mu.Unlock()
		if kinds[Assigned] != 3 || kinds[Ended] != 3 || len(kinds) != 2 {
			t.Fatalf("events: %v; want each of 3 shards assigned and ended once, and nothing else", kinds)
		}
	})
}

// askingStore is a memlease Store whose leases say what another store's
// would: who judges expiry (Azure's native leases: the store), whether
// renewals change the version, and how many reads per renewal their
// followers make (lease.FollowerReader; Azure asks for six, 0 leaves the
// runner's default).
type askingStore struct {
	*memlease.Objects
	judge lease.Judge
	shows bool
	reads int
}

type askingLease struct {
	lease.Lease
	s askingStore
}

func (l askingLease) Judge() lease.Judge { return l.s.judge }
func (l askingLease) RenewalsShow() bool { return l.s.shows }
func (l askingLease) FollowerReads() int { return l.s.reads }

func (s askingStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Objects.Lease(key, opts)
	return askingLease{l, s}, err
}

// nativeStore is an askingStore whose leases are judged by the store, as
// Azure's native leases are, and whose renewals change the version
// (memlease's do) if shows is set.
func nativeStore(o *memlease.Objects, shows bool) askingStore {
	return askingStore{Objects: o, judge: lease.JudgedByStore, shows: shows}
}

// TestNativeLeases: the assigner judges liveness by rule 2 on listed
// versions, whoever judges the leases. Run refuses a store whose native
// leases' renewals do not change the version (every live worker would look
// expired), naming it; on one whose renewals show (Azure's), workers keep
// their shards while they renew, and a crashed worker's shards move.
func TestNativeLeases(t *testing.T) {
	t.Run("RenewalsHidden", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			w, err := New(Config{Store: nativeStore(memlease.NewStore().Objects("w"), false), Group: "g", Shards: 1, Identity: "w", Logger: simLogger(),
				Run: func(context.Context, Shard) error { return nil }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err = w.Run(ctx)
			if !errors.Is(err, lease.ErrUnsafeStore) || !strings.Contains(err.Error(), "shard.askingStore") || !strings.Contains(err.Error(), "lease.RenewalsShow is false") {
				t.Fatalf("Run on native leases whose renewals do not show: %v, want lease.ErrUnsafeStore naming the store and lease.RenewalsShow", err)
			}
		})
	})
	t.Run("RenewalsShow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			mem := memlease.NewStore()
			var mu sync.Mutex
			lost := map[string]int{}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			start := func(id string) *Worker {
				w, err := New(Config{
					Store: nativeStore(mem.Objects(id), true), Group: "g", Shards: 4, Identity: id, Logger: simLogger(),
					Run: func(ctx context.Context, s Shard) error { <-ctx.Done(); return nil },
					OnEvent: func(e Event) {
						mu.Lock()
						defer mu.Unlock()
						if e.Kind == Revoked || e.Kind == Lost {
							lost[id]++
						}
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				go func() {
					if err := w.Run(ctx); err != nil {
						t.Errorf("Run(%s): %v", id, err)
					}
				}()
				return w
			}
			a := start("a")
			time.Sleep(time.Minute)
			b := start("b")
			time.Sleep(2 * time.Minute)
			mu.Lock()
			if len(a.Owned()) != 2 || len(b.Owned()) != 2 || lost["b"] != 0 {
				t.Errorf("a owns %v, b owns %v, b lost shards %d times; want them balanced and kept", a.Owned(), b.Owned(), lost["b"])
			}
			mu.Unlock()
			mem.Partition("b")
			time.Sleep(2 * time.Minute)
			if got := a.Owned(); len(got) != 4 {
				t.Errorf("after b crashed, a owns %v; want all 4", got)
			}
			cancel()
			mem.Heal("b")
			synctest.Wait()
		})
	})
}

// hangingLists is a Store whose first listings hang until their context
// ends, while leases and objects answer.
type hangingLists struct {
	*memlease.Objects
	mu    sync.Mutex
	hangs int
}

func (s *hangingLists) List(ctx context.Context, prefix string) (map[string]string, error) {
	s.mu.Lock()
	hang := s.hangs > 0
	s.hangs--
	s.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return s.Objects.List(ctx, prefix)
}

// TestStoreCallsAreBounded: a request that hangs is cut off by CallTimeout,
// so a listing that never answers does not stop the assigner for good.
func TestStoreCallsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := New(Config{
			Store: &hangingLists{Objects: memlease.NewStore().Objects("w"), hangs: 2}, Group: "g", Shards: 3, Identity: "w", Logger: simLogger(),
			Run: func(ctx context.Context, _ Shard) error { <-ctx.Done(); return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := runWorker(t, w)
		time.Sleep(time.Minute)
		if owned := w.Owned(); len(owned) != 3 {
			t.Errorf("Owned after a minute: %v; want the 3 shards", owned)
		}
		stop()
	})
}

func TestAckMerge(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b, want ack
	}{
		{"later term wins", ack{Token: 2}, ack{Token: 1, Applied: 9, Left: true}, ack{Token: 2}},
		{"an older acknowledgement takes nothing away", ack{Token: 1, Applied: 3}, ack{Token: 1, Applied: 7, Left: true}, ack{Token: 1, Applied: 7, Left: true}},
		{"left and applied combine", ack{Token: 1, Applied: 8}, ack{Token: 1, Applied: 7, Left: true}, ack{Token: 1, Applied: 8, Left: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.merge(tc.b); got != tc.want {
				t.Fatalf("merge: %+v, want %+v", got, tc.want)
			}
			if got := tc.b.merge(tc.a); got != tc.want {
				t.Fatalf("merge the other way: %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestHelloOverAnEarlierTerm: a worker whose acknowledgement key holds an
// earlier term's says hello at once, on the version it reads back, rather
// than after a pause.
func TestHelloOverAnEarlierTerm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		store.Put(ackKey("g", "w"), ack{Token: 7, Left: true}.encode())
		w, err := New(Config{Store: store.Objects("w"), Group: "g", Shards: 1, Identity: "w", Logger: simLogger(),
			Run: func(ctx context.Context, _ Shard) error { <-ctx.Done(); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		stop := runWorker(t, w)
		time.Sleep(time.Millisecond)
		b, _ := store.Bytes(ackKey("g", "w"))
		if k, err := decodeAck(b); err != nil || k.Token == 7 {
			t.Errorf("acknowledgement 1 ms after start: %+v, %v; want the new term's hello", k, err)
		}
		stop()
	})
}

// TestDrainKeepsLivenessRenewed: with DrainTimeout, a worker told to stop
// keeps renewing its liveness while its shards' functions wind down, as
// the runner does for a draining task.
func TestDrainKeepsLivenessRenewed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		w, err := New(Config{
			Store: store.Objects("w"), Group: "g", Shards: 2, Identity: "w", Logger: simLogger(),
			DrainTimeout: time.Minute,
			Run: func(ctx context.Context, _ Shard) error {
				<-ctx.Done()
				time.Sleep(20 * time.Second) // longer than the renew deadline
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		time.Sleep(30 * time.Second)
		if len(w.Owned()) != 2 {
			t.Fatalf("Owned: %v; want both shards", w.Owned())
		}
		cancel()
		before, _ := store.Bytes(memberKey("g", "w"))
		time.Sleep(15 * time.Second)
		after, _ := store.Bytes(memberKey("g", "w"))
		if string(before) == string(after) {
			t.Error("the liveness record was not renewed while the shards drained")
		}
		<-done
	})
}

// TestUnhealthyWorkerLosesItsShards: the runner's health check, applied to
// the liveness, stops every shard of a worker whose check fails. The check
// fails once the worker runs both shards: failing from the start, it could
// end every liveness term before an assignment came.
func TestUnhealthyWorkerLosesItsShards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		kinds := map[EventKind]int{}
		w, err := New(Config{
			Store: memlease.NewStore().Objects("w"), Group: "g", Shards: 2, Identity: "w", Logger: simLogger(),
			HealthCheck: func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if kinds[Assigned] < 2 {
					return nil
				}
				return errors.New("disk full")
			},
			HealthThreshold: 1,
			Run:             func(ctx context.Context, _ Shard) error { <-ctx.Done(); return nil },
			OnEvent: func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				kinds[e.Kind]++
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		stop := runWorker(t, w)
		time.Sleep(time.Minute)
		stop()
		mu.Lock()
		defer mu.Unlock()
		if kinds[Lost] == 0 {
			t.Fatalf("events: %v; want shards lost to the failing health check", kinds)
		}
	})
}

// TestRunReturnsNilWhenItsContextEnds: a worker stopped through its
// context, whatever the cause the caller gave (a signal, say), returns nil.
func TestRunReturnsNilWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, err := New(Config{
			Store: memlease.NewStore().Objects("w"), Group: "g", Shards: 1, Identity: "w", Logger: simLogger(),
			Run: func(ctx context.Context, s Shard) error { <-ctx.Done(); return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancelCause(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		time.Sleep(30 * time.Second)
		stop(errors.New("received terminated"))
		if err := <-done; err != nil {
			t.Fatalf("Run after its context ended with a cause: %v, want nil", err)
		}
	})
}

// runWorker runs w until the returned stop is called; stop cancels Run's
// context, waits for Run to return, and returns its error.
func runWorker(t *testing.T, w *Worker) (stop func() error) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

// TestAssignerSaysWhoAssigns: exactly one of two workers is the assigner
// (Self, with the assigner lease's token), the one that holds the lease,
// and the other names it; once it leaves, the other becomes the assigner,
// with a greater token.
func TestAssignerSaysWhoAssigns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		workers := map[string]*Worker{}
		stops := map[string]func() error{}
		for _, id := range []string{"a", "b"} {
			w, err := New(Config{Store: store.Objects(id), Group: "g", Shards: 2, Identity: id, Logger: simLogger(),
				Run: func(ctx context.Context, _ Shard) error { <-ctx.Done(); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			workers[id], stops[id] = w, runWorker(t, w)
			time.Sleep(time.Minute)
		}
		if a := workers["a"].Assigner(); !a.Self || a.Token == 0 || a.Identity != "a" {
			t.Fatalf("a, the first to join: %+v; want the assigner, with its token", a)
		}
		if b := workers["b"].Assigner(); b.Self || b.Token != 0 || b.Identity != "a" {
			t.Fatalf("b: %+v; want not the assigner, naming a", b)
		}
		first := workers["a"].Assigner().Token
		if err := stops["a"](); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if a := workers["a"].Assigner(); a != (AssignerInfo{}) {
			t.Errorf("a, after it left: %+v; want not the assigner, naming none", a)
		}
		time.Sleep(time.Minute)
		if b := workers["b"].Assigner(); !b.Self || b.Token <= first || b.Identity != "b" {
			t.Errorf("b, after a left: %+v; want the assigner, with a token above a's %d", b, first)
		}
		if err := stops["b"](); err != nil {
			t.Fatal(err)
		}
	})
}
