package s3cas

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
)

// probeStore returns a route for a fake store's answers to Verify's three
// writes: answer gives the answer to the nth request (0, 1, 2), which the
// route also checks.
func probeStore(answer func(n int, r *http.Request) awstest.Answer) func(*http.Request) awstest.Answer {
	n := 0
	return func(r *http.Request) awstest.Answer {
		defer func() { n++ }()
		return answer(n, r)
	}
}

var (
	created      = awstest.Answer{Status: 200, Headers: map[string]string{"ETag": `"probe"`}}
	precondition = awstest.Answer{Status: 412, Body: s3Error("PreconditionFailed")}
)

// verifyingDriver returns a driver for s3://BUCKET/jobs, bucket unique to
// the test, on a fake store that answers with route.
func verifyingDriver(t *testing.T, bucket string, route func(*http.Request) awstest.Answer) (*conn, *awstest.Server) {
	t.Helper()
	srv := awstest.NewServer(t, route)
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	return &conn{client: c, bucket: awstest.UniqueName(bucket), key: "jobs", pathStyle: true, callTimeout: time.Second}, srv
}

func TestVerify(t *testing.T) {
	t.Parallel()
	enforcing := func(n int, r *http.Request) awstest.Answer {
		if n == 0 {
			return created
		}
		return precondition
	}
	for _, row := range []struct {
		name     string
		answer   func(n int, r *http.Request) awstest.Answer
		want     error // nil: passed
		mention  string
		requests int
		kept     bool // the verdict is kept: a second Verify sends nothing
	}{
		{"Enforcing", enforcing, nil, "", 3, true},
		{"EnforcingProbeExists", func(int, *http.Request) awstest.Answer { return precondition }, nil, "", 3, true},
		{"IfMatchMissingKeyIsRefusal", func(n int, r *http.Request) awstest.Answer {
			if n == 2 {
				return awstest.Answer{Status: 404, Body: s3Error("NoSuchKey")}
			}
			return enforcing(n, r)
		}, nil, "", 3, true},
		{"IgnoresEverything", func(int, *http.Request) awstest.Answer { return created }, lease.ErrUnsafeStore, "the store applied a PutObject with If-None-Match: * on an object that exists", 2, true},
		{"IgnoresIfMatch", func(n int, r *http.Request) awstest.Answer {
			if n == 2 {
				return created
			}
			return enforcing(n, r)
		}, lease.ErrUnsafeStore, "the store applied a PutObject with If-Match", 3, true},
		{"SlowDown", func(int, *http.Request) awstest.Answer {
			return awstest.Answer{Status: 503, Body: s3Error("SlowDown")}
		}, lease.ErrUnavailable, "SlowDown", 1, false},
		{"SlowDownAfterCreate", func(n int, r *http.Request) awstest.Answer {
			if n == 1 {
				return awstest.Answer{Status: 503, Body: s3Error("SlowDown")}
			}
			return enforcing(n, r)
		}, lease.ErrUnavailable, "SlowDown", 2, false},
		{"AccessDenied", func(int, *http.Request) awstest.Answer {
			return awstest.Answer{Status: 403, Body: s3Error("AccessDenied")}
		}, lease.ErrPermission, "needs [s3:PutObject] on arn:aws:s3:::", 1, false},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			d, srv := verifyingDriver(t, "verify", probeStore(row.answer))
			err := d.Verify(t.Context())
			if row.want == nil && err != nil {
				t.Fatalf("Verify: %v, want nil", err)
			}
			if row.want != nil {
				awstest.CheckError(t, "Verify", err, row.want, row.mention, "")
				if !strings.Contains(err.Error(), "s3://"+d.bucket+"/jobs.leasehold-probe") {
					t.Errorf("Verify: %q does not name the probe object", err)
				}
			}
			checkProbeRequests(t, d, srv.Requests(), row.requests)
			// Another lease on the same store, as another contender of
			// this process would open it.
			again := *d
			again.key = "other"
			err2 := again.Verify(t.Context())
			sent := len(srv.Requests()) - row.requests
			switch {
			case row.kept && (sent != 0 || !errors.Is(err2, row.want) && err2 != err):
				t.Errorf("second Verify on the same bucket: %v after %d requests, want the kept verdict (%v) and no request", err2, sent, err)
			case !row.kept && sent == 0:
				t.Errorf("second Verify after an undecided check sent nothing, want a new check")
			}
		})
	}
}

// checkProbeRequests checks that Verify sent n requests, all PutObject of
// the probe object with the documented conditions, and none to the lease's
// object.
func checkProbeRequests(t *testing.T, d *conn, reqs []*http.Request, n int) {
	t.Helper()
	if len(reqs) != n {
		t.Fatalf("Verify sent %d requests, want %d", len(reqs), n)
	}
	for i, r := range reqs {
		want := struct{ ifNoneMatch, ifMatch bool }{i < 2, i == 2}
		if r.Method != http.MethodPut || r.URL.Path != "/"+d.bucket+"/"+d.key+ProbeSuffix {
			t.Errorf("request %d: %s %s, want PUT /%s/%s%s", i+1, r.Method, r.URL.Path, d.bucket, d.key, ProbeSuffix)
		}
		if got := r.Header.Get("If-None-Match"); (got == "*") != want.ifNoneMatch || (got != "" && got != "*") {
			t.Errorf("request %d: If-None-Match %q", i+1, got)
		}
		if got := r.Header.Get("If-Match"); (got != "") != want.ifMatch {
			t.Errorf("request %d: If-Match %q", i+1, got)
		}
	}
}

// TestVerifyDirectoryBucket: a directory bucket authorises requests with
// s3express:CreateSession, not the object actions. The SDK reports a
// refused CreateSession in text only (no smithy.APIError to reach).
func TestVerifyDirectoryBucket(t *testing.T) {
	t.Parallel()
	d, _ := verifyingDriver(t, "leases", awstest.Always(awstest.Answer{Status: 403, Body: s3Error("AccessDenied")}))
	d.bucket += "--usw2-az1--x-s3"
	needs := "s3express:CreateSession (session mode ReadWrite, the default) on arn:aws:s3express:us-east-1:ACCOUNT:bucket/" + d.bucket
	awstest.CheckError(t, "Verify on a directory bucket", d.Verify(t.Context()), lease.ErrPermission, needs, "")
	_, err := d.Get(t.Context())
	awstest.CheckError(t, "Get on a directory bucket", err, lease.ErrPermission, needs, "")
}
