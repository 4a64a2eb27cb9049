package azurelease_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/runner"
)

// lapsingAzure is a per-request policy that plays Azure after a lease
// expired without a release: it answers the next refuse lease acquires
// with 409 LeaseAlreadyPresent, as Azure may for up to a minute while the
// blob's lease state already reads expired, and then lets them through.
// Azurite lets a lapsed lease go at once.
type lapsingAzure struct {
	mu      sync.Mutex
	refuse  int
	refused int
}

func (p *lapsingAzure) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	if operation(r) != "LeaseBlob acquire" || !p.take() {
		return req.Next()
	}
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>LeaseAlreadyPresent</Code><Message>There is already a lease present.</Message></Error>`
	return &http.Response{
		StatusCode:    http.StatusConflict,
		Status:        "409 There is already a lease present.",
		Header:        http.Header{"X-Ms-Error-Code": {"LeaseAlreadyPresent"}, "Content-Type": {"application/xml"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

// take reports whether to refuse one more acquire, and counts it.
func (p *lapsingAzure) take() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused == p.refuse {
		return false
	}
	p.refused++
	return true
}

func (p *lapsingAzure) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// TestSlowLapse: after a holder died, its lease expired, and Azure still
// refuses acquires for a while. A contender reports the lease lapsing, to
// retry (never held by an unknown holder), and RunOnce waits it out and is
// elected once Azure lets go, instead of answering NotElected.
func TestSlowLapse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.open(nil, "job", "a")
	ta := e.acquire(a) // a dies: it never renews
	time.Sleep(testTTL)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		p := e.props("job")
		if p.LeaseState != nil && *p.LeaseState == azlease.StateTypeExpired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a's lease did not expire within a TTL and 5s: lease state %v", p.LeaseState)
		}
	}

	const refusals = 3
	slow := &lapsingAzure{refuse: refusals}
	b := e.open(azureemu.NewClient(t, e.ConnectionString, slow), "job", "b")
	_, err := b.Acquire(t.Context())
	t.Logf("b's Acquire while Azure still refuses: %v", err)
	if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrHeld) || !lease.Retryable(err) {
		t.Errorf("b's Acquire of a lapsing lease: %v, want lease.ErrUnavailable (retryable), not lease.ErrHeld", err)
	}
	if err != nil && (!strings.Contains(err.Error(), "lapsing") || strings.Contains(err.Error(), "has not written its name")) {
		t.Errorf("b's Acquire of a lapsing lease: %q, want it to say the lease is lapsing, not held by an unknown holder", err)
	}

	var logs bytes.Buffer
	var ran lease.Term
	r, err := runner.New(runner.Config{
		Lease:            b,
		Task:             func(ctx context.Context) error { ran, _ = runner.Term(ctx); return nil },
		CampaignInterval: 500 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatalf("runner.New: %v", err)
	}
	once, err := r.RunOnce(t.Context())
	t.Logf("RunOnce: %+v, %v; Azure refused %d acquires in all\n%s", once, err, slow.count(), logs.String())
	if err != nil || once.Outcome != runner.Ran {
		t.Fatalf("RunOnce while the lease lapses: %v, %v; want %v once Azure lets go", once.Outcome, err, runner.Ran)
	}
	if slow.count() != refusals {
		t.Errorf("Azure refused %d acquires, want all %d to have been tried", slow.count(), refusals)
	}
	if ran.Token <= ta.Token {
		t.Errorf("b ran with token %d, want more than a's %d", ran.Token, ta.Token)
	}
	if strings.Contains(logs.String(), "has not written its name") || strings.Contains(logs.String(), "not elected") {
		t.Errorf("RunOnce's log reports a holder, or not elected, while the lease lapsed:\n%s", logs.String())
	}
}
