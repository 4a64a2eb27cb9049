package s3cas_test

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/s3cas"
)

// Timing of the backend-specific tests.
const (
	testTTL         = 2 * time.Second
	testCallTimeout = 500 * time.Millisecond
)

func testOptions(id string) lease.Options {
	return lease.Options{Identity: id, TTL: testTTL, CallTimeout: testCallTimeout}
}

func TestStoredJSON(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		key := "s3cas-" + uniqueName("stored-json")
		l := tg.open(t, c, key, testOptions("worker-1"))
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		body, etag, contentType := tg.get(t, c, key)
		t.Logf("stored at s3://%s/%s (ETag %s, %s): %s", tg.bucket, key, etag, contentType, body)
		if etag != term.Version {
			t.Errorf("object's ETag is %q, want the term's Version %q", etag, term.Version)
		}
		if contentType != "application/json" {
			t.Errorf("Content-Type is %q, want application/json", contentType)
		}
		// The documented shape, field by field, and nothing else.
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("stored bytes %q are not JSON: %v", body, err)
		}
		nonce, _ := got["nonce"].(string)
		want := map[string]any{"leasehold": 1.0, "holder": "worker-1", "token": 1.0, "ttl_ms": 2000.0, "released": false, "nonce": nonce}
		if len(nonce) != 16 || len(got) != len(want) {
			t.Errorf("stored record %s, want the fields %v with a 16-digit nonce", body, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("stored record's %q is %v, want %v (record %s)", k, got[k], v, body)
			}
		}
		if strings.ContainsRune(string(body), '\n') {
			t.Errorf("stored record %q spans lines, want one line", body)
		}
		if err := l.Release(t.Context(), term); err != nil {
			t.Fatalf("Release: %v", err)
		}
		body, _, _ = tg.get(t, c, key)
		if r, err := lease.DecodeJSON(body); err != nil || !r.Released || r.Token != term.Token {
			t.Errorf("after Release the object is %s (%+v, %v), want a released record with token %d", body, r, err, term.Token)
		}
	})
}

// TestIdenticalBytesKeepETag shows why every write carries a fresh nonce:
// S3's ETag of a single-part upload is the MD5 of its bytes, so writing
// the same bytes again keeps the ETag, and a stale writer holding it would
// still win its If-Match.
func TestIdenticalBytesKeepETag(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		key := "s3cas-" + uniqueName("same-bytes")
		body := lease.EncodeJSON(lease.Record{Holder: "worker-1", Token: 1, TTL: testTTL, Nonce: "0123456789abcdef"})
		e1, err := tg.put(t.Context(), c, key, body)
		if err != nil {
			t.Fatalf("first PutObject: %v", err)
		}
		e2, err := tg.put(t.Context(), c, key, body)
		if err != nil {
			t.Fatalf("second PutObject: %v", err)
		}
		t.Logf("%s: the same %d bytes written twice: ETags %s and %s", tg.name, len(body), e1, e2)
		if e1 != e2 {
			t.Errorf("writing the same bytes twice gave ETags %s and %s; this store's ETag is not a digest of the content (the nonce is then unneeded, but harmless)", e1, e2)
		}
		// Through the lease, every write changes the ETag.
		l := tg.open(t, c, "s3cas-"+uniqueName("nonce"), testOptions("worker-1"))
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		renewed, err := l.Renew(t.Context(), term)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if renewed.Version == term.Version {
			t.Errorf("a renewal kept the ETag %s: the nonce must change the bytes", term.Version)
		}
	})
}

func TestForeignObjectNotTakenOver(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		key := "s3cas-" + uniqueName("foreign")
		foreign := []byte("id,owner\n1,batch-job\n")
		etag, err := tg.put(t.Context(), c, key, foreign)
		if err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		l := tg.open(t, c, key, lease.Options{Identity: "worker-1", TTL: time.Second, CallTimeout: testCallTimeout})
		for i := range 2 {
			_, err := l.Acquire(t.Context())
			if !errors.Is(err, lease.ErrCorrupt) || lease.Retryable(err) {
				t.Fatalf("Acquire %d of a foreign object: %v, want lease.ErrCorrupt, not retryable", i+1, err)
			}
			if !strings.Contains(err.Error(), "s3://"+tg.bucket+"/"+key) {
				t.Errorf("error %q does not name the object s3://%s/%s", err, tg.bucket, key)
			}
			if i == 0 {
				t.Logf("error: %v", err)
				time.Sleep(1200 * time.Millisecond) // more than the TTL
			}
		}
		body, after, _ := tg.get(t, c, key)
		if string(body) != string(foreign) || after != etag {
			t.Errorf("the foreign object is now %q (ETag %s), want it untouched: %q (ETag %s)", body, after, foreign, etag)
		}
	})
}

