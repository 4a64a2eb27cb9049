package memlease_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/lease/memlease"
)

const ttl = 15 * time.Second

// harness is a fresh store per subtest; its foreign object is plain text.
type harness struct{ store *memlease.Store }

func (h harness) Open(_ context.Context, name string, opts lease.Options) (lease.Lease, error) {
	return h.store.Open(name, opts)
}

func (h harness) WriteForeign(_ context.Context, name string) error {
	h.store.Put(name, []byte("not a lease"))
	return nil
}

func (h harness) Delete(_ context.Context, name string) error {
	h.store.Delete(name)
	return nil
}

func TestConformance(t *testing.T) {
	leasetest.RunConformanceTests(t, leasetest.Config{
		NewHarness: func(*testing.T) leasetest.Harness { return harness{memlease.NewStore()} },
		TTL:        ttl,
		FakeTime:   true,
	})
}

// open opens the lease "job" in store for identity, with the suite's TTL.
func open(t *testing.T, store *memlease.Store, identity string) lease.Lease {
	t.Helper()
	l, err := store.Open("job", lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatalf("Open for %s: %v", identity, err)
	}
	return l
}

func TestForeignObjectsAreCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
	}{
		{name: "garbage", data: "not a lease"},
		{name: "empty", data: ""},
		{name: "foreign JSON", data: `{"holder":"x"}`},
		{name: "later format", data: `{"leasehold":2,"holder":"x","token":1,"ttl_ms":15000,"released":false,"nonce":"00"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memlease.NewStore()
			store.Put("job", []byte(tc.data))
			l := open(t, store, "worker-1")
			if _, err := l.Acquire(t.Context()); !errors.Is(err, lease.ErrCorrupt) {
				t.Errorf("Acquire of %q: %v, want ErrCorrupt", tc.data, err)
			}
			if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrCorrupt) {
				t.Errorf("Observe of %q: %v, want ErrCorrupt", tc.data, err)
			}
			if got, _ := store.Bytes("job"); string(got) != tc.data {
				t.Errorf("stored bytes after the attempts: %q, want the foreign object %q untouched", got, tc.data)
			}
		})
	}
}

func TestVersionIsMD5OfBytes(t *testing.T) {
	store := memlease.NewStore()
	l := open(t, store, "worker-1")
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	data, ok := store.Bytes("job")
	if !ok {
		t.Fatal("Bytes(job): no object after Acquire")
	}
	sum := md5.Sum(data)
	if want := hex.EncodeToString(sum[:]); term.Version != want {
		t.Errorf("term version %q, want the MD5 of the stored bytes %q", term.Version, want)
	}
	if !strings.Contains(string(data), `"holder":"worker-1"`) {
		t.Errorf("stored bytes %s, want a JSON record naming worker-1", data)
	}
	if _, ok := store.Bytes("other"); ok {
		t.Errorf("Bytes(other) reports an object that was never stored")
	}
}

func TestFaults(t *testing.T) {
	t.Run("FailNext", func(t *testing.T) {
		store := memlease.NewStore()
		l := open(t, store, "worker-1")
		store.FailNext("worker-1", 2)
		for i := 1; i <= 2; i++ {
			if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
				t.Errorf("Observe %d with FailNext(2): %v, want ErrUnavailable", i, err)
			}
		}
		if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNoRecord) {
			t.Errorf("Observe 3 with FailNext(2): %v, want the store's answer, ErrNoRecord", err)
		}
		if reads, writes := store.Calls("worker-1"); reads != 3 || writes != 0 {
			t.Errorf("Calls = %d reads, %d writes; want 3 reads (failed ones count), 0 writes", reads, writes)
		}
	})
	t.Run("FailNextIsPerIdentity", func(t *testing.T) {
		store := memlease.NewStore()
		a, b := open(t, store, "worker-1"), open(t, store, "worker-2")
		store.FailNext("worker-1", 1)
		if _, err := b.Acquire(t.Context()); err != nil {
			t.Errorf("worker-2's Acquire while worker-1 has a fault: %v, want success", err)
		}
		if _, err := a.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
			t.Errorf("worker-1's Observe: %v, want ErrUnavailable", err)
		}
	})
	t.Run("LoseResponses", func(t *testing.T) {
		// The write is applied, its response lost; the engine reads back
		// and finds its own record.
		store := memlease.NewStore()
		l := open(t, store, "worker-1")
		store.LoseResponses("worker-1", 1)
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire with a lost response: %v, want the term the read-back finds", err)
		}
		if reads, writes := store.Calls("worker-1"); reads != 2 || writes != 1 {
			t.Errorf("Calls = %d reads, %d writes; want 2 reads (one before, one after the write), 1 write", reads, writes)
		}
		if data, _ := store.Bytes("job"); !strings.Contains(string(data), `"holder":"worker-1"`) {
			t.Errorf("stored %s, want the lost-response write applied", data)
		}
		// Reads are never lost, and the fault is used up.
		if _, err := l.Renew(t.Context(), term); err != nil {
			t.Errorf("Renew after the lost response: %v", err)
		}
		if _, writes := store.Calls("worker-1"); writes != 2 {
			t.Errorf("writes = %d, want 2", writes)
		}
	})
	t.Run("Delay", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			l := open(t, store, "worker-1")
			store.Delay("worker-1", 2*time.Second)
			start := time.Now()
			if _, err := l.Acquire(t.Context()); err != nil {
				t.Fatalf("Acquire with a 2s delay: %v", err)
			}
			if got := time.Since(start); got != 4*time.Second {
				t.Errorf("Acquire (a read and a write) took %v, want 4s", got)
			}
		})
	})
	t.Run("DelayPastCallTimeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			l := open(t, store, "worker-1") // CallTimeout: TTL/5 = 3s
			store.Delay("worker-1", 5*time.Second)
			start := time.Now()
			if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
				t.Errorf("Observe delayed past CallTimeout: %v, want ErrUnavailable", err)
			}
			if got := time.Since(start); got != 3*time.Second {
				t.Errorf("Observe returned after %v, want CallTimeout (3s)", got)
			}
		})
	})
	t.Run("PartitionAndHeal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			a, b := open(t, store, "worker-1"), open(t, store, "worker-2")
			store.Partition("worker-1")
			start := time.Now()
			for i := 1; i <= 3; i++ {
				if _, err := a.Observe(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
					t.Errorf("Observe %d while partitioned: %v, want ErrUnavailable", i, err)
				}
			}
			if got := time.Since(start); got != 0 {
				t.Errorf("partitioned calls took %v, want to fail at once", got)
			}
			if _, err := b.Acquire(t.Context()); err != nil {
				t.Errorf("worker-2's Acquire while worker-1 is partitioned: %v", err)
			}
			store.Heal("worker-1")
			if r, err := a.Observe(t.Context()); err != nil || r.Holder != "worker-2" {
				t.Errorf("Observe after Heal: %+v, %v; want worker-2's record", r, err)
			}
			if reads, writes := store.Calls("worker-1"); reads != 4 || writes != 0 {
				t.Errorf("Calls after Heal = %d reads, %d writes; want 4, 0 (Heal keeps the counts)", reads, writes)
			}
		})
	})
	t.Run("Hang", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := memlease.NewStore()
			l := open(t, store, "worker-1")
			store.Hang("worker-1")
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			start := time.Now()
			if _, err := l.Observe(ctx); err != context.DeadlineExceeded {
				t.Errorf("hung Observe under a 1s context: %v, want the context's own error", err)
			}
			if got := time.Since(start); got != time.Second {
				t.Errorf("hung Observe returned after %v, want when its context ended (1s)", got)
			}
			store.Heal("worker-1")
			if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNoRecord) {
				t.Errorf("Observe after Heal: %v, want ErrNoRecord", err)
			}
		})
	})
	t.Run("CallsOfUnknownIdentity", func(t *testing.T) {
		if reads, writes := memlease.NewStore().Calls("nobody"); reads != 0 || writes != 0 {
			t.Errorf("Calls(nobody) = %d, %d; want 0, 0", reads, writes)
		}
	})
}

func TestStoreOpen(t *testing.T) {
	_, err := memlease.NewStore().Open("", lease.Options{Identity: "worker-1"})
	var oe *lease.OptionError
	if !errors.Is(err, lease.ErrInvalid) || !errors.As(err, &oe) || oe.Field != "name" {
		t.Errorf("Open with an empty name: %v, want an *OptionError for name matching ErrInvalid", err)
	}
	_, err = memlease.NewStore().Open("job", lease.Options{})
	if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "Identity") {
		t.Errorf("Open without an identity: %v, want ErrInvalid naming Identity", err)
	}
}

func TestOpenURL(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		url     string
		wantErr string // "" for success; else a substring of the error
	}{
		{name: "plain", url: "mem://" + leasetest.UniqueName("open-url")},
		{name: "with path", url: "mem://" + leasetest.UniqueName("open-url") + "/with/path"},
		{name: "unknown query parameter", url: "mem://test-open-url?region=eu", wantErr: "unknown query parameter(s) region (known: none)"},
		{name: "empty name", url: "mem://", wantErr: "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lease.Open(ctx, tc.url, lease.Options{Identity: "worker-1"})
			if tc.wantErr != "" {
				if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(fmt.Sprint(err), tc.wantErr) {
					t.Errorf("Open(%q): %v, want ErrInvalid mentioning %q", tc.url, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.url, err)
			}
			if o := l.Options(); o.TTL != lease.DefaultTTL || o.CallTimeout != lease.DefaultTTL/5 {
				t.Errorf("Options() = %+v, want the defaults filled in", o)
			}
		})
	}
	// Leases opened by URL share the process-wide store, Default.
	name := leasetest.UniqueName("open-url-shared")
	a, err := lease.Open(ctx, "mem://"+name, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if data, ok := memlease.Default.Bytes(name); !ok || !strings.Contains(string(data), "worker-1") {
		t.Errorf("Default.Bytes after Acquire by URL: %s, %t; want worker-1's record", data, ok)
	}
}

// Open a lease by URL, take it, and give it up.
func Example_open() {
	ctx := context.Background()
	opts := lease.Options{Identity: "worker-1", TTL: 10 * time.Second}
	l, err := lease.Open(ctx, "mem://example-jobs", opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	term, err := l.Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("leader: %s, term of %v\n", term.Holder, term.TTL)

	// Another contender is refused with the holder's name.
	other, _ := lease.Open(ctx, "mem://example-jobs", lease.Options{Identity: "worker-2", TTL: 10 * time.Second})
	var held *lease.HeldError
	if _, err := other.Acquire(ctx); errors.As(err, &held) {
		fmt.Println("worker-2 refused: held by", held.Record.Holder)
	}

	if err := l.Release(ctx, term); err != nil {
		fmt.Println(err)
	}
	// Output:
	// leader: worker-1, term of 10s
	// worker-2 refused: held by worker-1
}

// acquireAndBreak has a acquire the lease and op break its record, as
// leasehold break --force does.
func acquireAndBreak(t *testing.T, a, op lease.Lease) {
	t.Helper()
	if _, err := a.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, err := op.Observe(t.Context())
	if err == nil {
		_, err = op.(lease.Breaker).Break(t.Context(), rec)
	}
	if err != nil {
		t.Fatalf("Break: %v", err)
	}
}

// TestOwnUnseenAcquisitionOfBrokenKeepsTheMark: an acquisition of a
// broken record whose answer is lost, and whose read back fails, is the
// Lease's own unseen write; the Acquire that takes it over (at once) took
// over the broken record, and its term says so, as the first would have:
// a shard worker's next term would otherwise say it took over the broken
// record's holder, whose shards would be freed while it runs them.
func TestOwnUnseenAcquisitionOfBrokenKeepsTheMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a, next, op := open(t, store, "worker-a"), open(t, store, "worker-next"), open(t, store, "operator")
		acquireAndBreak(t, a, op)
		store.Delay("worker-next", ttl/100)
		store.LoseResponses("worker-next", 1)
		done := make(chan error)
		go func() {
			_, err := next.Acquire(t.Context())
			done <- err
		}()
		for _, w := store.Calls("worker-next"); w == 0; _, w = store.Calls("worker-next") {
			time.Sleep(ttl / 1000)
		}
		store.Partition("worker-next") // the read back fails
		if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("the acquisition whose answer was lost: %v, want lease.ErrUnavailable", err)
		}
		store.Heal("worker-next")
		if r, err := op.Observe(t.Context()); err != nil || r.Holder != "worker-next" || r.Annotations.Get(lease.AnnotationBroken) != "1" {
			t.Fatalf("the record after the lost answer: %+v, %v; want worker-next's acquisition, marked broken", r, err)
		}
		tn, err := next.Acquire(t.Context())
		if err != nil || tn.Annotations.Get(lease.AnnotationBroken) != "1" {
			t.Errorf("the Acquire that takes the unseen acquisition over: %+v, %v; want a term marked broken", tn, err)
		}
	})
}

// TestTakeoverOfBrokenOverTermDropsTheMark: the record the acquisition
// after a Break writes carries lease.AnnotationBroken (its holder took
// over a broken record); when that holder dies before its first renewal,
// the term that takes its lapsed record over took over no broken record,
// and must not say so: a new shard assigner would wait for the dead
// holder's liveness term instead of freeing its shards at once.
func TestTakeoverOfBrokenOverTermDropsTheMark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a, next, c, op := open(t, store, "worker-a"), open(t, store, "worker-next"), open(t, store, "worker-c"), open(t, store, "operator")
		acquireAndBreak(t, a, op)
		tn, err := next.Acquire(t.Context())
		if err != nil || tn.Annotations.Get(lease.AnnotationBroken) != "1" {
			t.Fatalf("the acquisition after the Break: %+v, %v; want a term marked broken", tn, err)
		}
		// next never renews: c takes its record over once it has lapsed.
		for start := time.Now(); ; time.Sleep(ttl / 10) {
			tc, err := c.Acquire(t.Context())
			if err == nil {
				if got := tc.Annotations.Get(lease.AnnotationBroken); got != "" {
					t.Errorf("the takeover of a lapsed record: %s is %q, want none", lease.AnnotationBroken, got)
				}
				if r, err := op.Observe(t.Context()); err != nil || r.Annotations.Get(lease.AnnotationBroken) != "" {
					t.Errorf("the record the takeover wrote: %+v, %v; want no %s", r, err, lease.AnnotationBroken)
				}
				return
			}
			if !errors.Is(err, lease.ErrHeld) || time.Since(start) > 2*ttl {
				t.Fatalf("Acquire %v after the broken-over term's last write: %v", time.Since(start), err)
			}
		}
	})
}

// TestRenewFromAWriteSeenLanded: a renewal whose answer and read-back were
// lost is pending; once a read finds it landed, the next Renew of the
// term, still at the version before it, is written on it at once: one
// write, no conflict and no read-back, a call each that a holder whose
// writes must land within a TTL of its latest may not have time for.
func TestRenewFromAWriteSeenLanded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		a := open(t, store, "worker-a")
		tn, err := a.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		store.Delay("worker-a", ttl/100)
		store.LoseResponses("worker-a", 1)
		done := make(chan error)
		go func() {
			_, err := a.Renew(t.Context(), tn)
			done <- err
		}()
		for _, w := store.Calls("worker-a"); w < 2; _, w = store.Calls("worker-a") {
			time.Sleep(ttl / 1000)
		}
		store.Partition("worker-a") // the read back fails
		if err := <-done; !errors.Is(err, lease.ErrUnavailable) {
			t.Fatalf("the renewal whose answer and read-back were lost: %v, want lease.ErrUnavailable", err)
		}
		store.Heal("worker-a")
		if r, err := a.Observe(t.Context()); err != nil || r.Version == tn.Version || r.Holder != "worker-a" {
			t.Fatalf("the record after the lost renewal: %+v, %v; want the renewal landed", r, err)
		}
		reads, writes := store.Calls("worker-a")
		if _, err := a.Renew(t.Context(), tn); err != nil {
			t.Fatalf("Renew of the term at its version before the renewal seen landed: %v", err)
		}
		if r, w := store.Calls("worker-a"); r != reads || w != writes+1 {
			t.Errorf("that Renew made %d reads and %d writes, want 0 and 1: written on the renewal seen landed", r-reads, w-writes)
		}
	})
}
