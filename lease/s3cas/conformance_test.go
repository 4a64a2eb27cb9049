package s3cas_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/lease/s3cas"
)

// conformanceTTL keeps the suite's waits short; each target sets the
// CallTimeout its server needs under the suite's load.
const conformanceTTL = 2 * time.Second

func TestConformance(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		h := &harness{tg: tg, c: tg.newClient(nil)}
		leasetest.RunConformanceTests(t, leasetest.Config{
			NewHarness: func(*testing.T) leasetest.Harness { return h },
			TTL:        conformanceTTL,
			CAS:        true,
		})
	})
}

// harness opens leases in the target's bucket, one object per lease name.
type harness struct {
	tg *target
	c  *s3.Client
}

func (h *harness) Open(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
	h.tg.track(name)
	if opts.CallTimeout == 0 {
		opts.CallTimeout = h.tg.callTimeout
	}
	return s3cas.Open(ctx, s3cas.Options{Bucket: h.tg.bucket, Key: name, Client: h.c, UsePathStyle: h.tg.pathStyle}, opts)
}

// WriteForeign stores an object that is JSON, but not a lease record.
func (h *harness) WriteForeign(ctx context.Context, name string) error {
	_, err := h.tg.put(ctx, h.c, name, foreignObject)
	return err
}

var foreignObject = bytes.TrimSpace([]byte(`{"owner":"another-tool","locked":true}`))
