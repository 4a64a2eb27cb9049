package memlease_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// These benchmarks measure the engine's own cost per operation, on a store
// with no latency: a read, an encode/decode and a conditional write.

func BenchmarkAcquireFree(b *testing.B) {
	store := memlease.NewStore()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		l, err := store.Open("bench-"+strconv.Itoa(i), lease.Options{Identity: "a"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Acquire(ctx); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkRenew(b *testing.B) {
	l, err := memlease.NewStore().Open("bench", lease.Options{Identity: "a"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t, err := l.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if t, err = l.Renew(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFollowerPoll(b *testing.B) {
	store := memlease.NewStore()
	ctx := context.Background()
	holder, _ := store.Open("bench", lease.Options{Identity: "a"})
	if _, err := holder.Acquire(ctx); err != nil {
		b.Fatal(err)
	}
	follower, _ := store.Open("bench", lease.Options{Identity: "b"})
	for b.Loop() {
		if _, err := follower.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			b.Fatalf("follower's poll: %v, want ErrHeld", err)
		}
	}
}

func BenchmarkAcquireRelease(b *testing.B) {
	l, _ := memlease.NewStore().Open("bench", lease.Options{Identity: "a"})
	ctx := context.Background()
	for b.Loop() {
		t, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
}
