package s3lease_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
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
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		key := "s3lease-" + storetest.UniqueName("stored-json")
		l := tg.Open(t, c, key, testOptions("worker-1"))
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		body, etag, contentType := tg.Get(t, c, key)
		t.Logf("stored at s3://%s/%s (ETag %s, %s): %s", tg.Bucket, key, etag, contentType, body)
		if etag != term.Version {
			t.Errorf("object's ETag is %q, want the term's Version %q", etag, term.Version)
		}
		storetest.CheckStoredJSON(t, body, contentType, "worker-1", testTTL)
		if err := l.Release(t.Context(), term); err != nil {
			t.Fatalf("Release: %v", err)
		}
		body, _, _ = tg.Get(t, c, key)
		if r, err := driver.DecodeJSON(body); err != nil || !r.Released || r.Token != term.Token {
			t.Errorf("after Release the object is %s (%+v, %v), want a released record with token %d", body, r, err, term.Token)
		}
	})
}

// TestIdenticalBytesKeepETag shows why every write carries a fresh nonce:
// S3's ETag of a single-part upload is the MD5 of its bytes, so writing
// the same bytes again keeps the ETag, and a stale writer holding it would
// still win its If-Match.
func TestIdenticalBytesKeepETag(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		key := "s3lease-" + storetest.UniqueName("same-bytes")
		body := driver.EncodeJSON(lease.Record{Holder: "worker-1", Token: 1, TTL: testTTL, Nonce: "0123456789abcdef"})
		e1, err := tg.Put(t.Context(), c, key, body)
		if err != nil {
			t.Fatalf("first PutObject: %v", err)
		}
		e2, err := tg.Put(t.Context(), c, key, body)
		if err != nil {
			t.Fatalf("second PutObject: %v", err)
		}
		t.Logf("%s: the same %d bytes written twice: ETags %s and %s", tg.Name, len(body), e1, e2)
		if e1 != e2 {
			t.Errorf("writing the same bytes twice gave ETags %s and %s; this store's ETag is not a digest of the content (the nonce is then unneeded, but harmless)", e1, e2)
		}
		// Through the lease, every write changes the ETag.
		l := tg.Open(t, c, "s3lease-"+storetest.UniqueName("nonce"), testOptions("worker-1"))
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
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		key := "s3lease-" + storetest.UniqueName("foreign")
		foreign := []byte("id,owner\n1,batch-job\n")
		etag, err := tg.Put(t.Context(), c, key, foreign)
		if err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		l := tg.Open(t, c, key, lease.Options{Identity: "worker-1", TTL: time.Second, CallTimeout: testCallTimeout})
		for i := range 2 {
			_, err := l.Acquire(t.Context())
			if !errors.Is(err, lease.ErrCorrupt) || lease.Retryable(err) {
				t.Fatalf("Acquire %d of a foreign object: %v, want lease.ErrCorrupt, not retryable", i+1, err)
			}
			if !strings.Contains(err.Error(), "s3://"+tg.Bucket+"/"+key) {
				t.Errorf("error %q does not name the object s3://%s/%s", err, tg.Bucket, key)
			}
			if i == 0 {
				t.Logf("error: %v", err)
				time.Sleep(1200 * time.Millisecond) // more than the TTL
			}
		}
		body, after, _ := tg.Get(t, c, key)
		if string(body) != string(foreign) || after != etag {
			t.Errorf("the foreign object is now %q (ETag %s), want it untouched: %q (ETag %s)", body, after, foreign, etag)
		}
	})
}

func TestMissingBucket(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		missing := storetest.UniqueName("leasehold-missing")
		l, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: missing, Key: "leases/jobs", Client: tg.NewClient(nil), UsePathStyle: tg.PathStyle}, testOptions("worker-1"))
		if err != nil {
			t.Fatalf("Open: %v, want a lease (Open sends no request)", err)
		}
		_, err = l.Acquire(t.Context())
		awstest.CheckError(t, "Acquire in a missing bucket", err, lease.ErrNotFound, `bucket "`+missing+`" does not exist`, "NoSuchBucket")
		if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNotFound) {
			t.Errorf("Observe in a missing bucket: %v, want lease.ErrNotFound", err)
		}
	})
}

func TestWrongCredentials(t *testing.T) {
	// Only MinIO checks keys here: moto accepts any, a real account has no
	// static keys to spoil.
	targets.Run(t, func(name string) bool { return name == "minio" }, func(t *testing.T, tg *target) {
		key := "s3lease-" + storetest.UniqueName("credentials")
		for _, row := range []struct {
			name, accessKey, secret, code string
		}{
			{"UnknownAccessKey", "leasehold-nobody", "wrong-secret", "InvalidAccessKeyId"},
			{"WrongSecret", tg.AccessKey, "wrong-secret", "SignatureDoesNotMatch"},
		} {
			t.Run(row.name, func(t *testing.T) {
				l := tg.Open(t, tg.WithKeys(row.accessKey, row.secret), key, testOptions("worker-1"))
				_, err := l.Acquire(t.Context())
				awstest.CheckError(t, "Acquire with refused credentials", err, lease.ErrPermission, "arn:aws:s3:::"+tg.Bucket+"/"+key, row.code)
			})
		}
	})
}

// TestUnreachableEndpoint: a closed port fails at once, a server that never
// answers within CallTimeout; both are lease.ErrUnavailable, and retryable.
// Acquire makes one read, bounded by CallTimeout.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	storetest.Unreachable(t, testCallTimeout, func(t *testing.T, ctx context.Context, endpoint string) error {
		c := s3emu.StaticClient(endpoint, "test", "test")(nil)
		l, err := s3lease.Open(ctx, s3lease.Options{Bucket: "leases", Key: "jobs", Client: c, UsePathStyle: true}, testOptions("worker-1"))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err = l.Acquire(ctx)
		return err
	})
}
