package azurelease_test

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestConformance runs the conformance suite in real time with Azure's
// shortest lease, 15s, so expiry is Azure's own: TakeoverOnlyAfterTTL waits
// for a 15s lease to lapse on the server. The subtests run in parallel;
// the longest waits about three TTLs.
func TestConformance(t *testing.T) {
	t.Parallel()
	cs := connectionString(t)
	c := newClient(t, cs)
	h := &harness{c: c, container: newContainer(t, c)}
	leasetest.RunConformanceTests(t, leasetest.Config{
		NewHarness: func(*testing.T) leasetest.Harness { return h },
		TTL:        testTTL,
	})
}

// harness opens leases in the test's container, one blob per lease name.
type harness struct {
	c         *azblob.Client
	container string
}

func (h *harness) Open(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
	return azurelease.Open(ctx, azurelease.Options{Container: h.container, Blob: name, Client: h.c}, opts)
}

// WriteForeign stores what another tool would: a blob with content and
// metadata of its own.
func (h *harness) WriteForeign(ctx context.Context, name string) error {
	owner, locked := "another-tool", "true"
	_, err := h.c.UploadBuffer(ctx, h.container, name, []byte(`{"owner":"another-tool","locked":true}`),
		&azblob.UploadBufferOptions{Metadata: map[string]*string{"owner": &owner, "locked": &locked}})
	return err
}

// Delete deletes the lease's blob as a person would: breaking, at once, an
// Azure lease that holds it first, since Azure refuses to delete a leased
// blob.
func (h *harness) Delete(ctx context.Context, name string) error {
	b := h.c.ServiceClient().NewContainerClient(h.container).NewBlobClient(name)
	lc, err := azlease.NewBlobClient(b, nil)
	if err != nil {
		return err
	}
	if _, err := lc.BreakLease(ctx, &azlease.BlobBreakOptions{BreakPeriod: new(int32)}); err != nil && !bloberror.HasCode(err, bloberror.LeaseNotPresentWithLeaseOperation) {
		return err
	}
	_, err = b.Delete(ctx, nil)
	return err
}