func TestMissingBucket(t *testing.T) {
	forEachTarget(t, nil, func(t *testing.T, tg *target) {
		missing := uniqueName("leasehold-missing")
		l, err := s3cas.Open(t.Context(), s3cas.Options{Bucket: missing, Key: "leases/jobs", Client: tg.newClient(nil), UsePathStyle: tg.pathStyle}, testOptions("worker-1"))
		if err != nil {
			t.Fatalf("Open: %v, want a lease (Open sends no request)", err)
		}
		_, err = l.Acquire(t.Context())
		t.Logf("Acquire: %v", err)
		if !errors.Is(err, lease.ErrNotFound) || lease.Retryable(err) {
			t.Errorf("Acquire in a missing bucket: %v, want lease.ErrNotFound, not retryable", err)
		}
		if err != nil && !strings.Contains(err.Error(), `bucket "`+missing+`" does not exist`) {
			t.Errorf("error %q does not name the bucket %q", err, missing)
		}
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "NoSuchBucket" {
			t.Errorf("errors.As(err, &smithy.APIError) finds %v, want the SDK's NoSuchBucket", apiErr)
		}
		if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNotFound) {
			t.Errorf("Observe in a missing bucket: %v, want lease.ErrNotFound", err)
		}
	})
}

func TestWrongCredentials(t *testing.T) {
	forEachTarget(t, func(tg *target) bool { return tg.withKeys != nil }, func(t *testing.T, tg *target) {
		key := "s3cas-" + uniqueName("credentials")
		for _, row := range []struct {
			name, accessKey, secret, code string
		}{
			{"UnknownAccessKey", "leasehold-nobody", "wrong-secret", "InvalidAccessKeyId"},
			{"WrongSecret", tg.accessKey, "wrong-secret", "SignatureDoesNotMatch"},
		} {
			t.Run(row.name, func(t *testing.T) {
				l := tg.open(t, tg.withKeys(row.accessKey, row.secret), key, testOptions("worker-1"))
				_, err := l.Acquire(t.Context())
				t.Logf("Acquire: %v", err)
				if !errors.Is(err, lease.ErrPermission) || lease.Retryable(err) {
					t.Fatalf("Acquire with refused credentials: %v, want lease.ErrPermission, not retryable", err)
				}
				if want := "arn:aws:s3:::" + tg.bucket + "/" + key; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the object %s", err, want)
				}
				var apiErr smithy.APIError
				if !errors.As(err, &apiErr) || apiErr.ErrorCode() != row.code {
					t.Errorf("errors.As(err, &smithy.APIError) finds %v, want the SDK's %s", apiErr, row.code)
				}
			})
		}
	})
}

// TestUnreachableEndpoint: a closed port fails at once, a server that never
// answers within CallTimeout; both are lease.ErrUnavailable, and retryable.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	closed := closedPort(t)
	silent := silentServer(t)
	for _, row := range []struct {
		name, endpoint string
		wantAtLeast    time.Duration
	}{
		{"ClosedPort", closed, 0},
		{"NoAnswer", silent, testCallTimeout},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			c := staticClient(row.endpoint, "test", "test")(nil)
			l, err := s3cas.Open(t.Context(), s3cas.Options{Bucket: "leases", Key: "jobs", Client: c, UsePathStyle: true}, testOptions("worker-1"))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			start := time.Now()
			_, err = l.Acquire(t.Context())
			took := time.Since(start)
			t.Logf("Acquire after %v: %v", took.Round(time.Millisecond), err)
			if !errors.Is(err, lease.ErrUnavailable) || !lease.Retryable(err) {
				t.Errorf("Acquire at %s: %v, want lease.ErrUnavailable, retryable", row.endpoint, err)
			}
			// One read, bounded by CallTimeout; a margin for the race detector.
			if took < row.wantAtLeast || took > testCallTimeout+250*time.Millisecond {
				t.Errorf("Acquire at %s took %v, want between %v and CallTimeout (%v) and a margin", row.endpoint, took, row.wantAtLeast, testCallTimeout)
			}
		})
	}
}

// closedPort returns the address of a loopback port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// silentServer returns the address of a loopback server that accepts
// connections and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
