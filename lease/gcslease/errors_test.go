package gcslease

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// testClient returns a client of the Cloud Storage at endpoint, without
// credentials.
func testClient(t *testing.T, endpoint string) *storage.Service {
	t.Helper()
	c, err := storage.NewService(t.Context(), option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// jsonError is a Cloud Storage JSON API error response body.
func jsonError(code int, reason, message string) string {
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"errors":[{"domain":"global","reason":%q,"message":%q}]}}`, code, message, reason, message)
}

var testRecord = lease.Record{Holder: "worker-1", Token: 3, TTL: 15 * time.Second, Nonce: "0123456789abcdef"}

// objectResource is the JSON API's answer to an upload of testRecord, with
// the CRC32C of its bytes, which the client checks.
var objectResource = func() string {
	crc := binary.BigEndian.AppendUint32(nil, crc32.Checksum(driver.EncodeJSON(testRecord), crc32.MakeTable(crc32.Castagnoli)))
	return fmt.Sprintf(`{"kind":"storage#object","bucket":"leases","name":"jobs","generation":"1700000000000002","metageneration":"1","contentType":"application/json","crc32c":%q}`,
		base64.StdEncoding.EncodeToString(crc))
}()

// TestClassify checks the mapping of every Cloud Storage answer the driver
// knows to the lease package's errors, call by call, and that each call is
// one request with the right condition: the client never retries.
func TestClassify(t *testing.T) {
	t.Parallel()
	record := string(driver.EncodeJSON(testRecord))
	gen := map[string]string{"X-Goog-Generation": "1700000000000001"}
	rows := []struct {
		name    string
		op      op
		status  int
		body    string
		headers map[string]string
		want    error  // nil: success
		mention string // in the message
	}{
		{"GetRecord", opGet, 200, record, gen, nil, ""},
		{"GetNoSuchObject", opGet, 404, "No such object: leases/jobs", nil, lease.ErrNoRecord, "gs://leases/jobs"},
		{"GetForbidden", opGet, 403, "<Error><Code>AccessDenied</Code></Error>", nil, lease.ErrPermission, "storage.objects.create, storage.objects.delete, storage.objects.get on gs://leases/jobs"},
		{"GetUnauthorized", opGet, 401, "", nil, lease.ErrPermission, "HTTP 401"},
		{"GetTooManyRequests", opGet, 429, "", nil, lease.ErrUnavailable, "one write per second"},
		{"GetServiceUnavailable", opGet, 503, "", nil, lease.ErrUnavailable, "gs://leases/jobs"},
		{"GetInternalError", opGet, 500, "", nil, lease.ErrUnavailable, ""},
		{"GetBadGatewayHTML", opGet, 502, "<html>bad gateway</html>", nil, lease.ErrUnavailable, ""},
		{"GetGarbage", opGet, 200, "<html>hello</html>", gen, lease.ErrCorrupt, "gs://leases/jobs"},
		{"GetOversized", opGet, 200, `{"leasehold":1,"holder":"` + strings.Repeat("x", driver.MaxRecordSize) + `"}`, gen, lease.ErrCorrupt, "4096"},
		{"GetNoGeneration", opGet, 200, record, nil, lease.ErrUnavailable, "no generation"},

		{"CreateOK", opCreate, 200, objectResource, nil, nil, ""},
		{"CreateNoGeneration", opCreate, 200, strings.Replace(objectResource, `"generation":"1700000000000002",`, "", 1), nil, lease.ErrUnavailable, "no generation"},
		{"CreatePreconditionFailed", opCreate, 412, jsonError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold."), nil, driver.ErrConflict, "generation"},
		{"CreateNoSuchBucket", opCreate, 404, jsonError(404, "notFound", "The specified bucket does not exist."), nil, lease.ErrNotFound, `bucket "leases" does not exist`},
		{"CreateForbidden", opCreate, 403, jsonError(403, "forbidden", "sa@p.iam.gserviceaccount.com does not have storage.objects.create access"), nil, lease.ErrPermission, "storage.objects.delete"},
		{"CreateTooManyRequests", opCreate, 429, jsonError(429, "rateLimitExceeded", "The object exceeded the rate limit for object mutation operations (create, update, and delete)."), nil, lease.ErrUnavailable, "one write per second"},
		{"CreateServiceUnavailable", opCreate, 503, jsonError(503, "backendError", "Backend Error"), nil, lease.ErrUnavailable, ""},

		{"ReplaceOK", opReplace, 200, objectResource, nil, nil, ""},
		{"ReplacePreconditionFailed", opReplace, 412, jsonError(412, "conditionNotMet", "Precondition failed"), nil, driver.ErrConflict, "generation"},
		{"ReplaceForbidden", opReplace, 403, jsonError(403, "forbidden", "does not have storage.objects.delete access"), nil, lease.ErrPermission, "storage.objects.delete"},
		{"ReplaceNoSuchBucket", opReplace, 404, jsonError(404, "notFound", "The specified bucket does not exist."), nil, lease.ErrNotFound, `bucket "leases"`},
		{"ReplaceInternalError", opReplace, 500, jsonError(500, "backendError", "Backend Error"), nil, lease.ErrUnavailable, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			srv := storetest.NewServer(t, storetest.Always(storetest.Answer{Status: row.status, Body: row.body, Headers: row.headers}))
			d := newConn(testClient(t, srv.URL), "leases", "jobs", time.Second)
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
				version, err = d.Replace(t.Context(), testRecord, "1700000000000001")
			}
			if row.want == nil {
				if err != nil || version == "" {
					t.Errorf("%v: (%q, %v), want a version", row.op, version, err)
				}
			} else {
				storetest.CheckError(t, fmt.Sprintf("%v answered %d", row.op, row.status), err, row.want, row.mention)
				var apiErr *googleapi.Error
				if row.status >= 400 && !errors.As(err, &apiErr) {
					t.Errorf("errors.As(err, &googleapi.Error) finds nothing in %v, want the client's error", err)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%v sent %d requests, want exactly 1 (client retries off)", row.op, len(reqs))
			}
			checkRequest(t, row.op, reqs[0])
		})
	}
}

// checkRequest checks the method, object and condition of the driver's
// request.
func checkRequest(t *testing.T, o op, r *http.Request) {
	t.Helper()
	q := r.URL.Query()
	switch o {
	case opGet:
		if r.Method != http.MethodGet || r.URL.Path != "/storage/v1/b/leases/o/jobs" || q.Get("alt") != "media" {
			t.Errorf("%v sent %s %s, want one JSON API download (GET /storage/v1/b/leases/o/jobs?alt=media)", o, r.Method, r.URL)
		}
	default:
		want := map[op]string{opCreate: "0", opReplace: "1700000000000001"}[o]
		if r.Method != http.MethodPost || r.URL.Path != "/upload/storage/v1/b/leases/o" || q.Get("name") != "jobs" || q.Get("uploadType") != "multipart" {
			t.Errorf("%v sent %s %s, want one multipart upload (POST /upload/storage/v1/b/leases/o?uploadType=multipart&name=jobs)", o, r.Method, r.URL)
		}
		if got := q.Get("ifGenerationMatch"); got != want {
			t.Errorf("%v sent ifGenerationMatch=%q, want %q", o, got, want)
		}
	}
}

// TestReplaceBadVersion: a version the driver never returned is refused
// before any request.
func TestReplaceBadVersion(t *testing.T) {
	t.Parallel()
	srv := storetest.NewServer(t, storetest.Always(storetest.Answer{Status: 200, Body: objectResource}))
	d := newConn(testClient(t, srv.URL), "leases", "jobs", time.Second)
	for _, v := range []string{"", "abc", "0", "-3", `"etag"`} {
		if _, err := d.Replace(t.Context(), testRecord, v); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("Replace on version %q: %v, want lease.ErrInvalid", v, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

// TestClassifyContextErrors: when the call's context ends, its error comes
// back unwrapped, for the engine to tell a caller's cancellation from its
// own CallTimeout.
func TestClassifyContextErrors(t *testing.T) {
	t.Parallel()
	storetest.ContextErrors(t, func(endpoint string) map[string]func(context.Context) error {
		d := newConn(testClient(t, endpoint), "leases", "jobs", time.Second)
		return map[string]func(context.Context) error{
			"Get":     func(ctx context.Context) error { _, err := d.Get(ctx); return err },
			"Create":  func(ctx context.Context) error { _, err := d.Create(ctx, testRecord); return err },
			"Replace": func(ctx context.Context) error { _, err := d.Replace(ctx, testRecord, "5"); return err },
		}
	})
}
