package gcslease_test

import (
	"maps"
	"net/http"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestRequestCounts counts the HTTP requests of each lease operation, by
// method (see storetest.CountRequests): a renewal is one upload (POST, a
// Class A operation), a follower's poll one read (GET, Class B). They set
// the cost of a lease (see the package doc).
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	object := s.Name("requests")
	leaderHTTP := storetest.NewCounter(nil, storetest.ByMethod)
	followerHTTP := storetest.NewCounter(nil, storetest.ByMethod)
	leader := s.Open(t, s.Client(t, leaderHTTP), object, testOptions("leader"))
	follower := s.Open(t, s.Client(t, followerHTTP), object, testOptions("follower"))
	// The store's check comes once per client and bucket, before the first
	// write (TestVerifyCost counts it): done here beforehand.
	for _, l := range []lease.Lease{leader, follower} {
		if err := l.(driver.Verifier).Verify(t.Context()); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	storetest.CountRequests(t, leader, follower, leaderHTTP, followerHTTP, http.MethodGet, http.MethodPost)
}

// TestVerifyCost counts the requests of the store's check: the first
// write of a client to a bucket comes after four uploads of the probe
// object; every later write to that bucket through that client, of any
// lease, has none.
func TestVerifyCost(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	counter := storetest.NewCounter(nil, storetest.ByMethod)
	c := s.Client(t, counter)
	for i, want := range []map[string]int{{"GET": 1, "POST": 5}, {"GET": 1, "POST": 1}} {
		l := s.Open(t, c, s.Name("verify-cost"), testOptions("worker-1"))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire of lease %d: %v", i+1, err)
		}
		got := counter.Take()
		t.Logf("Acquire of a free lease, lease %d in the bucket: %v", i+1, got)
		if !maps.Equal(got, want) {
			t.Errorf("Acquire of a free lease, lease %d in the bucket: %v, want %v", i+1, got, want)
		}
	}
}
