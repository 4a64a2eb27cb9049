package s3lease_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// A lease opened by URL: the bucket, the key, and the client's settings in
// gocloud.dev's query parameters. Credentials come from the default AWS
// chain (environment, shared files, ECS task role, EC2 instance role).
func Example_open() {
	ctx := context.Background()
	l, err := s3lease.OpenURL(ctx, "s3://my-leases/jobs/nightly-report?region=eu-west-1",
		lease.Options{Identity: lease.DefaultIdentity()}) // TTL 15s, CallTimeout 3s
	if err != nil {
		log.Fatal(err)
	}
	term, err := l.Acquire(ctx)
	var held *lease.HeldError
	switch {
	case errors.As(err, &held):
		fmt.Printf("%s leads; try again in %v\n", held.Record.Holder, held.Wait)
		return
	case err != nil:
		log.Fatal(err) // lease.ErrNotFound, lease.ErrPermission, ... name the bucket and key
	}
	fmt.Printf("leading with fencing token %d until %v\n", term.Token, term.Expires())
	// ... renew every runner.DefaultRenewInterval(ttl) (3/8 of the TTL) with l.Renew(ctx, term), or let package runner do it ...
	_ = l.Release(ctx, term)
}

// A lease on a local MinIO (or LocalStack) with a client you configure.
func ExampleOpen() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"))
	if err != nil {
		log.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String("http://127.0.0.1:9000")
	})
	l, err := s3lease.Open(ctx, s3lease.Options{
		Bucket:       "my-leases",
		Key:          "jobs/nightly-report",
		Client:       client,
		UsePathStyle: true,
	}, lease.Options{Identity: "worker-1"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := l.Observe(ctx)
	switch {
	case errors.Is(err, lease.ErrNoRecord):
		fmt.Println("never acquired")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("held by %s (token %d, released %t)\n", r.Holder, r.Token, r.Released)
	}
}
