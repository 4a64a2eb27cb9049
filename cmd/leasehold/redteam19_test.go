//go:build unix

package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam19QuorumMetricsSecretsAndRaces: a quorum's member metrics
// label each member with its URL redacted, so that a password in a
// member's endpoint never reaches /metrics; and
// /metrics scraped while terms are taken, renewed and released (the
// member that refuses every call counted) reads Holds under the Lease's
// lock (run with -race).
func TestRedTeam19QuorumMetricsSecretsAndRaces(t *testing.T) {
	const u = "quorum:mem://rt19-one,s3://rt19/job?region=us-east-1&endpoint=http://AKIA:pw-secret@127.0.0.1:1/,mem://rt19-three"
	l, err := lease.Open(t.Context(), u, lease.Options{Identity: "a", TTL: 15 * time.Second})
	if err != nil {
		t.Fatalf("open %s: %v", lease.RedactURL(u), err)
	}
	st := &leaderState{m: newMetrics(15 * time.Second)}
	st.m.addQuorum(l)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, metrics := get(t, st.handler(), "/metrics"); strings.Contains(metrics, "secret") {
				t.Errorf("/metrics holds a member's secret:\n%s", metrics)
				return
			}
		}
	})
	for range 3 {
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("acquire on members 1 and 3: %v", err)
		}
		term, err = l.Renew(t.Context(), term)
		st.m.renewed(time.Millisecond, err)
		if err != nil {
			t.Fatalf("renew on members 1 and 3: %v", err)
		}
		if err := l.Release(t.Context(), term); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	// Release waited for every call to the members: all three failures
	// are counted.
	_, metrics := get(t, st.handler(), "/metrics")
	if !strings.Contains(metrics, `leasehold_quorum_member_failures_total{member="member 2 (s3://rt19/job?region=us-east-1&endpoint=http://AKIA:xxxxx@127.0.0.1:1/)"} 3`) {
		t.Errorf("/metrics lacks member 2's three failures under its redacted URL:\n%s", metrics)
	}
}
