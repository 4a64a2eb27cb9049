package gcslease_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
)

// A lease opened by URL. Credentials are Application Default Credentials:
// the service account of Cloud Run, GKE or Compute Engine, or gcloud auth
// application-default login.
func Example_open() {
	ctx := context.Background()
	l, err := gcslease.OpenURL(ctx, "gs://my-leases/jobs/nightly-report",
		lease.Options{Identity: lease.DefaultIdentity()}) // TTL 15s (at least 3s), CallTimeout 3s
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
		log.Fatal(err) // lease.ErrNotFound, lease.ErrPermission, ... name the bucket and object
	}
	fmt.Printf("leading with fencing token %d until %v\n", term.Token, term.Expires())
	// ... renew every runner.DefaultRenewInterval(ttl) (3/8 of the TTL) with l.Renew(ctx, term), or let package runner do it ...
	_ = l.Release(ctx, term)
}

// A lease through a client you build: Cloud Storage's JSON API client,
// google.golang.org/api/storage/v1, here with Application Default
// Credentials. For fake-gcs-server, leave Client nil and set
// STORAGE_EMULATOR_HOST=127.0.0.1:4443, or build the client with
// option.WithEndpoint("http://127.0.0.1:4443/storage/v1/") and
// option.WithoutAuthentication().
func ExampleOpen() {
	ctx := context.Background()
	client, err := storage.NewService(ctx, option.WithUserAgent("my-service"))
	if err != nil {
		log.Fatal(err)
	}
	l, err := gcslease.Open(ctx, gcslease.Options{
		Bucket: "my-leases",
		Object: "jobs/nightly-report",
		Client: client,
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
