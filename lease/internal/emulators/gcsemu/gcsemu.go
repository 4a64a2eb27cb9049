// Package gcsemu opens the Cloud Storage that gcslease's integration tests
// and the quorum's mixed conformance suites run on: fake-gcs-server from
// the local test stack, or a real project's bucket (see package
// emulators). Import it from _test.go files only.
package gcsemu

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

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
				if err := s.Delete(ctx, c, name); err != nil && !NotFound(err) {
					t.Logf("cleanup: deleting gs://%s/%s: %v", s.Bucket, name, err)
				}
			}
		}
	})
	return s
}

// Client returns a client of the store: of fake-gcs-server, without
// credentials, when STORAGE_EMULATOR_HOST is set, as gcslease builds one;
// rt, if not nil, carries its requests.
func (s *Store) Client(t *testing.T, rt http.RoundTripper) *storage.Service {
	t.Helper()
	var opts []option.ClientOption
	if host := os.Getenv("STORAGE_EMULATOR_HOST"); host != "" {
		opts = append(opts, option.WithEndpoint("http://"+host+"/storage/v1/"), option.WithoutAuthentication())
	}
	if rt != nil {
		opts = append(opts, option.WithHTTPClient(&http.Client{Transport: rt}))
	}
	c, err := storage.NewService(context.Background(), opts...)
	if err != nil {
		t.Fatalf("storage.NewService: %v", err)
	}
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
func (s *Store) Open(t *testing.T, c *storage.Service, object string, opts lease.Options) lease.Lease {
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
func (s *Store) Put(ctx context.Context, c *storage.Service, object string, body []byte) (int64, error) {
	s.Track(object)
	obj, err := c.Objects.Insert(s.Bucket, &storage.Object{Name: object}).Media(bytes.NewReader(body)).Context(ctx).Do()
	if err != nil {
		return 0, err
	}
	return obj.Generation, nil
}

// Get returns the object as stored, with its generation and content type.
func (s *Store) Get(t *testing.T, c *storage.Service, object string) (body []byte, generation int64, contentType string) {
	t.Helper()
	resp, err := c.Objects.Get(s.Bucket, object).Context(t.Context()).Download()
	if err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.Bucket, object, err)
	}
	defer resp.Body.Close()
	if body, err = io.ReadAll(resp.Body); err != nil {
		t.Fatalf("reading gs://%s/%s: %v", s.Bucket, object, err)
	}
	if generation, err = strconv.ParseInt(resp.Header.Get("X-Goog-Generation"), 10, 64); err != nil {
		t.Fatalf("reading gs://%s/%s: its generation: %v", s.Bucket, object, err)
	}
	return body, generation, strings.TrimSpace(resp.Header.Get("Content-Type"))
}

// Delete deletes object, of any generation, as someone other than
// leasehold would.
func (s *Store) Delete(ctx context.Context, c *storage.Service, object string) error {
	return c.Objects.Delete(s.Bucket, object).Context(ctx).Do()
}

// NotFound reports whether err is Cloud Storage's 404: no such object or
// bucket.
func NotFound(err error) bool {
	var apiErr *googleapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusNotFound
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
			return s.Delete(ctx, c, name)
		},
	}
}
