package gcslease_test

import (
	"context"
	"os"
	"testing"

	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// emulator returns the store and fake-gcs-server's address, or skips the
// test: the fault proxy speaks plain HTTP, so it stands in front of the
// emulator only.
func emulator(t *testing.T) (*store, string) {
	t.Helper()
	host := os.Getenv("STORAGE_EMULATOR_HOST")
	if host == "" {
		t.Skip(`gcslease: fake-gcs-server is not configured: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up gcs; eval "$(scripts/stack env)")`)
	}
	return newStore(t), "http://" + host
}

// proxiedClient returns a client of the store whose requests go through
// the proxy at endpoint, with its store check done: the proxy's faults
// then meet the lease's own requests only.
func proxiedClient(t *testing.T, s *store, endpoint string) *storage.Service {
	t.Helper()
	c, err := storage.NewService(context.Background(), option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	l := s.Open(t, c, s.Name("verify"), testOptions("verifier"))
	if err := l.(driver.Verifier).Verify(t.Context()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return c
}

// TestFaultAnswers: Cloud Storage's answers to a bucket under strain are
// lease.ErrUnavailable, retryable; an upload whose answer was lost or
// replaced by 503 backendError after the store applied it is resolved by
// reading back.
func TestFaultAnswers(t *testing.T) {
	t.Parallel()
	s, upstream := emulator(t)
	open := func(t *testing.T, endpoint, identity string) lease.Lease {
		return s.Open(t, proxiedClient(t, s, endpoint), s.Name("fault"), testOptions(identity))
	}
	faultproxy.CheckRefusals(t, upstream, open, []faultproxy.Refusal{
		{Name: "ReadBackendError", Rule: faultproxy.Rule{Match: faultproxy.GCSRead, Fault: faultproxy.Refuse(faultproxy.GCSBackendError)}, Mention: "503"},
		{Name: "UploadRateLimited", Rule: faultproxy.Rule{Match: faultproxy.GCSUpload, Fault: faultproxy.Refuse(faultproxy.GCSRateLimited)}, Mention: "throttled"},
		{Name: "UploadBackendError", Rule: faultproxy.Rule{Match: faultproxy.GCSUpload, Fault: faultproxy.Refuse(faultproxy.GCSBackendError)}, Mention: "503"},
	})
	faultproxy.CheckLostAnswers(t, upstream, open, faultproxy.GCSUpload, faultproxy.GCSBackendError)
}

// TestConformanceThroughProxy runs the conformance suite through the fault
// proxy, which answers one applied upload in seven (the record's writes)
// with 503 backendError: the engine's read back resolves each.
func TestConformanceThroughProxy(t *testing.T) {
	t.Parallel()
	s, upstream := emulator(t)
	p := faultproxy.Start(t, upstream)
	c := proxiedClient(t, s, p.URL)
	rules := p.Add(faultproxy.Rule{Match: faultproxy.GCSUpload, Fault: faultproxy.Replace(faultproxy.GCSBackendError), Every: 7})
	t.Cleanup(func() {
		t.Logf("uploads applied whose answer was a 503: %d", p.Applied(rules[0]))
		if p.Applied(rules[0]) == 0 {
			t.Errorf("no answer was replaced: the suite did not meet the fault")
		}
	})
	direct := s.Client(t, nil)
	leasetest.RunConformanceTests(t, leasetest.Config{
		NewHarness: func(*testing.T) leasetest.Harness { return proxiedHarness{s: s, c: c, direct: direct} },
		TTL:        gcslease.MinTTL,
	})
}

// proxiedHarness opens leases through the proxy's client, and writes
// foreign objects and deletes records directly.
type proxiedHarness struct {
	s         *store
	c, direct *storage.Service
}

func (h proxiedHarness) Open(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
	h.s.Track(name)
	if opts.CallTimeout == 0 {
		opts.CallTimeout = testCallTimeout
	}
	return gcslease.Open(ctx, gcslease.Options{Bucket: h.s.Bucket, Object: name, Client: h.c}, opts)
}

func (h proxiedHarness) WriteForeign(ctx context.Context, name string) error {
	_, err := h.s.Put(ctx, h.direct, name, []byte(`{"owner":"another-tool","locked":true}`))
	return err
}

func (h proxiedHarness) Delete(ctx context.Context, name string) error {
	return h.s.Delete(ctx, h.direct, name)
}
