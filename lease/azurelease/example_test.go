package azurelease_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/runner"
)

// A lease opened by URL on an Azure worker: the container, the blob, and
// the storage account, reached with the worker's managed identity (or any
// credential azidentity.NewDefaultAzureCredential finds). The identity
// needs azurelease.DataActions (blob read and write) on the container.
func Example_open() {
	ctx := context.Background()
	l, err := azurelease.OpenURL(ctx, "azblob://leases/nightly-report?account=mystorageaccount",
		lease.Options{Identity: lease.DefaultIdentity()}) // TTL 15s, CallTimeout 3s
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		Lease: l,
		Task: func(ctx context.Context) error {
			t, _ := runner.Term(ctx)
			fmt.Println("leading with fencing token", t.Token)
			<-ctx.Done() // work until leadership ends
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		log.Fatal(err) // lease.ErrNotFound, lease.ErrPermission, ... name the container and the role
	}
}

// Open with Azurite's connection string, as the tests do.
func ExampleOpen() {
	ctx := context.Background()
	l, err := azurelease.Open(ctx, azurelease.Options{
		Container:        "leases",
		Blob:             "nightly-report",
		ConnectionString: os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING"),
	}, lease.Options{Identity: "worker-1", TTL: azurelease.MinTTL})
	if err != nil {
		log.Fatal(err)
	}
	term, err := l.Acquire(ctx)
	var held *lease.HeldError
	switch {
	case errors.As(err, &held):
		fmt.Printf("%s leads (token %d); try again in %v\n", held.Record.Holder, held.Record.Token, held.Wait)
		return
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println("leading with fencing token", term.Token)
	defer l.Release(ctx, term)
}
