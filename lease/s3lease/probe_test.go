package s3lease_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
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
		direct := tg.newClient(nil)
		hc := &deleteAfterFirstProbeWrite{delete: func(key string) {
			if _, err := direct.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: &tg.bucket, Key: &key}); err != nil {
				t.Errorf("DeleteObject %q between the probe's steps: %v", key, err)
			}
		}}
		key := storetest.UniqueName("s3lease-probe-deleted")
		l := tg.open(t, tg.newClient(hc), key, testOptions("worker-1"))
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
		_, err := s3lease.Open(t.Context(), s3lease.Options{Bucket: tg.bucket, Key: long(1020), Client: tg.newClient(nil), UsePathStyle: tg.pathStyle}, testOptions("worker-1"))
		var oe *lease.OptionError
		if !errors.As(err, &oe) || oe.Field != "Key" || lease.Retryable(err) || !strings.Contains(err.Error(), "is 1020 bytes long; at most 1008") {
			t.Errorf("Open with a 1020-byte key: %v, want a lease.OptionError on Key naming its length and the limit", err)
		}
		key := long(1008)
		l := tg.open(t, tg.newClient(nil), key, testOptions("worker-1"))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Errorf("Acquire with a 1008-byte key (its probe object's is 1024): %v, want won", err)
		}
	})
}
