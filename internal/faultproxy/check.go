package faultproxy

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// Refusal is an answer of a store under strain that a backend must report
// as lease.ErrUnavailable, retryable: the fault applied to Acquire's
// requests, and what the error must say.
type Refusal struct {
	// Name names the refusal's subtest: "S3 503 SlowDown".
	Name string
	// Rule is the fault the proxy applies to Acquire's requests.
	Rule Rule
	// Mention is what the backend's error must say.
	Mention string
}

// Opener opens a lease, new to the store, for a contender, through the
// proxy at endpoint.
type Opener func(t *testing.T, endpoint, identity string) lease.Lease

// CheckRefusals checks, in a subtest per row, with a proxy of its own in
// front of upstream: Acquire of a free lease meeting the row's fault fails
// with lease.ErrUnavailable, retryable, saying row.Mention; once the
// proxy passes everything, the lease shows no record (nothing was written)
// and Acquire wins.
func CheckRefusals(t *testing.T, upstream string, open Opener, rows []Refusal) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			p := Start(t, upstream)
			l := open(t, p.URL, "worker-1")
			p.Add(row.Rule)
			_, err := l.Acquire(t.Context())
			t.Logf("Acquire: %v", err)
			if !errors.Is(err, lease.ErrUnavailable) || !lease.Retryable(err) || !strings.Contains(err.Error(), row.Mention) {
				t.Errorf("Acquire meeting %s: %v, want lease.ErrUnavailable, retryable, saying %q", row.Name, err, row.Mention)
			}
			p.Clear()
			if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNoRecord) {
				t.Errorf("Observe after the failed Acquire: %v, want lease.ErrNoRecord (nothing written)", err)
			}
			if _, err := l.Acquire(t.Context()); err != nil {
				t.Errorf("Acquire once the store is well again: %v", err)
			}
		})
	}
}

// CheckLostAnswers checks, in a subtest per fault (the answer replaced by
// failed, the answer lost), with a proxy of its own in front of upstream:
// an Acquire and a Release whose write (a request write matches) the store
// applied, and whose answer failed, succeed, resolved by reading back.
func CheckLostAnswers(t *testing.T, upstream string, open Opener, write func(*http.Request) bool, failed Answer) {
	t.Helper()
	for _, row := range []struct {
		name  string
		fault Fault
	}{
		{"AppliedAnswerReplaced", Replace(failed)},
		{"AppliedAnswerLost", Lose()},
	} {
		t.Run(row.name, func(t *testing.T) {
			p := Start(t, upstream)
			l := open(t, p.URL, "worker-1")
			rule := p.Add(Rule{Match: write, Fault: row.fault, Times: 1})[0]
			term, err := l.Acquire(t.Context())
			if err != nil {
				t.Fatalf("Acquire whose write the store applied, then failed to answer: %v, want won (read back)", err)
			}
			again := p.Add(Rule{Match: write, Fault: row.fault, Times: 1})[0]
			if err := l.Release(t.Context(), term); err != nil {
				t.Fatalf("Release whose write the store applied, then failed to answer: %v; want released (read back)", err)
			}
			if r, err := l.Observe(t.Context()); err != nil || r.Holder != "worker-1" || r.Token != term.Token || !r.Released {
				t.Errorf("record %+v (%v), want worker-1's with token %d, released", r, err, term.Token)
			}
			if p.Applied(rule) != 1 || p.Applied(again) != 1 {
				t.Errorf("the faults were applied %d and %d times, want once each", p.Applied(rule), p.Applied(again))
			}
		})
	}
}
