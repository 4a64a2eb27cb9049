package s3lease_test

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// TestRequestCounts counts the HTTP requests of each lease operation, by
// method (see storetest.CountRequests): a renewal is one PUT, a follower's
// poll one GET. They set the cost of a lease (see the package doc).
func TestRequestCounts(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		key := storetest.UniqueName("s3lease-requests")
		leaderHTTP := storetest.NewCounter(nil, storetest.ByMethod)
		followerHTTP := storetest.NewCounter(nil, storetest.ByMethod)
		leader := tg.Open(t, tg.NewClient(leaderHTTP), key, testOptions("leader"))
		follower := tg.Open(t, tg.NewClient(followerHTTP), key, testOptions("follower"))
		// The store's check comes once per process and bucket, before the
		// first write (TestVerifyCost counts it): done here beforehand.
		if err := leader.(driver.Verifier).Verify(t.Context()); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		storetest.CountRequests(t, leader, follower, leaderHTTP, followerHTTP, http.MethodGet, http.MethodPut)
	})
}

// TestVerifyCost counts the requests of the store's check: the first
// write of a process to a bucket comes after four PUTs of the probe
// object (driver.Probe); every later write to that bucket, of any lease,
// has none.
func TestVerifyCost(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		for i, want := range []map[string]int{{"GET": 1, "PUT": 5}, {"GET": 1, "PUT": 1}} {
			key := storetest.UniqueName("s3lease-verify-cost")
			counter := storetest.NewCounter(nil, storetest.ByMethod)
			l := tg.Open(t, tg.NewClient(counter), key, testOptions("worker-1"))
			if _, err := l.Acquire(t.Context()); err != nil {
				t.Fatalf("Acquire of lease %d: %v", i+1, err)
			}
			got := counter.Take()
			t.Logf("Acquire of a free lease, lease %d in the bucket: %v", i+1, got)
			if !maps.Equal(got, want) {
				t.Errorf("Acquire of a free lease, lease %d in the bucket: %v, want %v", i+1, got, want)
			}
		}
	})
}

// TestThrottled: a store that answers 503 SlowDown (or 409
// ConditionalRequestConflict) gets one request per call, since the SDK's
// retries are off, and the lease reports lease.ErrUnavailable, retryable.
func TestThrottled(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		status int
		code   string
	}{
		{http.StatusServiceUnavailable, "SlowDown"},
		{http.StatusConflict, "ConditionalRequestConflict"},
	} {
		t.Run(row.code, func(t *testing.T) {
			t.Parallel()
			var gets, puts atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
				} else {
					puts.Add(1)
				}
				w.WriteHeader(row.status)
				fmt.Fprintf(w, `<Error><Code>%s</Code><Message>throttled</Message></Error>`, row.code)
			}))
			t.Cleanup(srv.Close)
			// A client configured to retry 5 times: the driver turns that off.
			c := s3emu.StaticClient(srv.URL, "test", "test")(nil)
			c = s3.New(c.Options(), func(o *s3.Options) { o.RetryMaxAttempts = 5 })
			l, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: "leases", Key: "jobs", Client: c, UsePathStyle: true}, testOptions("worker-1"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Observe(t.Context())
			awstest.CheckError(t, "Observe", err, lease.ErrUnavailable, "s3://leases/jobs", row.code)
			if g, p := gets.Load(), puts.Load(); g != 1 || p != 0 {
				t.Errorf("Observe sent %d GET and %d PUT requests, want exactly 1 GET", g, p)
			}
		})
	}
}

// TestReplaceMissingKey: If-Match on a key that holds nothing is a failed
// condition on every store (MinIO and moto answer 404 NoSuchKey, S3 412).
func TestReplaceMissingKey(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		key := "s3lease-" + storetest.UniqueName("if-match-missing")
		_, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &tg.Bucket, Key: &key, IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`), Body: nil})
		var nsk *types.NoSuchKey
		var apiErr smithy.APIError
		errors.As(err, &apiErr)
		t.Logf("%s: PutObject If-Match on a missing key: %v (NoSuchKey typed: %t)", tg.Name, err, errors.As(err, &nsk))
		if err == nil || apiErr == nil || (apiErr.ErrorCode() != "NoSuchKey" && apiErr.ErrorCode() != "PreconditionFailed") {
			t.Errorf("PutObject If-Match on a missing key: %v, want NoSuchKey or PreconditionFailed", err)
		}
	})
}
