package gcscas_test

import (
	"net/http"
	"testing"

	"github.com/leasehold/leasehold/lease/internal/awstest"
)

// TestRequestCounts counts the HTTP requests of each lease operation, by
// method (see awstest.CountRequests): a renewal is one upload (POST, a
// Class A operation), a follower's poll one read (GET, Class B). They set
// the cost of a lease (see the package doc).
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	object := s.name("requests")
	leaderHTTP := awstest.NewCounter(nil, awstest.ByMethod)
	followerHTTP := awstest.NewCounter(nil, awstest.ByMethod)
	leader := s.open(t, s.client(t, leaderHTTP), object, testOptions("leader"))
	follower := s.open(t, s.client(t, followerHTTP), object, testOptions("follower"))
	awstest.CountRequests(t, leader, follower, leaderHTTP, followerHTTP, http.MethodGet, http.MethodPost)
}
