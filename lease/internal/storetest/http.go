package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// HTTPClient sends a request and returns its response: an *http.Client,
// and what the AWS SDK's clients take (aws.HTTPClient).
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

// Counter is an HTTPClient (an s3.HTTPClient, a dynamodb.HTTPClient) that
// counts the requests it carries, by a label of each. It is also an
// http.RoundTripper, for clients built on an *http.Client (Cloud Storage's).
type Counter struct {
	next  HTTPClient
	label func(*http.Request) string
	mu    sync.Mutex
	n     map[string]int
}

// NewCounter returns a Counter that sends requests on through next
// (http.DefaultClient if nil) and counts them by label: ByMethod,
// awstest.ByOperation.
func NewCounter(next HTTPClient, label func(*http.Request) string) *Counter {
	if next == nil {
		next = http.DefaultClient
	}
	return &Counter{next: next, label: label, n: map[string]int{}}
}

// ByMethod labels a request with its HTTP method: S3's GET, PUT.
func ByMethod(r *http.Request) string { return r.Method }

// Do implements HTTPClient.
func (c *Counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[c.label(r)]++
	c.mu.Unlock()
	return c.next.Do(r)
}

// RoundTrip implements http.RoundTripper.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) { return c.Do(r) }

// Take returns the counts since the last Take, by label, and resets them.
func (c *Counter) Take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// Answer is a canned HTTP response.
type Answer struct {
	// Status is the HTTP status code.
	Status int
	// Body is the response's body.
	Body string
	// Headers are the response's headers, by name.
	Headers map[string]string
}

// Server is a fake service endpoint on loopback: it answers each request
// with the Answer its route gives, and records the requests.
type Server struct {
	// URL is the endpoint's base URL.
	URL   string
	route func(*http.Request) Answer
	mu    sync.Mutex
	reqs  []*http.Request
}

// NewServer starts a Server that answers with route, until the test ends.
func NewServer(t *testing.T, route func(r *http.Request) Answer) *Server {
	t.Helper()
	s := &Server{route: route}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Always returns a route that answers every request with a.
func Always(a Answer) func(*http.Request) Answer {
	return func(*http.Request) Answer { return a }
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := r.Clone(context.Background())
	rec.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	a := s.route(r)
	for k, v := range a.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(a.Status)
	fmt.Fprint(w, a.Body)
}

// Requests returns the requests received so far; each one's Body can be
// read again.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.reqs...)
}

// ClosedPort returns the address of a loopback port nobody listens on.
func ClosedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// SilentServer returns the address of a loopback server that accepts
// connections and never answers.
func SilentServer(t *testing.T) string {
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

// CannedObject answers every request, without a network, with a download
// of Body (200) and, if Value is not empty, the header Header: Value (an
// S3 ETag, a Cloud Storage x-goog-generation). It is an HTTPClient and
// an http.RoundTripper, for the fuzz targets of the drivers' reads.
type CannedObject struct {
	// Body is the object's content.
	Body []byte
	// Header and Value are the header the download carries, if Value is
	// not empty.
	Header, Value string
}

// Do answers r.
func (c CannedObject) Do(r *http.Request) (*http.Response, error) {
	h := http.Header{"Content-Type": {"application/octet-stream"}}
	if c.Value != "" {
		h.Set(c.Header, c.Value)
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(c.Body)),
		ContentLength: int64(len(c.Body)),
		Request:       r,
	}, nil
}

// RoundTrip answers r.
func (c CannedObject) RoundTrip(r *http.Request) (*http.Response, error) { return c.Do(r) }

// FailNth is an aws.HTTPClient and an http.RoundTripper that fails the Nth
// request Match selects, as a reset connection would, and sends every
// other through http.DefaultClient: a failure in the middle of a call made
// of several requests (a listing's second page).
type FailNth struct {
	// Match selects the requests counted.
	Match func(*http.Request) bool
	// N is which of them fails, from 1.
	N    int32
	seen atomic.Int32
}

// Do implements aws.HTTPClient.
func (f *FailNth) Do(r *http.Request) (*http.Response, error) {
	if f.Match(r) && f.seen.Add(1) == f.N {
		return nil, errors.New("storetest: connection reset by peer (FailNth)")
	}
	return http.DefaultClient.Do(r)
}

// RoundTrip implements http.RoundTripper.
func (f *FailNth) RoundTrip(r *http.Request) (*http.Response, error) { return f.Do(r) }

// Seen returns how many requests Match selected.
func (f *FailNth) Seen() int32 { return f.seen.Load() }
