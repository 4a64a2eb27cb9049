package gcslease_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// Timing of the backend-specific tests: the shortest TTL gcslease accepts.
const (
	testTTL         = gcslease.MinTTL
	testCallTimeout = time.Second
)

func testOptions(id string) lease.Options {
	return lease.Options{Identity: id, TTL: testTTL, CallTimeout: testCallTimeout}
}

func TestMain(m *testing.M) { storetest.Main(m) }

// store is the Cloud Storage under test: fake-gcs-server from the local
// test stack (scripts/stack up gcs; eval "$(scripts/stack env)" sets
// STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET), or, with only
// LEASEHOLD_GCS_BUCKET set, that bucket in a real project, reached with
// Application Default Credentials.
type store struct {
	bucket string
	mu     sync.Mutex
	names  []string // the objects this test wrote
}

// newStore returns the store for a test, or skips it naming the variables
// to set, and deletes what the test wrote when it ends.
func newStore(t *testing.T) *store {
	t.Helper()
	bucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
	if bucket == "" {
		t.Skip(`gcslease: no Cloud Storage is configured: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up gcs; eval "$(scripts/stack env)")`)
	}
	s := &store{bucket: bucket}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := s.client(t, nil)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, name := range s.names {
			for _, name := range []string{name, name + gcslease.ProbeSuffix} {
				if err := c.Bucket(s.bucket).Object(name).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
					t.Logf("cleanup: deleting gs://%s/%s: %v", s.bucket, name, err)
				}
			}
		}
	})
	return s
}

// client returns a client of the store; rt, if not nil, carries its
// requests.
func (s *store) client(t *testing.T, rt http.RoundTripper) *storage.Client {
	t.Helper()
	opts := []option.ClientOption{storage.WithJSONReads()}
	if rt != nil {
		opts = append(opts, option.WithHTTPClient(&http.Client{Transport: rt}))
	}
	c, err := storage.NewClient(context.Background(), opts...)
	if err != nil {
		t.Fatalf("storage.NewClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// name returns a fresh object name for a lease called what, to be deleted
// when the test ends.
func (s *store) name(what string) string {
	name := "gcslease-test/" + storetest.UniqueName(what)
	s.track(name)
	return name
}

func (s *store) track(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = append(s.names, name)
}

// open opens the lease at object through c.
func (s *store) open(t *testing.T, c *storage.Client, object string, opts lease.Options) lease.Lease {
	t.Helper()
	l, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: s.bucket, Object: object, Client: c}, opts)
	if err != nil {
		t.Fatalf("gcslease.Open(%q): %v", object, err)
	}
	return l
}

// put stores body at object unconditionally, as someone other than
// leasehold would, and returns its generation.
func (s *store) put(ctx context.Context, c *storage.Client, object string, body []byte) (int64, error) {
	s.track(object)
	w := c.Bucket(s.bucket).Object(object).NewWriter(ctx)
	if _, err := w.Write(body); err != nil {
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Attrs().Generation, nil
}

// get returns the object as stored, with its generation and content type.
func (s *store) get(t *testing.T, c *storage.Client, object string) (body []byte, generation int64, contentType string) {
	t.Helper()
	rd, err := c.Bucket(s.bucket).Object(object).NewReader(t.Context())
	if err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.bucket, object, err)
	}
	defer rd.Close()
	if body, err = io.ReadAll(rd); err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.bucket, object, err)
	}
	return body, rd.Attrs.Generation, strings.TrimSpace(rd.Attrs.ContentType)
}
