package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// ConformanceTTL keeps the conformance suite's waits short.
const ConformanceTTL = 2 * time.Second

// MotoTTL is the conformance suite's TTL on moto. moto serves S3 and
// DynamoDB from one Python process, which the suites of both and every
// other test beside them share: under that load some of its reads take
// longer than a third of a 2s TTL's renew interval, and rule 2 restarts a
// follower's count at each one, so that its takeover comes later than the
// suite allows (the chaos harness runs moto at 4s for the same reason).
const MotoTTL = 4 * time.Second

// Harness is a leasetest.Harness made of two functions.
type Harness struct {
	// OpenLease opens the lease called name; its CallTimeout is set.
	OpenLease func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error)
	// Foreign stores an item or object that leasehold did not write at
	// the key of the lease called name.
	Foreign func(ctx context.Context, name string) error
	// Remove deletes the item or object of the lease called name.
	// Required: the suite's RecordDeleted needs it.
	Remove func(ctx context.Context, name string) error
	// CallTimeout is the CallTimeout the suite's leases get: the one their
	// server needs under the suite's load.
	CallTimeout time.Duration
	// TTL is the suite's TTL; ConformanceTTL if zero.
	TTL time.Duration
}

// Open implements leasetest.Harness.
func (h *Harness) Open(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
	if opts.CallTimeout == 0 {
		opts.CallTimeout = h.CallTimeout
	}
	return h.OpenLease(ctx, name, opts)
}

// WriteForeign implements leasetest.Harness.
func (h *Harness) WriteForeign(ctx context.Context, name string) error { return h.Foreign(ctx, name) }

// Delete implements leasetest.Deleter.
func (h *Harness) Delete(ctx context.Context, name string) error { return h.Remove(ctx, name) }

// RunConformance runs leasetest's suite on h in real time, with h.TTL.
func RunConformance(t *testing.T, h *Harness) {
	t.Helper()
	ttl := h.TTL
	if ttl == 0 {
		ttl = ConformanceTTL
	}
	leasetest.RunConformanceTests(t, leasetest.Config{
		NewHarness: func(*testing.T) leasetest.Harness { return h },
		TTL:        ttl,
	})
}

// CheckError checks the error of a call the test describes as what: it
// must match want, be retryable exactly when lease.Retryable(want) is, and
// say mention.
func CheckError(t *testing.T, what string, err, want error, mention string) {
	t.Helper()
	t.Logf("%s: %v", what, err)
	if !errors.Is(err, want) || lease.Retryable(err) != lease.Retryable(want) {
		t.Errorf("%s: %v, want an error matching %v, retryable %t", what, err, want, lease.Retryable(want))
	}
	if err != nil && !strings.Contains(err.Error(), mention) {
		t.Errorf("%s: error %q does not say %q", what, err, mention)
	}
}

// ContextErrors checks that a backend's calls return their context's own
// error, unwrapped, for the engine to tell a caller's cancellation from its
// own CallTimeout. calls, given the endpoint of a server that never
// answers, returns the calls to check by name; each is made with a
// cancelled context and with one that times out.
func ContextErrors(t *testing.T, calls func(endpoint string) map[string]func(ctx context.Context) error) {
	t.Helper()
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for name, call := range calls(SilentServer(t)) {
		if err := call(cancelled); err != context.Canceled {
			t.Errorf("%s with a cancelled context: %v (%T), want context.Canceled itself", name, err, err)
		}
		short, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		if err := call(short); err != context.DeadlineExceeded {
			t.Errorf("%s past its deadline: %v (%T), want context.DeadlineExceeded itself", name, err, err)
		}
		cancel()
	}
}

// UseURL opens the lease urlstr names with lease.Open, acquires and renews
// it, has check look at what is stored, and releases it.
func UseURL(t *testing.T, urlstr string, ttl time.Duration, check func(term lease.Term)) {
	t.Helper()
	l, err := lease.Open(t.Context(), urlstr, lease.Options{Identity: "worker-1", TTL: ttl})
	if err != nil {
		t.Fatalf("lease.Open(%q): %v", urlstr, err)
	}
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatalf("Acquire through %q: %v", urlstr, err)
	}
	if term, err = l.Renew(t.Context(), term); err != nil {
		t.Fatalf("Renew through %q: %v", urlstr, err)
	}
	check(term)
	if err := l.Release(t.Context(), term); err != nil {
		t.Fatalf("Release through %q: %v", urlstr, err)
	}
}

