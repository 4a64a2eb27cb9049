package memlease_test

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/shardtest"
)

func TestObjects(t *testing.T) {
	ctx := context.Background()
	store := memlease.NewStore()
	o := store.Objects("w1")

	if _, _, err := o.Get(ctx, "g/a", ""); !errors.Is(err, lease.ErrNoRecord) {
		t.Fatalf("Get of a missing key: %v, want lease.ErrNoRecord", err)
	}
	v1, err := o.Put(ctx, "g/a", []byte("one"), "")
	if err != nil {
		t.Fatalf("Put creating g/a: %v", err)
	}
	if _, err := o.Put(ctx, "g/a", []byte("two"), ""); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put creating g/a again: %v, want driver.ErrConflict", err)
	}
	if _, err := o.Put(ctx, "g/b", []byte("two"), v1); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put replacing missing g/b: %v, want driver.ErrConflict", err)
	}
	v2, err := o.Put(ctx, "g/a", []byte("two"), v1)
	if err != nil || v2 == v1 {
		t.Fatalf("Put replacing g/a on its version: %q, %v; want a new version", v2, err)
	}
	if _, err := o.Put(ctx, "g/a", []byte("three"), v1); !errors.Is(err, driver.ErrConflict) {
		t.Fatalf("Put on a stale version: %v, want driver.ErrConflict", err)
	}
	data, v, err := o.Get(ctx, "g/a", "")
	if err != nil || string(data) != "two" || v != v2 {
		t.Fatalf("Get: %q %q %v, want two at %q", data, v, err, v2)
	}
	if data, v, err := o.Get(ctx, "g/a", v2); err != nil || data != nil || v != v2 {
		t.Fatalf("Get with the known version: %q %q %v, want no bytes, only the version", data, v, err)
	}
	if _, err := o.Put(ctx, "h/c", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	list, err := o.List(ctx, "g/")
	if want := map[string]string{"g/a": v2}; err != nil || !maps.Equal(list, want) {
		t.Fatalf("List g/: %v %v, want %v", list, err, want)
	}

	reads, writes := store.Calls("w1")
	if reads != 4 || writes != 6 {
		t.Fatalf("Calls: %d reads, %d writes; want 4 and 6", reads, writes)
	}
	store.Partition("w1")
	if _, err := o.List(ctx, "g/"); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("List while partitioned: %v, want lease.ErrUnavailable", err)
	}
	if _, err := store.Objects("w2").List(ctx, "g/"); err != nil {
		t.Fatalf("another identity's List while w1 is partitioned: %v", err)
	}
	store.Heal("w1")
	store.LoseResponses("w1", 1)
	if _, err := o.Put(ctx, "g/a", []byte("four"), v2); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("Put whose response is lost: %v, want lease.ErrUnavailable", err)
	}
	if data, _, _ := o.Get(ctx, "g/a", ""); string(data) != "four" {
		t.Fatalf("after a lost response the write is applied: got %q", data)
	}
}

func TestShardConformance(t *testing.T) {
	shardtest.Run(t, shardtest.Config{
		NewStore: func(t *testing.T) shardtest.Clients {
			store := memlease.NewStore()
			return func(identity string) shard.Store { return store.Objects(identity) }
		},
		FakeTime: true,
	})
}
