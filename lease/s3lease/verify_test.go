package s3lease

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// fakeObject is a fake store's probe object: it enforces If-None-Match
// and If-Match unless told to ignore them, and answers with fail (if set)
// instead.
type fakeObject struct {
	mu                   sync.Mutex
	body                 string
	etag                 int // 0: no object
	ignoreINM, ignoreIfM bool
	fail                 *storetest.Answer
}

func (o *fakeObject) route(r *http.Request) storetest.Answer {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail != nil {
		return *o.fail
	}
	etag := func() string { return `"` + strconv.Itoa(o.etag) + `"` }
	switch {
	case r.Method == http.MethodGet && o.etag == 0:
		return storetest.Answer{Status: 404, Body: s3Error("NoSuchKey")}
	case r.Method == http.MethodGet:
		return storetest.Answer{Status: 200, Body: o.body, Headers: map[string]string{"ETag": etag()}}
	case r.Header.Get("If-None-Match") == "*" && o.etag != 0 && !o.ignoreINM,
		r.Header.Get("If-Match") != "" && r.Header.Get("If-Match") != etag() && !o.ignoreIfM:
		return precondition
	}
	b, _ := io.ReadAll(r.Body)
	o.body = string(b)
	o.etag++
	return storetest.Answer{Status: 200, Headers: map[string]string{"ETag": etag()}}
}

var precondition = storetest.Answer{Status: 412, Body: s3Error("PreconditionFailed")}

// verifyingDriver returns a driver for s3://BUCKET/jobs, bucket unique to
// the test, on a fake store that answers with route.
func verifyingDriver(t *testing.T, bucket string, route func(*http.Request) storetest.Answer) (*conn, *storetest.Server) {
	t.Helper()
	srv := storetest.NewServer(t, route)
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	return &conn{client: c, bucket: storetest.UniqueName(bucket), key: "jobs", pathStyle: true, callTimeout: time.Second}, srv
}

func TestVerify(t *testing.T) {
	t.Parallel()
	existing := string(driver.EncodeJSON(lease.Record{Holder: driver.ProbeHolder, Token: 1, TTL: time.Second, Released: true, Nonce: "0123456789abcdef"}))
	for _, row := range []struct {
		name     string
		object   *fakeObject
		want     error // nil: passed
		mention  string
		requests string // the methods and conditions of the requests, in order
		kept     bool   // the verdict is kept: a second Verify sends nothing
	}{
		{"Enforcing", &fakeObject{}, nil, "", "PUT * PUT * PUT m PUT m", true},
		{"EnforcingProbeExists", &fakeObject{etag: 7, body: existing}, nil, "", "PUT * GET PUT m PUT m", true},
		{"IgnoresEverything", &fakeObject{ignoreINM: true, ignoreIfM: true}, lease.ErrUnsafeStore,
			"step 2, create-if-absent again, over the probe record that step 1 created: the store applied a PutObject with If-None-Match: * on a record that exists", "PUT * PUT * PUT * PUT *", true},
		{"IgnoresIfMatch", &fakeObject{ignoreIfM: true}, lease.ErrUnsafeStore,
			"step 4, a replace of the probe record on the version that step 3 replaced: the store applied a PutObject with If-Match on a version the record no longer has",
			"PUT * PUT * PUT m PUT m PUT * GET PUT m PUT m", true},
		{"SlowDown", &fakeObject{fail: &storetest.Answer{Status: 503, Body: s3Error("SlowDown")}}, lease.ErrUnavailable, "SlowDown", "PUT *", false},
		{"AccessDenied", &fakeObject{fail: &storetest.Answer{Status: 403, Body: s3Error("AccessDenied")}}, lease.ErrPermission,
			"needs [s3:GetObject s3:PutObject] on the probe object arn:aws:s3:::", "PUT *", false},
		{"KeyTooLong", &fakeObject{fail: &storetest.Answer{Status: 400, Body: s3Error("KeyTooLongError")}}, lease.ErrInvalid, "KeyTooLongError", "PUT *", false},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			d, srv := verifyingDriver(t, "verify", row.object.route)
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
			n := len(srv.Requests())
			err2 := again.Verify(t.Context())
			sent := len(srv.Requests()) - n
			switch {
			case row.kept && (sent != 0 || !errors.Is(err2, row.want) && err2 != err):
				t.Errorf("second Verify on the same bucket: %v after %d requests, want the kept verdict (%v) and no request", err2, sent, err)
			case !row.kept && sent == 0:
				t.Errorf("second Verify after an undecided check sent nothing, want a new check")
			}
		})
	}
}

// checkProbeRequests checks that Verify sent the requests want describes
// ("PUT *": If-None-Match: *, "PUT m": If-Match, "GET"), all to the probe
// object and none to the lease's.
func checkProbeRequests(t *testing.T, d *conn, reqs []*http.Request, want string) {
	t.Helper()
	var got []string
	for i, r := range reqs {
		if r.URL.Path != "/"+d.bucket+"/"+d.key+ProbeSuffix {
			t.Errorf("request %d: %s %s, want one to /%s/%s%s", i+1, r.Method, r.URL.Path, d.bucket, d.key, ProbeSuffix)
		}
		switch {
		case r.Header.Get("If-None-Match") == "*":
			got = append(got, r.Method+" *")
		case r.Header.Get("If-Match") != "":
			got = append(got, r.Method+" m")
		default:
			got = append(got, r.Method)
		}
	}
	if strings.Join(got, " ") != want {
		t.Errorf("Verify sent %q, want %q", strings.Join(got, " "), want)
	}
}

// TestVerifyDirectoryBucket: a directory bucket authorises requests with
// s3express:CreateSession, not the object actions. The SDK reports a
// refused CreateSession in text only (no smithy.APIError to reach).
func TestVerifyDirectoryBucket(t *testing.T) {
	t.Parallel()
	d, _ := verifyingDriver(t, "leases", storetest.Always(storetest.Answer{Status: 403, Body: s3Error("AccessDenied")}))
	d.bucket += "--usw2-az1--x-s3"
	needs := "s3express:CreateSession (session mode ReadWrite, the default) on arn:aws:s3express:us-east-1:ACCOUNT:bucket/" + d.bucket
	awstest.CheckError(t, "Verify on a directory bucket", d.Verify(t.Context()), lease.ErrPermission, needs, "")
	_, err := d.Get(t.Context())
	awstest.CheckError(t, "Get on a directory bucket", err, lease.ErrPermission, needs, "")
}
