package azurelease_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/shard"
)

var _ shard.StoreJudgedLeases = (*azurelease.Objects)(nil)

// The tests of Objects check the promises of shard.Store on Azurite, one
// by one. When the shard conformance suite exists, it replaces them.

func newObjects(t *testing.T, e *env) *azurelease.Objects {
	t.Helper()
	o, err := azurelease.NewObjects(azurelease.Options{Container: e.container, Client: e.client})
	if err != nil {
		t.Fatalf("NewObjects: %v", err)
	}
	return o
}

func TestNewObjectsNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		opts azurelease.Options
		want string
	}{
		{azurelease.Options{Container: "ccc", ConnectionString: "AccountName=a;AccountKey=a2V5", Blob: "x"}, "Blob"},
		{azurelease.Options{Container: "ccc", ConnectionString: "AccountName=a;AccountKey=a2V5", InfiniteLease: true}, "InfiniteLease"},
		{azurelease.Options{Container: "ab"}, "Container"},
		{azurelease.Options{Container: "abc"}, "Client, ConnectionString or AccountURL"},
	} {
		_, err := azurelease.NewObjects(tc.opts)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewObjects(%+v): %v; want lease.ErrInvalid naming %q", tc.opts, err, tc.want)
		}
	}
}

// TestObjectsPut: Put creates only an absent key, replaces only the
// stored version, and returns a new version when the bytes change.
func TestObjectsPut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newObjects(t, e)
	ctx := t.Context()
	v1, err := o.Put(ctx, "g/a", []byte("one"), "")
	if err != nil {
		t.Fatalf("Put(create): %v", err)
	}
	if _, err := o.Put(ctx, "g/a", []byte("again"), ""); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put(create) of an existing key: %v; want driver.ErrConflict", err)
	}
	v2, err := o.Put(ctx, "g/a", []byte("two"), v1)
	if err != nil || v2 == v1 {
		t.Fatalf("Put(replace %s): %q, %v; want a new version", v1, v2, err)
	}
	if _, err := o.Put(ctx, "g/a", []byte("three"), v1); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put(replace) of a stale version: %v; want driver.ErrConflict", err)
	}
	if _, err := o.Put(ctx, "g/absent", []byte("x"), v2); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put(replace) of an absent key: %v; want driver.ErrConflict", err)
	}
	big := bytes.Repeat([]byte{7}, 1<<20)
	vb, err := o.Put(ctx, "g/big", big, "")
	if err != nil {
		t.Fatalf("Put of 1 MiB: %v", err)
	}
	got, v, err := o.Get(ctx, "g/big", "")
	if err != nil || v != vb || !bytes.Equal(got, big) {
		t.Fatalf("Get of 1 MiB: %d bytes, %q, %v; want them back at %q", len(got), v, err, vb)
	}
}

// TestObjectsGet: Get returns the bytes and version, the version alone
// when it is known, and lease.ErrNoRecord for an absent key.
func TestObjectsGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newObjects(t, e)
	ctx := t.Context()
	if _, _, err := o.Get(ctx, "g/a", ""); !errors.Is(err, lease.ErrNoRecord) {
		t.Fatalf("Get of an absent key: %v; want lease.ErrNoRecord", err)
	}
	v1, err := o.Put(ctx, "g/a", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	data, v, err := o.Get(ctx, "g/a", "")
	if err != nil || v != v1 || string(data) != "one" {
		t.Fatalf("Get: %q, %q, %v; want \"one\" at %q", data, v, err, v1)
	}
	data, v, err = o.Get(ctx, "g/a", v1)
	if err != nil || v != v1 || data != nil {
		t.Fatalf("Get known %q: %q, %q, %v; want the version alone", v1, data, v, err)
	}
	v2, err := o.Put(ctx, "g/a", []byte("two"), v1)
	if err != nil {
		t.Fatal(err)
	}
	data, v, err = o.Get(ctx, "g/a", v1)
	if err != nil || v != v2 || string(data) != "two" {
		t.Fatalf("Get known %q after a write: %q, %q, %v; want \"two\" at %q", v1, data, v, err, v2)
	}
}

// TestObjectsList: List shows every key under the prefix at the version
// Put returned, more than a page of them, and nothing else; a leased blob
// shows a new version at every listing while leased, and its ETag once
// released.
func TestObjectsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := newObjects(t, e)
	ctx := t.Context()
	want := map[string]string{}
	for i := range 5003 { // a page is 5,000 blobs
		key := "g/acks/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String()
		if _, ok := want[key]; ok {
			continue
		}
		v, err := o.Put(ctx, key, []byte(key), "")
		if err != nil {
			t.Fatal(err)
		}
		want[key] = v
	}
	if _, err := o.Put(ctx, "other/x", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	got, err := o.List(ctx, "g/")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("List: %d keys; want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("List: %s at %q; want %q", k, got[k], v)
		}
	}

	l, err := o.Lease("g/members/w", lease.Options{Identity: "w", TTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	term, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]bool{}
	for range 3 {
		got, err := o.List(ctx, "g/members/")
		if err != nil {
			t.Fatal(err)
		}
		versions[got["g/members/w"]] = true
		if _, err := l.Renew(ctx, term); err != nil {
			t.Fatal(err)
		}
	}
	if len(versions) != 3 {
		t.Fatalf("three listings of a held lease showed the versions %v; want three", versions)
	}
	if err := l.Release(ctx, term); err != nil {
		t.Fatal(err)
	}
	versions = map[string]bool{}
	for range 3 {
		got, err := o.List(ctx, "g/members/")
		if err != nil {
			t.Fatal(err)
		}
		versions[got["g/members/w"]] = true
	}
	if len(versions) != 1 {
		t.Fatalf("three listings of a released lease showed the versions %v; want one", versions)
	}
}

// cut fails every request while it is set, as a network partition would.
type cut struct{ on atomic.Bool }

func (c *cut) Do(req *policy.Request) (*http.Response, error) {
	if c.on.Load() {
		return nil, errors.New("cut off")
	}
	return req.Next()
}

// TestShardsOnAzure runs a group on Azurite in real time: two workers
// share four shards, then one is cut off (as kill -9 would leave it): the
// service lets its liveness lease lapse, the assigner judges it expired a
// TTL later from the listings, and the other worker runs all four.
func TestShardsOnAzure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	start := func(id string, c *cut) *shard.Worker {
		o, err := azurelease.NewObjects(azurelease.Options{Container: e.container, Client: newClient(t, e.cs, c)})
		if err != nil {
			t.Fatal(err)
		}
		w, err := shard.New(shard.Config{Store: o, Group: "g", Shards: 4, Identity: id, TTL: testTTL,
			Run: func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }})
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
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(d); !ok(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within %v: %s", d, what)
			}
		}
	}
	a := start("a", &cut{})
	waitFor("a runs all four shards", 30*time.Second, func() bool { return len(a.Owned()) == 4 })
	bCut := &cut{}
	b := start("b", bCut)
	waitFor("a and b run two shards each", 45*time.Second, func() bool { return len(a.Owned()) == 2 && len(b.Owned()) == 2 })
	bCut.on.Store(true)
	// b's lease lapses a TTL after its last renewal, and the assigner
	// counts a TTL more.
	waitFor("a runs all four shards again", 4*testTTL, func() bool { return len(a.Owned()) == 4 })
	if got := b.Owned(); len(got) != 0 {
		t.Errorf("b, cut off, still runs %v", got)
	}
	cancel()
}
