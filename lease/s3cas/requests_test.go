package s3cas_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/s3cas"
)

// TestRequestCounts counts the HTTP requests of each lease operation, by
// method. They set the cost of a lease (see the package doc): a renewal is
// one PUT, a follower's poll of a held lease one GET. Acquiring a free
// lease is one PUT after the engine's read, which finds no object.
func TestRequestCounts(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		key := "s3cas-" + uniqueName("requests")
		leaderHTTP, followerHTTP := newCounter(nil), newCounter(nil)
		leader := tg.open(t, tg.newClient(leaderHTTP), key, testOptions("leader"))
		follower := tg.open(t, tg.newClient(followerHTTP), key, testOptions("follower"))

		type want struct{ gets, puts int }
		check := func(step string, c *counter, w want) {
			t.Helper()
			gets, puts, others := c.take()
			t.Logf("%-40s GET %d  PUT %d", step, gets, puts)
			if gets != w.gets || puts != w.puts || others != 0 {
				t.Errorf("%s: GET %d, PUT %d, other %d requests; want GET %d, PUT %d, no other", step, gets, puts, others, w.gets, w.puts)
			}
		}
		ctx := t.Context()

		term, err := leader.Acquire(ctx)
		if err != nil {
			t.Fatalf("leader's Acquire: %v", err)
		}
		check("Acquire of a free lease", leaderHTTP, want{gets: 1, puts: 1})

		for i := range 3 {
			if term, err = leader.Renew(ctx, term); err != nil {
				t.Fatalf("Renew %d: %v", i+1, err)
			}
			check(fmt.Sprintf("Renew %d", i+1), leaderHTTP, want{gets: 0, puts: 1})
		}

		for i := range 3 {
			if _, err := follower.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
				t.Fatalf("follower's Acquire %d: %v, want lease.ErrHeld", i+1, err)
			}
			check(fmt.Sprintf("follower's poll (Acquire, held) %d", i+1), followerHTTP, want{gets: 1, puts: 0})
		}
		if _, err := follower.Observe(ctx); err != nil {
			t.Fatalf("Observe: %v", err)
		}
		check("Observe", followerHTTP, want{gets: 1, puts: 0})

		if err := leader.Release(ctx, term); err != nil {
			t.Fatalf("Release: %v", err)
		}
		check("Release", leaderHTTP, want{gets: 0, puts: 1})

		if _, err := follower.Acquire(ctx); err != nil {
			t.Fatalf("follower's Acquire of the released lease: %v", err)
		}
		check("Acquire of a released lease", followerHTTP, want{gets: 1, puts: 1})

		// A deposed holder's renewal: the failed If-Match, then the read that
		// tells a lost term from an unknown outcome.
		if _, err := leader.Renew(ctx, term); !errors.Is(err, lease.ErrLost) {
			t.Fatalf("deposed leader's Renew: %v, want lease.ErrLost", err)
		}
		check("Renew after being deposed", leaderHTTP, want{gets: 1, puts: 1})
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
			c := staticClient(srv.URL, "test", "test")(nil)
			c = s3.New(c.Options(), func(o *s3.Options) { o.RetryMaxAttempts = 5 })
			l, err := s3cas.Open(t.Context(), s3cas.Options{Bucket: "leases", Key: "jobs", Client: c, UsePathStyle: true}, testOptions("worker-1"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.Observe(t.Context())
			t.Logf("Observe: %v", err)
			if !errors.Is(err, lease.ErrUnavailable) || !lease.Retryable(err) {
				t.Errorf("Observe of a store answering %d %s: %v, want lease.ErrUnavailable, retryable", row.status, row.code, err)
			}
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.code {
				t.Errorf("errors.As(err, &smithy.APIError) finds %v, want code %s", apiErr, row.code)
			}
			if g, p := gets.Load(), puts.Load(); g != 1 || p != 0 {
				t.Errorf("Observe sent %d GET and %d PUT requests, want exactly 1 GET", g, p)
			}
		})
	}
}

// TestReplaceMissingKey: If-Match on a key that holds nothing is a failed
// condition on every store (MinIO and moto answer 404 NoSuchKey, S3 412).
func TestReplaceMissingKey(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		key := "s3cas-" + uniqueName("if-match-missing")
		_, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &tg.bucket, Key: &key, IfMatch: aws.String(`"0123456789abcdef0123456789abcdef"`), Body: nil})
		var nsk *types.NoSuchKey
		var apiErr smithy.APIError
		errors.As(err, &apiErr)
		t.Logf("%s: PutObject If-Match on a missing key: %v (NoSuchKey typed: %t)", tg.name, err, errors.As(err, &nsk))
		if err == nil || apiErr == nil || (apiErr.ErrorCode() != "NoSuchKey" && apiErr.ErrorCode() != "PreconditionFailed") {
			t.Errorf("PutObject If-Match on a missing key: %v, want NoSuchKey or PreconditionFailed", err)
		}
	})
}
