//go:build unix

package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/shard"
)

// TestShardEndpointAndMetrics: /shards answers 503 while the worker runs
// no shard and 200 with its shards and epochs while it runs some; /leader
// and leasehold_is_leader say whether it is the group's assigner (they
// answered 503 and stayed 0 on every worker, the assigner's too), and
// leasehold_transitions_total, which nothing counts, is not exported;
// every series of leasehold_shard_events_total exists from the start, at
// 0; the owned gauge follows the worker, the group's shard count is there
// for the alerting rules, and a settling is observed.
func TestShardEndpointAndMetrics(t *testing.T) {
	var mu sync.Mutex
	var owned []shard.Shard
	var assigner shard.AssignerInfo
	st := &leaderState{m: newMetrics(15 * time.Second), owned: func() []shard.Shard {
		mu.Lock()
		defer mu.Unlock()
		return owned
	}, assigner: func() shard.AssignerInfo {
		mu.Lock()
		defer mu.Unlock()
		return assigner
	}}
	st.m.addShards(6, st.owned, st.assigner)
	h := st.handler()
	if code, body := get(t, h, "/shards"); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != "[]" {
		t.Fatalf("/shards owning none: %d %q, want 503 []", code, body)
	}
	if code, body := get(t, h, "/leader"); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != "not the group's assigner" {
		t.Errorf("/leader before any assigner was seen: %d %q", code, body)
	}
	_, metrics := get(t, h, "/metrics")
	for _, k := range shardEventLabels {
		if want := `leasehold_shard_events_total{event="` + k.String() + `"} 0`; !strings.Contains(metrics, want) {
			t.Errorf("/metrics of a fresh worker lacks %q", want)
		}
	}
	if !strings.Contains(metrics, "\nleasehold_is_leader 0\n") || strings.Contains(metrics, "leasehold_transitions_total") {
		t.Errorf("/metrics of a fresh worker: want leasehold_is_leader 0, and no leasehold_transitions_total:\n%s", metrics)
	}
	mu.Lock()
	assigner = shard.AssignerInfo{Identity: "b"}
	mu.Unlock()
	if code, body := get(t, h, "/leader"); code != http.StatusServiceUnavailable || strings.TrimSpace(body) != "not the group's assigner (last seen assigner: b)" {
		t.Errorf("/leader with b the assigner: %d %q", code, body)
	}
	mu.Lock()
	owned = []shard.Shard{{Index: 2, Epoch: 7}, {Index: 5, Epoch: 9}}
	assigner = shard.AssignerInfo{Self: true, Token: 12, Identity: "a"}
	mu.Unlock()
	if code, body := get(t, h, "/leader"); code != http.StatusOK || strings.TrimSpace(body) != "the group's assigner (token 12)" {
		t.Errorf("/leader on the assigner: %d %q", code, body)
	}
	st.m.shardEvent(shard.Event{Kind: shard.Assigned, Shard: owned[0]})
	st.m.shardEvent(shard.Event{Kind: shard.Revoked, Shard: shard.Shard{Index: 1, Epoch: 3}})
	st.m.settled(shard.Settled{Took: 3 * time.Second, Granted: 4})
	if code, body := get(t, h, "/shards"); code != http.StatusOK || strings.TrimSpace(body) != `[{"shard":2,"epoch":7},{"shard":5,"epoch":9}]` {
		t.Fatalf("/shards owning 2 and 5: %d %q", code, body)
	}
	_, metrics = get(t, h, "/metrics")
	for _, want := range []string{
		"leasehold_shards_owned 2",
		"\nleasehold_is_leader 1\n",
		"leasehold_shards 6",
		`leasehold_shard_events_total{event="assigned"} 1`,
		`leasehold_shard_events_total{event="revoked"} 1`,
		`leasehold_shard_balance_seconds_bucket{le="2.5"} 0`,
		`leasehold_shard_balance_seconds_bucket{le="5"} 1`,
		"leasehold_shard_grants_total 4",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, (&leaderState{m: newMetrics(15 * time.Second)}).handler(), "/shards"); code != http.StatusNotFound {
		t.Errorf("/shards without --shards: %d, want 404", code)
	}
}
