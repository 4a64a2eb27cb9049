package gcslease_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
)

// TestRedTeam23EmulatorHostNeverPanics: rule 8 (bad input gets a clear
// error; nothing may panic) and the quality bar's clear errors naming the
// field and value. STORAGE_EMULATOR_HOST is checked at Open only when it
// holds "://"; a host:port value with a trailing space or newline (as a
// .env file or $(cat file) leaves it), a '%' or an unclosed IPv6 bracket
// passes Open, and the lease's first call panics in
// googleapi.ResolveRelative ("failed to parse http://127.0.0.1:4443%20/
// storage/v1/"). A scheme the client cannot speak (ftp) or a port out of
// range passes Open too, and every call then fails as
// lease.ErrUnavailable, retried for ever.
func TestRedTeam23EmulatorHostNeverPanics(t *testing.T) {
	for _, host := range []string{"127.0.0.1:4443 ", " 127.0.0.1:4443", "127.0.0.1:4443\n", "127.0.0.1:4443%", "127.0.0.1:4443/x?y=1", "[::1", "ftp://127.0.0.1:4443", "127.0.0.1:99999"} {
		t.Run(strings.TrimSpace(strings.ReplaceAll(host, "/", "_")), func(t *testing.T) {
			t.Setenv("STORAGE_EMULATOR_HOST", host)
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("STORAGE_EMULATOR_HOST=%q: Open succeeded and the lease's first call panicked: %v; want Open to refuse it with lease.ErrInvalid naming STORAGE_EMULATOR_HOST", host, p)
				}
			}()
			l, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: "bucket", Object: "lease"}, testOptions("worker-1"))
			if err != nil {
				if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "STORAGE_EMULATOR_HOST") {
					t.Errorf("STORAGE_EMULATOR_HOST=%q: Open: %v, want lease.ErrInvalid naming STORAGE_EMULATOR_HOST", host, err)
				}
				return
			}
			_, err = l.Observe(t.Context())
			t.Errorf("STORAGE_EMULATOR_HOST=%q: Open accepted it, and Observe returned %v (retryable: %t); want Open to refuse it with lease.ErrInvalid naming STORAGE_EMULATOR_HOST", host, err, lease.Retryable(err))
		})
	}
}

// rewrite is a transport to the emulator that replaces the answer to each
// object read (GET ...?alt=media) with status, header and body.
type rewrite struct {
	status int
	header http.Header
	body   string
}

func (rw rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || r.URL.Query().Get("alt") != "media" {
		return resp, err
	}
	resp.Body.Close()
	resp.StatusCode, resp.Status, resp.Header = rw.status, http.StatusText(rw.status), rw.header
	resp.ContentLength, resp.Body = int64(len(rw.body)), io.NopCloser(strings.NewReader(rw.body))
	return resp, nil
}

// TestRedTeam23AnswerWithoutGenerationIsNotAForeignObject: rule 8 (a
// record that is not ours is lease.ErrCorrupt, never overwritten and not
// retried: it needs a person; an unreachable endpoint is retryable) and
// download's own comment (an x-goog-generation that is not a number is an
// error before the body is read: a malformed answer). A 200 with an HTML
// page and no x-goog-generation (a proxy's or a captive portal's page, not
// an object download: Cloud Storage sends the header with every one) is
// reported as lease.ErrCorrupt, permanent: Get decodes the body before it
// checks the generation. The same page with x-goog-generation "x" is
// lease.ErrUnavailable, retryable. A follower that meets such a page once
// stops campaigning for good.
func TestRedTeam23AnswerWithoutGenerationIsNotAForeignObject(t *testing.T) {
	s := newStore(t)
	object := s.Name("rt23-no-generation")
	if _, err := s.Open(t, s.Client(t, nil), object, testOptions("holder")).Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	page := rewrite{status: http.StatusOK, header: http.Header{"Content-Type": {"text/html"}}, body: "<html><body>Sign in to continue</body></html>"}
	_, err := s.Open(t, s.Client(t, page), object, testOptions("follower")).Observe(t.Context())
	if errors.Is(err, lease.ErrCorrupt) || !lease.Retryable(err) {
		t.Errorf("a 200 with an HTML page and no x-goog-generation: Observe returned %v (retryable: %t); want lease.ErrUnavailable, retryable: the answer names no object", err, lease.Retryable(err))
	}
}

// TestRedTeam23ListingWhosePageTokenRepeats: Objects.List returns "all of
// them, or an error" (objects.go); a listing whose nextPageToken comes
// back unchanged, page after page, is a store answer that breaks the
// API's contract, and List asks for the same page again until the
// caller's context ends: ~10,000 objects.list requests (Class A
// operations) in one second's CallTimeout against a loopback server, and
// an error that says only "context deadline exceeded". Want an error
// naming the repeated token after it first repeats.
func TestRedTeam23ListingWhosePageTokenRepeats(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"kind":"storage#objects","nextPageToken":"same","items":[{"name":"group/a","generation":"3"}]}`)
	}))
	defer srv.Close()
	c, err := storage.NewService(t.Context(), option.WithEndpoint(srv.URL+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	o, err := gcslease.OpenObjects(t.Context(), gcslease.ObjectsOptions{Bucket: "bucket", Client: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	_, err = o.List(ctx, "group/")
	if n := requests.Load(); n > 2 || err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a listing whose nextPageToken repeats: List sent %d requests and returned %v; want an error naming the repeated token after 2 requests", n, err)
	}
}
