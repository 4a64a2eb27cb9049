package azurelease_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestMain warms Azurite up, then raises -parallel, unless given: the
// integration tests spend nearly all their time waiting for Azure leases
// to lapse (15s each), not computing (see storetest.Main).
func TestMain(m *testing.M) {
	warmUp()
	storetest.Main(m)
}

// warmUp makes each kind of call the tests make once on Azurite, with a
// minute to answer each, before any test starts. Azurite is one Node
// process, and the first call of each kind costs it its code's loading and
// compiling (1.06 s for these six calls on a fresh Azurite beside
// stress-ng, 0.38 s warm): on CI's loaded 2-core machine, the first calls
// of the tests, then 64 at once, each with 3 s (CallTimeout), all went
// unanswered for 4 s at the package's start (GetBlobProperties, every
// conformance suite's first Observe and Acquire). A real account
// (AZURE_STORAGE_CONNECTION_STRING) needs none.
func warmUp() {
	cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING")
	if cs == "" {
		return
	}
	began := time.Now()
	if err := warmCalls(cs); err != nil {
		fmt.Fprintf(os.Stderr, "azurelease: warming Azurite up failed after %v (the tests will say more): %v\n", time.Since(began).Round(time.Millisecond), err)
		return
	}
	if took := time.Since(began); took > time.Second {
		fmt.Fprintf(os.Stderr, "azurelease: warming Azurite up took %v\n", took.Round(time.Millisecond))
	}
}

// warmCalls creates a container, runs a lease's life on a blob of it
// (Observe of no record, Acquire, Renew, Observe, Release) and deletes it.
func warmCalls(cs string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := azblob.NewClientFromConnectionString(cs, nil)
	if err != nil {
		return err
	}
	container := leasetest.UniqueName("warm-up")
	if _, err := c.CreateContainer(ctx, container, nil); err != nil {
		return err
	}
	defer func() { _, _ = c.DeleteContainer(context.WithoutCancel(ctx), container, nil) }()
	l, err := azurelease.Open(ctx, azurelease.Options{Container: container, Blob: "lease", Client: c}, lease.Options{Identity: "warm-up", TTL: time.Minute, CallTimeout: 50 * time.Second})
	if err != nil {
		return err
	}
	if _, err := l.Observe(ctx); err != nil && !errors.Is(err, lease.ErrNoRecord) {
		return err
	}
	t, err := l.Acquire(ctx)
	if err != nil {
		return err
	}
	if t, err = l.Renew(ctx, t); err != nil {
		return err
	}
	if _, err := l.Observe(ctx); err != nil {
		return err
	}
	return l.Release(ctx, t)
}
