package s3lease_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

func TestConformance(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		storetest.RunConformance(t, tg.harness(c, c))
	})
}

// harness is the suite's harness on the target: leases opened through c,
// foreign objects written and records deleted through direct.
func (tg *target) harness(c, direct *s3.Client) *storetest.Harness {
	return &storetest.Harness{
		CallTimeout: tg.callTimeout,
		TTL:         tg.ttl,
		OpenLease: func(ctx context.Context, key string, opts lease.Options) (lease.Lease, error) {
			tg.track(key)
			return s3lease.Open(ctx, s3lease.Options{Bucket: tg.bucket, Key: key, Client: c, UsePathStyle: tg.pathStyle}, opts)
		},
		// An object that is JSON, but not a lease record.
		Foreign: func(ctx context.Context, key string) error {
			_, err := tg.put(ctx, direct, key, []byte(`{"owner":"another-tool","locked":true}`))
			return err
		},
		Remove: func(ctx context.Context, key string) error {
			_, err := direct.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &tg.bucket, Key: &key})
			return err
		},
	}
}
