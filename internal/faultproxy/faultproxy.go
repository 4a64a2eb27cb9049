// Package faultproxy is an HTTP proxy for tests, on loopback, in front of
// a store's emulator (MinIO, dynalite, Azurite), that answers as the real
// services do when they fail, which the emulators never do (toxiproxy
// works on TCP and cannot):
//
//   - the services' documented error answers, in their own wire format
//     (S3Error, DynamoError, AzureError, and the answers named after them),
//     instead of forwarding the request (Refuse);
//   - an answer lost, or replaced by an error, after the store applied the
//     request (Lose, Replace): the unknown outcome the backends resolve by
//     reading back;
//   - a request that hangs, neither forwarded nor answered, until its
//     client gives up (Hang): a call cut off by a partition, which has
//     the backends' per-call timeout and the holder's renew deadline to
//     meet;
//   - a store that accepts conditional writes and ignores their conditions
//     (IgnoreConditions): S3 PutObject with If-Match and If-None-Match
//     stripped, DynamoDB PutItem with its ConditionExpression stripped, the
//     request signed again, and answered 200.
//
// Everything else passes through unchanged, Host header included, so that
// signatures made for the proxy's address hold at the emulator.
package faultproxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Proxy is one proxy, started by Start.
type Proxy struct {
	// URL is the proxy's base URL, http://127.0.0.1:PORT: the endpoint to
	// give clients instead of the store's.
	URL string

	t        testing.TB
	upstream *url.URL
	rp       *httputil.ReverseProxy

	mu     sync.Mutex
	rules  []*Rule
	ignore *aws.Credentials

	// closed is closed when the proxy stops: hung requests end then.
	closed chan struct{}
}

// Start starts a proxy in front of upstream (http://HOST:PORT, with any
// path), which stops when the test ends.
func Start(t testing.TB, upstream string) *Proxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		t.Fatalf("faultproxy: upstream %q: want http://HOST:PORT", upstream)
	}
	p := &Proxy{t: t, upstream: &url.URL{Scheme: u.Scheme, Host: u.Host}, closed: make(chan struct{})}
	transport := &http.Transport{}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(p.upstream)
			pr.Out.Host = pr.In.Host
		},
		Transport:      transport,
		ModifyResponse: p.afterStore,
		ErrorHandler:   p.failed,
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() {
		close(p.closed) // before Close, which waits for every handler
		srv.Close()
		transport.CloseIdleConnections()
	})
	p.URL = srv.URL
	return p
}

// Answer is an HTTP answer the proxy gives in the store's place.
type Answer struct {
	// Status is the HTTP status code.
	Status int
	// Headers are the answer's headers, by name.
	Headers map[string]string
	// Body is the answer's body.
	Body string
}

// Fault is what a Rule does to the requests it applies to.
type Fault struct {
	kind   faultKind
	answer Answer
}

type faultKind int

const (
	refuse  faultKind = iota + 1 // answer without forwarding
	replace                      // forward; if applied, answer instead
	lose                         // forward; if applied, close the connection unanswered
	hang                         // hold unforwarded until the client gives up
)

// Refuse answers a in the store's place: the request never reaches it.
func Refuse(a Answer) Fault { return Fault{kind: refuse, answer: a} }

// Replace forwards the request and, if the store applied it (answered
// 2xx), answers a instead of the store's answer: a write applied whose
// answer was an error. A request the store refused passes unchanged and
// does not count as applied.
func Replace(a Answer) Fault { return Fault{kind: replace, answer: a} }

// Lose forwards the request and, if the store applied it (answered 2xx),
// closes the connection without answering: a write applied whose answer
// was lost. A request the store refused passes unchanged.
func Lose() Fault { return Fault{kind: lose} }

// Hang holds the request without forwarding it or answering, until the
// client gives up (it closes the connection: its call timed out) or the
// proxy stops, and then closes the connection unanswered: a call lost in a
// partition. The store never sees it, so a renewal that hangs does not
// land, and the record ages as its holder's last write left it: what a
// successor counts its TTL from. (A request forwarded and its answer held
// would be Lose, late: a write that lands unknown to its writer.) A Clear
// does not end the requests held already.
func Hang() Fault { return Fault{kind: hang} }

// Rule applies a fault to the requests it matches.
type Rule struct {
	// Match selects the requests; nil matches every request.
	Match func(*http.Request) bool
	// Fault is what happens to them.
	Fault Fault
	// Every applies the fault to every Every-th request matched (the
	// Every-th, the 2×Every-th, ...); 0 or 1: to each.
	Every int
	// Times stops the rule after it has applied its fault that many
	// times; 0: never.
	Times int

	matched, applied int // under Proxy.mu
}

// Add adds rules, tried in order after those added before; the first rule
// that takes a request applies its fault. It returns them, for Applied.
func (p *Proxy) Add(rules ...Rule) []*Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	var added []*Rule
	for _, r := range rules {
		r.matched, r.applied = 0, 0
		added = append(added, &r)
	}
	p.rules = append(p.rules, added...)
	return added
}

// Clear removes every rule, and stops ignoring conditions: the proxy
// passes everything through.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules, p.ignore = nil, nil
}

