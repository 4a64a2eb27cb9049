package s3lease_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// deleteAfterFirstProbeWrite carries a client's requests and, once the
// first PutObject of a probe object has been applied, deletes that object
// before it answers: a lifecycle rule or a cleanup job acting between two
// steps of the store's check.
type deleteAfterFirstProbeWrite struct {
	once   sync.Once
	delete func(key string)
}

func (d *deleteAfterFirstProbeWrite) Do(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(r)
	if err == nil && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, s3lease.ProbeSuffix) && resp.StatusCode == http.StatusOK {
		d.once.Do(func() { d.delete(r.URL.Path[strings.Index(r.URL.Path[1:], "/")+2:]) })
	}
	return resp, err
}

// TestProbeObjectDeletedMidProbe: a store that enforces conditional writes
// is accepted even when its probe object is deleted between two steps of
// the check.
func TestProbeObjectDeletedMidProbe(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		direct := tg.NewClient(nil)
		hc := &deleteAfterFirstProbeWrite{delete: func(key string) {
			if _, err := direct.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: &tg.Bucket, Key: &key}); err != nil {
				t.Errorf("DeleteObject %q between the probe's steps: %v", key, err)
			}
		}}
		key := storetest.UniqueName("s3lease-probe-deleted")
		l := tg.Open(t, tg.NewClient(hc), key, testOptions("worker-1"))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire on a conforming store whose probe object was deleted mid-check: %v, want won", err)
		}
	})
}

// TestLongKey: a key too long to have a probe object beside it (S3 allows
// 1024 bytes; the probe's is 16 longer) is refused at Open, naming its
// length, rather than retried forever; the longest key allowed works.
func TestLongKey(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		long := func(n int) string {
			// MinIO allows at most 255 bytes between slashes.
			k := storetest.UniqueName("s3lease-long") + "/"
			for len(k) < n {
				k += strings.Repeat("k", min(200, n-len(k)-1)) + "/"
			}
			return k[:n-1] + "k"
		}
		_, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: tg.Bucket, Key: long(1020), Client: tg.NewClient(nil), UsePathStyle: tg.PathStyle}, testOptions("worker-1"))
		var oe *lease.OptionError
		if !errors.As(err, &oe) || oe.Field != "Key" || lease.Retryable(err) || !strings.Contains(err.Error(), "is 1020 bytes long; at most 1008") {
			t.Errorf("Open with a 1020-byte key: %v, want a lease.OptionError on Key naming its length and the limit", err)
		}
		key := long(1008)
		l := tg.Open(t, tg.NewClient(nil), key, testOptions("worker-1"))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Errorf("Acquire with a 1008-byte key (its probe object's is 1024): %v, want won", err)
		}
	})
}

// TestProbeLeavesForeignRecordAlone: the probe writes over nothing but a
// probe record (rule 9: "without ever writing over a live record to find
// out"). A live lease record at a lease's probe key (written by an older
// leasehold, which let a lease's key end with .leasehold-probe) stops the
// check of the lease beside it with an error naming the key and the
// holder, and stays as it was; no lease of this version can be opened
// there (TestProbeKeyRefused). Red team #9.
func TestProbeLeavesForeignRecordAlone(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		if tg.Name == "aws" {
			t.Skip("a bucket given by LEASEHOLD_S3_BUCKET may have its verdict kept by this process already, and then nothing is probed")
		}
		c := tg.NewClient(nil)
		key := storetest.UniqueName("s3lease-probe-foreign")
		live := driver.EncodeJSON(lease.Record{Holder: "holder", Token: 3, TTL: 10 * time.Second, Nonce: driver.NewNonce()})
		etag, err := tg.Put(t.Context(), c, key+s3lease.ProbeSuffix, live)
		if err != nil {
			t.Fatalf("PutObject of a live record at %s%s: %v", key, s3lease.ProbeSuffix, err)
		}
		l := tg.Open(t, c, key, testOptions("worker-1"))
		_, err = l.Acquire(t.Context())
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), key+s3lease.ProbeSuffix) || !strings.Contains(err.Error(), `holder "holder"`) {
			t.Errorf("Acquire beside a live lease at its probe key: %v, want lease.ErrInvalid naming the probe key and the holder", err)
		}
		if body, now, _ := tg.Get(t, c, key+s3lease.ProbeSuffix); now != etag || !bytes.Equal(body, live) {
			t.Errorf("the live record at the probe key was written over: ETag %s, want %s; body %s", now, etag, body)
		}
	})
}

// TestProbeKeyRefused: a lease's key that ends with .leasehold-probe
// names another lease's probe key, which that lease's probe writes to; it
// is refused at Open, naming the key. Red team #9.
func TestProbeKeyRefused(t *testing.T) {
	_, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: "b", Key: "jobs" + s3lease.ProbeSuffix, Client: s3emu.StaticClient("http://127.0.0.1:1", "test", "test")(nil)}, testOptions("worker-1"))
	var oe *lease.OptionError
	if !errors.As(err, &oe) || oe.Field != "Key" || !strings.Contains(err.Error(), `"jobs.leasehold-probe"`) || !strings.Contains(err.Error(), `must not end with .leasehold-probe: that names the probe key of "jobs"`) {
		t.Errorf("Open of jobs.leasehold-probe: %v, want a lease.OptionError on Key naming it", err)
	}
}