// CountRequests runs the lease operations whose requests set a lease's
// cost, leader's and follower's on one free lease, each through a client
// that carries its requests through its Counter, and checks how many
// requests each operation makes, by label: read and write are the labels
// of the backend's read and conditional write (GET and PUT,
// GetItem and PutItem). A renewal is one write, a follower's poll of a
// held lease one read; acquiring a free lease is one write after the
// engine's read, which finds nothing.
func CountRequests(t *testing.T, leader, follower lease.Lease, leaderHTTP, followerHTTP *Counter, read, write string) {
	t.Helper()
	check := func(step string, c *Counter, want map[string]int) {
		t.Helper()
		got := c.Take()
		t.Logf("%-40s %v", step, got)
		if !maps.Equal(got, want) {
			t.Errorf("%s: %v, want %v", step, got, want)
		}
	}
	ctx := t.Context()
	leaderHTTP.Take()
	followerHTTP.Take()

	term, err := leader.Acquire(ctx)
	if err != nil {
		t.Fatalf("leader's Acquire: %v", err)
	}
	check("Acquire of a free lease", leaderHTTP, map[string]int{read: 1, write: 1})
	for i := range 3 {
		if term, err = leader.Renew(ctx, term); err != nil {
			t.Fatalf("Renew %d: %v", i+1, err)
		}
		check(fmt.Sprintf("Renew %d", i+1), leaderHTTP, map[string]int{write: 1})
	}
	for i := range 3 {
		if _, err := follower.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("follower's Acquire %d: %v, want lease.ErrHeld", i+1, err)
		}
		check(fmt.Sprintf("follower's poll (Acquire, held) %d", i+1), followerHTTP, map[string]int{read: 1})
	}
	if _, err := follower.Observe(ctx); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	check("Observe", followerHTTP, map[string]int{read: 1})
	if err := leader.Release(ctx, term); err != nil {
		t.Fatalf("Release: %v", err)
	}
	check("Release", leaderHTTP, map[string]int{write: 1})
	if _, err := follower.Acquire(ctx); err != nil {
		t.Fatalf("follower's Acquire of the released lease: %v", err)
	}
	check("Acquire of a released lease", followerHTTP, map[string]int{read: 1, write: 1})
	// A deposed holder's renewal: the failed condition, then the read that
	// tells a lost term from an unknown outcome.
	if _, err := leader.Renew(ctx, term); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("deposed leader's Renew: %v, want lease.ErrLost", err)
	}
	check("Renew after being deposed", leaderHTTP, map[string]int{read: 1, write: 1})
}

// CheckStoredJSON checks an object a lease stored at its first
// acquisition, as read back with its content type: one line of the
// documented JSON record, application/json, with holder, token 1, ttl and
// a nonce of 16 digits followed by the holder's renew interval (the
// default for ttl: ";renew=" and its milliseconds), and no other field (S3
// and Cloud Storage store it so).
func CheckStoredJSON(t *testing.T, body []byte, contentType, holder string, ttl time.Duration) {
	t.Helper()
	if contentType != "application/json" {
		t.Errorf("Content-Type is %q, want application/json", contentType)
	}
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("stored bytes %q are not JSON: %v", body, err)
	}
	nonce, _ := got["nonce"].(string)
	want := map[string]any{"leasehold": 1.0, "holder": holder, "token": 1.0, "ttl_ms": float64(ttl.Milliseconds()), "released": false, "nonce": nonce}
	if wantTail := fmt.Sprintf(";renew=%d", lease.DefaultRenewInterval(ttl).Milliseconds()); len(nonce) != 16+len(wantTail) || nonce[16:] != wantTail || len(got) != len(want) {
		t.Errorf("stored record %s, want the fields %v with a 16-digit nonce and %q", body, want, wantTail)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stored record's %q is %v, want %v (record %s)", k, got[k], v, body)
		}
	}
	if strings.ContainsRune(string(body), '\n') {
		t.Errorf("stored record %q spans lines, want one line", body)
	}
}
