package quorumlease_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/lease/quorumlease"
)

const ttl = 2 * time.Second

// memQuorum is a quorum of three memlease stores.
type memQuorum struct{ stores []*memlease.Store }

func newMemQuorum(n int) memQuorum {
	q := memQuorum{}
	for range n {
		q.stores = append(q.stores, memlease.NewStore())
	}
	return q
}

func (h memQuorum) Open(_ context.Context, name string, opts lease.Options) (lease.Lease, error) {
	members := make([]lease.Lease, len(h.stores))
	for i, s := range h.stores {
		l, err := s.Open(name, opts)
		if err != nil {
			return nil, err
		}
		members[i] = l
	}
	return quorumlease.New(members, nil)
}

func (h memQuorum) WriteForeign(_ context.Context, name string) error {
	for _, s := range h.stores {
		s.Put(name, []byte("not a lease"))
	}
	return nil
}

func (h memQuorum) Delete(_ context.Context, name string) error {
	for _, s := range h.stores {
		s.Delete(name)
	}
	return nil
}

func TestConformance(t *testing.T) {
	leasetest.RunConformanceTests(t, leasetest.Config{
		NewHarness: func(*testing.T) leasetest.Harness { return newMemQuorum(3) },
		TTL:        ttl,
		FakeTime:   true,
	})
}
