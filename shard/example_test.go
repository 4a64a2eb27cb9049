package shard_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// A worker of the group "orders", which shares 64 shards: it runs one
// consumer per shard it owns, fenced by the shard's epoch, and stops them
// all on SIGTERM, after which its shards start elsewhere within about a
// renew interval.
func ExampleWorker() {
	hostname, _ := os.Hostname()
	w, err := shard.New(shard.Config{
		Store:    memlease.Default.Objects(hostname),
		Group:    "orders",
		Shards:   64,
		Identity: hostname,
		Run: func(ctx context.Context, s shard.Shard) error {
			log.Printf("consuming partition %d with fencing token %d", s.Index, s.Epoch)
			for ctx.Err() == nil {
				// ... consume a batch, writing s.Epoch with every write downstream ...
				runner.Progress(ctx)
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

// At most 3 workers of the group "crawlers" crawl at once, each holding
// one of 3 slots (MaxPerWorker 1, what leasehold run --holders 3 runs); the
// others wait, and one of them takes a slot that its holder leaves, or
// whose holder's liveness expired.
func ExampleConfig_maxPerWorker() {
	hostname, _ := os.Hostname()
	w, err := shard.New(shard.Config{
		Store:        memlease.Default.Objects(hostname),
		Group:        "crawlers",
		Shards:       3,
		MaxPerWorker: 1,
		Identity:     hostname,
		Run: func(ctx context.Context, slot shard.Shard) error {
			log.Printf("crawling as slot %d with fencing token %d", slot.Index, slot.Epoch)
			<-ctx.Done()
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
