package gcslease_test

import (
	"context"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

func TestConformance(t *testing.T) {
	s := newStore(t)
	c := s.client(t, nil)
	storetest.RunConformance(t, &storetest.Harness{
		TTL:         gcslease.MinTTL,
		CallTimeout: testCallTimeout,
		OpenLease: func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
			s.track(name)
			return gcslease.Open(ctx, gcslease.Options{Bucket: s.bucket, Object: name, Client: c}, opts)
		},
		// An object that is JSON, but not a lease record.
		Foreign: func(ctx context.Context, name string) error {
			_, err := s.put(ctx, c, name, []byte(`{"owner":"another-tool","locked":true}`))
			return err
		},
		Remove: func(ctx context.Context, name string) error {
			return c.Bucket(s.bucket).Object(name).Delete(ctx)
		},
	})
}
