//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestEndpoints(t *testing.T) {
	st := &leaderState{m: newMetrics(2500 * time.Millisecond)}
	h := st.handler()
	if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d, want 200", code)
	}
	st.observed("web-2")
	if code, body := get(t, h, "/leader"); code != http.StatusServiceUnavailable || !strings.Contains(body, "web-2") {
		t.Fatalf("/leader as a follower: %d %q, want 503 naming the leader", code, body)
	}
	st.elected(lease.Term{Token: 7})
	st.setLeading(true, 7)
	if code, body := get(t, h, "/leader"); code != http.StatusOK || !strings.Contains(body, "token 7") {
		t.Fatalf("/leader while leading: %d %q, want 200 with the token", code, body)
	}
	st.m.renewed(20*time.Millisecond, nil)
	st.m.renewed(time.Second, fmt.Errorf("x: %w", lease.ErrUnavailable))
	st.m.renewed(time.Second, fmt.Errorf("x: %w", lease.ErrLost))
	st.demoted(runner.Demotion{Reason: runner.DeadlinePassed, Token: 7})
	if code, _ := get(t, h, "/leader"); code != http.StatusServiceUnavailable {
		t.Fatalf("/leader after the demotion: %d, want 503", code)
	}
	_, metrics := get(t, h, "/metrics")
	for _, want := range []string{
		"leasehold_is_leader 0",
		`leasehold_transitions_total{reason="elected"} 1`,
		`leasehold_transitions_total{reason="renew_deadline_passed"} 1`,
		`leasehold_transitions_total{reason="lease_lost"} 0`,
		"leasehold_renew_duration_seconds_count 3",
		`leasehold_renew_failures_total{reason="unavailable"} 1`,
		`leasehold_renew_failures_total{reason="lost"} 1`,
		"leasehold_ttl_seconds 2.5",
		"go_goroutines",
		`leasehold_build_info{commit="`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestFreshLeaderHasEverySeries: a leader that has not yet failed a
// renewal nor stepped down serves every series of
// leasehold_transitions_total and leasehold_renew_failures_total at 0, so
// that an alert on an increase finds them on a healthy leader; and each
// runner.Reason has its series.
func TestFreshLeaderHasEverySeries(t *testing.T) {
	st := &leaderState{m: newMetrics(15 * time.Second)}
	st.elected(lease.Term{Token: 1})
	st.setLeading(true, 1)
	st.m.renewed(time.Millisecond, nil)
	_, metrics := get(t, st.handler(), "/metrics")
	for _, r := range []string{"lost", "unavailable", "timeout", "not_found", "permission", "corrupt", "invalid", "other"} {
		if want := `leasehold_renew_failures_total{reason="` + r + `"} 0`; !strings.Contains(metrics, want) {
			t.Errorf("/metrics of a fresh leader lacks %q", want)
		}
	}
	for r := runner.TaskEnded; r <= runner.HandedOff; r++ {
		if want := `leasehold_transitions_total{reason="` + reasonLabel(r) + `"} 0`; !strings.Contains(metrics, want) {
			t.Errorf("/metrics of a fresh leader lacks %q", want)
		}
	}
	if r := runner.HandedOff + 1; !strings.HasPrefix(r.String(), "Reason(") {
		t.Errorf("runner.Reason %d (%s) is past runner.HandedOff: leasehold_transitions_total has no series for it", r, r)
	}
}

func TestFailureReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("a: %w", lease.ErrLost), "lost"},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("%w: no answer within CallTimeout: %w", lease.ErrUnavailable, context.DeadlineExceeded), "timeout"},
		{lease.ErrUnavailable, "unavailable"},
		{lease.ErrPermission, "permission"},
		{lease.ErrCorrupt, "corrupt"},
		{errors.New("?"), "other"},
	} {
		if got := failureReason(tc.err); got != tc.want {
			t.Errorf("failureReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestQuorumMemberFailures: with a quorum lease, /metrics counts by member
// the renewals a member did not take while the holder led on (a
// minority's outage: a metric, not a loss of leadership), from 0 for
// every member, and says how many members the term holds.
func TestQuorumMemberFailures(t *testing.T) {
	stores := []*memlease.Store{memlease.NewStore(), memlease.NewStore(), memlease.NewStore()}
	var members []lease.Lease
	for _, s := range stores {
		l, err := s.Open("job", lease.Options{Identity: "a", TTL: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, l)
	}
	l, err := quorumlease.New(members, []string{"mem://one", "mem://two", "mem://three"})
	if err != nil {
		t.Fatal(err)
	}
	st := &leaderState{m: newMetrics(15 * time.Second)}
	st.m.addQuorum(l)
	_, metrics := get(t, st.handler(), "/metrics")
	for _, want := range []string{`leasehold_quorum_member_failures_total{member="member 2 (mem://two)"} 0`, "leasehold_quorum_members_held 0"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics before the first term lacks %q", want)
		}
	}
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stores[1].Partition("a")
	for range 2 {
		term, err = l.Renew(t.Context(), term)
		st.m.renewed(time.Millisecond, err)
		if err != nil {
			t.Fatalf("renew with member 2 cut off: %v", err)
		}
	}
	// A member's call that outlives its renewal counts when it returns.
	want := `leasehold_quorum_member_failures_total{member="member 2 (mem://two)"} 2`
	eventually(t, 5*time.Second, "member 2's two failures counted", func() bool {
		_, metrics = get(t, st.handler(), "/metrics")
		return strings.Contains(metrics, want)
	})
	for _, want := range []string{
		`leasehold_quorum_member_failures_total{member="member 1 (mem://one)"} 0`,
		`leasehold_quorum_member_failures_total{member="member 3 (mem://three)"} 0`,
		"leasehold_quorum_members_held 3",
		`leasehold_renew_failures_total{reason="unavailable"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics after two renewals with member 2 cut off lacks %q", want)
		}
	}
}