// Applied returns how many times r has applied its fault.
func (p *Proxy) Applied(r *Rule) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.applied
}

// IgnoreConditions makes the proxy a store that accepts conditional writes
// and ignores their conditions: it strips If-Match and If-None-Match from
// every S3 PutObject, and ConditionExpression (with the names and values
// it uses) from every DynamoDB PutItem, and signs the request again (AWS
// Signature Version 4, with creds, the store's keys), so the store applies
// it unconditionally.
func (p *Proxy) IgnoreConditions(creds aws.Credentials) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ignore = &creds
}

// faultKey carries the rule a forwarded request met, to afterStore.
type faultKey struct{}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rule, ignore := p.take(r)
	if rule != nil && rule.Fault.kind == refuse {
		write(w, rule.Fault.answer)
		return
	}
	if rule != nil && rule.Fault.kind == hang {
		// Read the body first: the server notices the client going away
		// (and ends r's context) only once it has.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-p.closed:
		}
		panic(http.ErrAbortHandler)
	}
	if ignore != nil && (S3PutObject(r) && (r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "") || DynamoOp("PutItem")(r)) {
		if err := resign(r, *ignore); err != nil {
			p.t.Errorf("faultproxy: signing %s %s again without its conditions: %v", r.Method, r.URL, err)
		}
	}
	if rule != nil {
		r = r.WithContext(context.WithValue(r.Context(), faultKey{}, rule))
	}
	p.rp.ServeHTTP(w, r)
}

// take returns the rule whose fault applies to r, if any, counting r as
// matched, and the keys to sign with if conditions are ignored.
func (p *Proxy) take(r *http.Request) (*Rule, *aws.Credentials) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, rule := range p.rules {
		if rule.Match != nil && !rule.Match(r) || rule.Times > 0 && rule.applied >= rule.Times {
			continue
		}
		rule.matched++
		if rule.Every > 1 && rule.matched%rule.Every != 0 {
			continue
		}
		if rule.Fault.kind == refuse || rule.Fault.kind == hang {
			rule.applied++
		}
		return rule, p.ignore
	}
	return nil, p.ignore
}

// errLost makes failed close the client's connection unanswered.
var errLost = errors.New("faultproxy: answer lost")

// afterStore applies a Replace or Lose fault to the store's answer, if the
// store applied the request.
func (p *Proxy) afterStore(resp *http.Response) error {
	rule, _ := resp.Request.Context().Value(faultKey{}).(*Rule)
	if rule == nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil
	}
	p.mu.Lock()
	rule.applied++
	p.mu.Unlock()
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if rule.Fault.kind == lose {
		return errLost
	}
	a := rule.Fault.answer
	resp.StatusCode, resp.Status = a.Status, fmt.Sprintf("%d %s", a.Status, http.StatusText(a.Status))
	resp.Header = http.Header{}
	for k, v := range a.Headers {
		resp.Header.Set(k, v)
	}
	resp.Header.Set("Content-Length", strconv.Itoa(len(a.Body)))
	resp.ContentLength = int64(len(a.Body))
	resp.Body = io.NopCloser(strings.NewReader(a.Body))
	return nil
}

// failed ends a request whose answer is lost, or that the store did not
// answer (it is down, or the client went away), by closing the client's
// connection, as a dead store would.
func (p *Proxy) failed(http.ResponseWriter, *http.Request, error) {
	panic(http.ErrAbortHandler)
}

func write(w http.ResponseWriter, a Answer) {
	for k, v := range a.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Body)))
	w.WriteHeader(a.Status)
	_, _ = io.WriteString(w, a.Body)
}

// credentialScope reads the region from a SigV4 Authorization header:
// "AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/SERVICE/aws4_request, ...".
var credentialScope = regexp.MustCompile(`Credential=[^/]+/\d{8}/([^/]+)/([^/]+)/aws4_request`)

// resign strips r's conditions and signs it again with creds, for the
// region and service of its signature, and the payload hash it declares.
func resign(r *http.Request, creds aws.Credentials) error {
	m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization"))
	if m == nil {
		return fmt.Errorf("no SigV4 credential scope in Authorization %q", r.Header.Get("Authorization"))
	}
	r.Header.Del("If-Match")
	r.Header.Del("If-None-Match")
	r.Header.Del("Authorization")
	payloadHash := r.Header.Get("X-Amz-Content-Sha256")
	if DynamoOp("PutItem")(r) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		var in map[string]json.RawMessage
		if err := json.Unmarshal(body, &in); err != nil {
			return fmt.Errorf("PutItem body is not JSON: %w", err)
		}
		delete(in, "ConditionExpression")
		delete(in, "ExpressionAttributeNames")
		delete(in, "ExpressionAttributeValues")
		if body, err = json.Marshal(in); err != nil {
			return err
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		sum := sha256.Sum256(body)
		payloadHash = hex.EncodeToString(sum[:])
	}
	// The signer signs the request's URL host; the client signed the
	// proxy's address, which the proxy passes on.
	r.URL.Host = r.Host
	return v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }).
		SignHTTP(r.Context(), creds, r, payloadHash, m[2], m[1], time.Now())
}
