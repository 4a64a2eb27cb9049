package dynamolease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/dynamolease"
)

// Who leads? A lease opened by URL in a table whose partition key is
// called "id", observed without taking part. Open describes the table
// once and says what is wrong with it, if anything; credentials come from
// the default AWS chain (environment, shared files, ECS task role, EC2
// instance role).
func Example_open() {
	ctx := context.Background()
	l, err := dynamolease.OpenURL(ctx, "dynamodb://leases/jobs/nightly-report?region=eu-west-1&key_attribute=id",
		lease.Options{Identity: "observer"})
	if errors.Is(err, lease.ErrNotFound) {
		// No table "leases", or its key is not one HASH key "id" of type S:
		// the error says which, and what it found.
		log.Fatalf("the lease table needs setting up: %v", err)
	} else if err != nil {
		log.Fatal(err)
	}
	r, err := l.Observe(ctx)
	if errors.Is(err, lease.ErrNoRecord) {
		fmt.Println("nobody has led yet")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	if !r.Held() {
		fmt.Printf("%s led (token %d) and released the lease\n", r.Holder, r.Token)
		return
	}
	fmt.Printf("%s leads with fencing token %d\n", r.Holder, r.Token)
}

// A leader's loop without package runner, on a local dynalite (or
// LocalStack): acquire once, renew every TTL/3, stop acting as leader as
// soon as a renewal fails, release at the end. Package runner does the
// same, with retries within a renew deadline, health checks and a
// campaign loop.
func ExampleOpen() {
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		log.Fatal(err)
	}
	client := ddb.NewFromConfig(cfg, func(o *ddb.Options) { o.BaseEndpoint = aws.String("http://127.0.0.1:8000") })
	l, err := dynamolease.Open(ctx, dynamolease.Options{Table: "leases", Name: "jobs/nightly-report", Client: client},
		lease.Options{Identity: "worker-1", TTL: 15 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	term, err := l.Acquire(ctx)
	if err != nil {
		log.Fatal(err) // a *lease.HeldError names the leader
	}
	tick := time.NewTicker(term.TTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = l.Release(context.Background(), term) // the next contender need not wait
			return
		case <-tick.C:
		}
		if term, err = l.Renew(ctx, term); err != nil {
			log.Printf("no longer leading: %v", err) // lease.ErrLost, or the term may have lapsed
			return
		}
		fmt.Printf("leading with token %d until %v\n", term.Token, term.Expires())
	}
}
