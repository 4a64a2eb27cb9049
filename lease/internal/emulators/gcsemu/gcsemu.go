// Package gcsemu opens the Cloud Storage that gcslease's integration tests
// and the quorum's mixed conformance suites run on: fake-gcs-server from
// the local test stack, or a real project's bucket (see package
// emulators). Import it from _test.go files only.
package gcsemu

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

// CallTimeout is the CallTimeout of the leases gcslease's tests and its
// conformance suite open on the store.
const CallTimeout = time.Second

// Store is the Cloud Storage under test: fake-gcs-server from the local test
// stack (scripts/stack up gcs; eval "$(scripts/stack env)" sets
// STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET), or, with only
// LEASEHOLD_GCS_BUCKET set, that bucket in a real project, reached with
// Application Default Credentials.
type Store struct {
	// Bucket is the bucket the test writes its objects to.
	Bucket string
	mu     sync.Mutex
	names  []string // the objects this test wrote
}

// New returns the store for a test, or skips it naming the variables
// to set, and deletes what the test wrote when it ends.
func New(t *testing.T) *Store {
	t.Helper()
	bucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
	if bucket == "" {
		t.Skip(`no Cloud Storage is configured: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up gcs; eval "$(scripts/stack env)")`)
	}
	s := &Store{Bucket: bucket}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := s.Client(t, nil)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, name := range s.names {
			for _, name := range []string{name, name + gcslease.ProbeSuffix} {
				if err := c.Bucket(s.Bucket).Object(name).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
					t.Logf("cleanup: deleting gs://%s/%s: %v", s.Bucket, name, err)
				}
			}
		}
	})
	return s
}

// Client returns a client of the store; rt, if not nil, carries its
// requests.
func (s *Store) Client(t *testing.T, rt http.RoundTripper) *storage.Client {
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

// Name returns a fresh object name for a lease called what, to be deleted
// when the test ends.
func (s *Store) Name(what string) string {
	name := "gcslease-test/" + storetest.UniqueName(what)
	s.Track(name)
	return name
}

// Track notes that the test writes the object called name.
func (s *Store) Track(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = append(s.names, name)
}

// Open opens the lease at object through c.
func (s *Store) Open(t *testing.T, c *storage.Client, object string, opts lease.Options) lease.Lease {
	t.Helper()
	l, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: s.Bucket, Object: object, Client: c}, opts)
	if err != nil {
		t.Fatalf("gcslease.Open(%q): %v", object, err)
	}
	return l
}

// URL returns the gs:// URL of the lease at object, whose client finds the
// emulator through STORAGE_EMULATOR_HOST.
func (s *Store) URL(object string) string {
	s.Track(object)
	return "gs://" + s.Bucket + "/" + object
}

// Put stores body at object unconditionally, as someone other than
// leasehold would, and returns its generation.
func (s *Store) Put(ctx context.Context, c *storage.Client, object string, body []byte) (int64, error) {
	s.Track(object)
	w := c.Bucket(s.Bucket).Object(object).NewWriter(ctx)
	if _, err := w.Write(body); err != nil {
		_ = w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return w.Attrs().Generation, nil
}

// Get returns the object as stored, with its generation and content type.
func (s *Store) Get(t *testing.T, c *storage.Client, object string) (body []byte, generation int64, contentType string) {
	t.Helper()
	rd, err := c.Bucket(s.Bucket).Object(object).NewReader(t.Context())
	if err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.Bucket, object, err)
	}
	defer rd.Close()
	if body, err = io.ReadAll(rd); err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.Bucket, object, err)
	}
	return body, rd.Attrs.Generation, strings.TrimSpace(rd.Attrs.ContentType)
}

// Conformance is the conformance suite's harness on the store, at
// gcslease's shortest TTL, through one new client.
func (s *Store) Conformance(t *testing.T) *storetest.Harness {
	c := s.Client(t, nil)
	return &storetest.Harness{
		TTL:         gcslease.MinTTL,
		CallTimeout: CallTimeout,
		OpenLease: func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
			s.Track(name)
			return gcslease.Open(ctx, gcslease.Options{Bucket: s.Bucket, Object: name, Client: c}, opts)
		},
		// An object that is JSON, but not a lease record.
		Foreign: func(ctx context.Context, name string) error {
			_, err := s.Put(ctx, c, name, []byte(`{"owner":"another-tool","locked":true}`))
			return err
		},
		Remove: func(ctx context.Context, name string) error {
			return c.Bucket(s.Bucket).Object(name).Delete(ctx)
		},
	}
}
