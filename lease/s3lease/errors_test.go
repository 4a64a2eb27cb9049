package s3lease

import (
	"context"
	"fmt"
	"net/http"
	"strings"
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

// s3Error is an S3 error response body.
func s3Error(code string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>canned ` + code + `</Message><RequestId>fake</RequestId></Error>`
}

// fakeDriver returns a driver for s3://leases/jobs on a fake server that
// answers every request with a, with a client whose own configuration
// would retry up to 5 times.
func fakeDriver(t *testing.T, a storetest.Answer) (*conn, *storetest.Server) {
	t.Helper()
	srv := storetest.NewServer(t, storetest.Always(a))
	c := s3.New(s3.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 5,
	})
	return &conn{client: c, bucket: "leases", key: "jobs", pathStyle: true}, srv
}

var testRecord = lease.Record{Holder: "worker-1", Token: 3, TTL: 15 * time.Second, Nonce: "0123456789abcdef"}

// TestClassify checks the mapping of every S3 answer the driver knows to the
// lease package's errors, call by call, and that each call is one request:
// the SDK's retries are off even for a client configured to retry.
func TestClassify(t *testing.T) {
	t.Parallel()
	record := string(driver.EncodeJSON(testRecord))
	rows := []struct {
		name    string
		op      op
		status  int
		body    string
		headers map[string]string
		want    error  // nil: success
		code    string // the smithy.APIError code errors.As must find
		mention string // in the message
	}{
		{"GetRecord", opGet, 200, record, map[string]string{"ETag": `"abc"`}, nil, "", ""},
		{"GetNoSuchKey", opGet, 404, s3Error("NoSuchKey"), nil, lease.ErrNoRecord, "NoSuchKey", "s3://leases/jobs"},
		{"GetNoSuchBucket", opGet, 404, s3Error("NoSuchBucket"), nil, lease.ErrNotFound, "NoSuchBucket", `bucket "leases" does not exist`},
		{"GetAccessDenied", opGet, 403, s3Error("AccessDenied"), nil, lease.ErrPermission, "AccessDenied", "arn:aws:s3:::leases/jobs"},
		{"GetInvalidAccessKeyId", opGet, 403, s3Error("InvalidAccessKeyId"), nil, lease.ErrPermission, "InvalidAccessKeyId", "s3:ListBucket"},
		{"GetSignatureDoesNotMatch", opGet, 403, s3Error("SignatureDoesNotMatch"), nil, lease.ErrPermission, "SignatureDoesNotMatch", "s3:GetObject"},
		{"GetForbiddenNoBody", opGet, 403, "", nil, lease.ErrPermission, "Forbidden", "refused (Forbidden)"},
		{"GetRequestTimeTooSkewed", opGet, 403, s3Error("RequestTimeTooSkewed"), nil, lease.ErrUnavailable, "RequestTimeTooSkewed", "clock"},
		{"GetSlowDown", opGet, 503, s3Error("SlowDown"), nil, lease.ErrUnavailable, "SlowDown", "s3://leases/jobs"},
		{"GetInternalError", opGet, 500, s3Error("InternalError"), nil, lease.ErrUnavailable, "InternalError", ""},
		{"GetBadGatewayHTML", opGet, 502, "<html>bad gateway</html>", nil, lease.ErrUnavailable, "", ""},
		{"GetGatewayTimeout", opGet, 504, "", nil, lease.ErrUnavailable, "", ""},
		{"GetUnknownCode", opGet, 400, s3Error("SomethingNew"), nil, lease.ErrUnavailable, "SomethingNew", ""},
		{"GetNotImplemented", opGet, 501, s3Error("NotImplemented"), nil, lease.ErrNotFound, "NotImplemented", "conditional writes"},
		{"GetGarbage", opGet, 200, "<html>hello</html>", map[string]string{"ETag": `"abc"`}, lease.ErrCorrupt, "", "s3://leases/jobs"},
		{"GetOversized", opGet, 200, `{"leasehold":1,"holder":"` + strings.Repeat("x", driver.MaxRecordSize) + `"}`, map[string]string{"ETag": `"abc"`}, lease.ErrCorrupt, "", "4096"},
		{"GetNoETag", opGet, 200, record, nil, lease.ErrUnavailable, "", "no ETag"},

		{"CreateOK", opCreate, 200, "", map[string]string{"ETag": `"new"`}, nil, "", ""},
		{"CreateNoETag", opCreate, 200, "", nil, lease.ErrUnavailable, "", "no ETag"},
		{"CreatePreconditionFailed", opCreate, 412, s3Error("PreconditionFailed"), nil, driver.ErrConflict, "PreconditionFailed", ""},
		{"CreateConditionalRequestConflict", opCreate, 409, s3Error("ConditionalRequestConflict"), nil, lease.ErrUnavailable, "ConditionalRequestConflict", ""},
		{"CreateNoSuchBucket", opCreate, 404, s3Error("NoSuchBucket"), nil, lease.ErrNotFound, "NoSuchBucket", `bucket "leases"`},
		{"CreateSlowDown", opCreate, 503, s3Error("SlowDown"), nil, lease.ErrUnavailable, "SlowDown", ""},
		{"CreateNotImplemented", opCreate, 501, s3Error("NotImplemented"), nil, lease.ErrNotFound, "NotImplemented", "If-None-Match"},

		{"ReplaceOK", opReplace, 200, "", map[string]string{"ETag": `"new"`}, nil, "", ""},
		{"ReplacePreconditionFailed", opReplace, 412, s3Error("PreconditionFailed"), nil, driver.ErrConflict, "PreconditionFailed", ""},
		{"ReplaceNoSuchKey", opReplace, 404, s3Error("NoSuchKey"), nil, driver.ErrConflict, "NoSuchKey", "no longer exists"},
		{"ReplaceConditionalRequestConflict", opReplace, 409, s3Error("ConditionalRequestConflict"), nil, lease.ErrUnavailable, "ConditionalRequestConflict", ""},
		{"ReplaceAccessDenied", opReplace, 403, s3Error("AccessDenied"), nil, lease.ErrPermission, "AccessDenied", "s3:PutObject"},
		{"ReplaceInternalError", opReplace, 500, s3Error("InternalError"), nil, lease.ErrUnavailable, "InternalError", ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			d, f := fakeDriver(t, storetest.Answer{Status: row.status, Body: row.body, Headers: row.headers})
			var err error
			var version string
			switch row.op {
			case opGet:
				var r lease.Record
				r, err = d.Get(t.Context())
				version = r.Version
			case opCreate:
				version, err = d.Create(t.Context(), testRecord)
			case opReplace:
				version, err = d.Replace(t.Context(), testRecord, `"old"`)
			}
			if row.want == nil {
				if err != nil || version == "" {
					t.Errorf("%v: (%q, %v), want a version", row.op, version, err)
				}
			} else {
				awstest.CheckError(t, fmt.Sprintf("%v answered %d", row.op, row.status), err, row.want, row.mention, row.code)
			}
			reqs := f.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%v sent %d requests, want exactly 1 (SDK retries off)", row.op, len(reqs))
			}
			checkRequest(t, row.op, reqs[0])
		})
	}
}

// checkRequest checks the method, path and conditions of the driver's
// request.
func checkRequest(t *testing.T, o op, r *http.Request) {
	t.Helper()
	want := map[op]struct{ method, ifNoneMatch, ifMatch string }{
		opGet:     {http.MethodGet, "", ""},
		opCreate:  {http.MethodPut, "*", ""},
		opReplace: {http.MethodPut, "", `"old"`},
	}[o]
	if r.Method != want.method || r.URL.Path != "/leases/jobs" {
		t.Errorf("%v sent %s %s, want %s /leases/jobs", o, r.Method, r.URL.Path, want.method)
	}
	if got := r.Header.Get("If-None-Match"); got != want.ifNoneMatch {
		t.Errorf("%v sent If-None-Match %q, want %q", o, got, want.ifNoneMatch)
	}
	if got := r.Header.Get("If-Match"); got != want.ifMatch {
		t.Errorf("%v sent If-Match %q, want %q", o, got, want.ifMatch)
	}
	if got := r.Header.Get("Content-Type"); o != opGet && got != "application/json" {
		t.Errorf("%v sent Content-Type %q, want application/json", o, got)
	}
}

// TestClassifyContextErrors: when the call's context ends, its error comes
// back unwrapped, for the engine to tell a caller's cancellation from its
// own CallTimeout.
func TestClassifyContextErrors(t *testing.T) {
	t.Parallel()
	storetest.ContextErrors(t, func(endpoint string) map[string]func(context.Context) error {
		c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		d := &conn{client: c, bucket: "leases", key: "jobs", pathStyle: true}
		return map[string]func(context.Context) error{
			"Get":    func(ctx context.Context) error { _, err := d.Get(ctx); return err },
			"Create": func(ctx context.Context) error { _, err := d.Create(ctx, testRecord); return err },
		}
	})
}
