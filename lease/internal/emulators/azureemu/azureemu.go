// Package azureemu opens the Azure Blob service that azurelease's
// integration tests and the quorum's mixed conformance suites run on:
// Azurite from the local test stack, or a real account (see package
// emulators). Import it from _test.go files only.
package azureemu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// Store is the Azure Blob service under test, with a container for one
// test: Azurite from the local test stack (scripts/stack up azurite; eval
// "$(scripts/stack env)" sets LEASEHOLD_AZURITE_CONNECTION_STRING), or a
// real account whose connection string is in
// AZURE_STORAGE_CONNECTION_STRING.
type Store struct {
	// ConnectionString is the account's, from the variable that named it.
	ConnectionString string
	// Client is a client of the account, without SDK retries.
	Client *azblob.Client
	// Container is the test's own, deleted when it ends.
	Container string
}

// New connects to the account, or skips the test naming the variables
// to set, and creates a container for the test.
func New(t *testing.T) *Store {
	t.Helper()
	cs := ConnectionString(t)
	c := NewClient(t, cs)
	return &Store{ConnectionString: cs, Client: c, Container: NewContainer(t, c)}
}

// ConnectionString returns the account's connection string, or skips
// the test, naming the variables to set.
func ConnectionString(t *testing.T) string {
	t.Helper()
	if cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING"); cs != "" {
		return cs
	}
	if cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		return cs
	}
	t.Skip(`no Azure Blob service configured: set LEASEHOLD_AZURITE_CONNECTION_STRING (scripts/stack up azurite; eval "$(scripts/stack env)"), or AZURE_STORAGE_CONNECTION_STRING for a real account`)
	return ""
}

// NewClient returns a client of the account cs connects to, without SDK
// retries; each policy, if any, sees every HTTP request.
func NewClient(t *testing.T, cs string, perRequest ...policy.Policy) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString(cs, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{
		Retry:            policy.RetryOptions{MaxRetries: -1},
		PerRetryPolicies: perRequest,
	}})
	if err != nil {
		t.Fatalf("azblob.NewClientFromConnectionString: %v", err)
	}
	return c
}

// NewContainer creates a container of its own for the test, named after
// it, deleted when the test ends.
func NewContainer(t *testing.T, c *azblob.Client) string {
	t.Helper()
	name := leasetest.UniqueName(strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-"))
	if len(name) > 63 {
		name = name[:54] + name[len(name)-9:]
	}
	name = strings.ReplaceAll(name, "--", "-")
	if _, err := c.CreateContainer(t.Context(), name, nil); err != nil {
		t.Fatalf("CreateContainer(%q): %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeleteContainer(ctx, name, nil); err != nil {
			t.Logf("DeleteContainer(%q): %v", name, err)
		}
	})
	return name
}

// Conformance is the conformance suite's harness on the container, through
// the account's client.
func (a *Store) Conformance() *storetest.Harness { return a.Harness(a.Client, a.Client) }

// Harness is the conformance suite's harness on the container, one blob
// per lease, at Azure's shortest lease (15s), so that expiry is Azure's
// own, and the CallTimeout that is the default at that TTL (3s): leases
// opened through c, foreign blobs written and blobs deleted through
// direct.
func (a *Store) Harness(c, direct *azblob.Client) *storetest.Harness {
	return &storetest.Harness{
		TTL:         azurelease.MinTTL,
		CallTimeout: azurelease.MinTTL / 5,
		OpenLease: func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
			return azurelease.Open(ctx, azurelease.Options{Container: a.Container, Blob: name, Client: c}, opts)
		},
		// What another tool would store: a blob with content and metadata
		// of its own.
		Foreign: func(ctx context.Context, name string) error {
			owner, locked := "another-tool", "true"
			_, err := direct.UploadBuffer(ctx, a.Container, name, []byte(`{"owner":"another-tool","locked":true}`),
				&azblob.UploadBufferOptions{Metadata: map[string]*string{"owner": &owner, "locked": &locked}})
			return err
		},
		// As a person would: breaking, at once, an Azure lease that holds
		// the blob first, since Azure refuses to delete a leased blob.
		Remove: func(ctx context.Context, name string) error {
			b := direct.ServiceClient().NewContainerClient(a.Container).NewBlobClient(name)
			lc, err := azlease.NewBlobClient(b, nil)
			if err != nil {
				return err
			}
			if _, err := lc.BreakLease(ctx, &azlease.BlobBreakOptions{BreakPeriod: new(int32)}); err != nil && !bloberror.HasCode(err, bloberror.LeaseNotPresentWithLeaseOperation) {
				return err
			}
			_, err = b.Delete(ctx, nil)
			return err
		},
	}
}

// WarmUp makes each kind of call the tests make once on Azurite
// (LEASEHOLD_AZURITE_CONNECTION_STRING), with a minute to answer each:
// call it from TestMain, before any test starts. Azurite is one Node
// process, and the first call of each kind costs it its code's loading and
// compiling (1.06 s for these six calls on a fresh Azurite beside
// stress-ng, 0.38 s warm): on CI's loaded 2-core machine, the first calls
// of the tests, then 64 at once, each with 3 s (CallTimeout), all went
// unanswered for 4 s at the package's start (GetBlobProperties, every
// conformance suite's first Observe and Acquire). A real account
// (AZURE_STORAGE_CONNECTION_STRING) needs none.
func WarmUp() {
	cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING")
	if cs == "" {
		return
	}
	began := time.Now()
	if err := warmCalls(cs); err != nil {
		fmt.Fprintf(os.Stderr, "warming Azurite up failed after %v (the tests will say more): %v\n", time.Since(began).Round(time.Millisecond), err)
		return
	}
	if took := time.Since(began); took > time.Second {
		fmt.Fprintf(os.Stderr, "warming Azurite up took %v\n", took.Round(time.Millisecond))
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
