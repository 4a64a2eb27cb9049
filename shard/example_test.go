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
