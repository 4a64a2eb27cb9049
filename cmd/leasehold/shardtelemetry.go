package main

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/shard"
)

// shardMetrics are the metrics of leasehold run --shards, beside the
// process's others.
type shardMetrics struct {
	events  *prometheus.CounterVec
	balance prometheus.Histogram
	granted prometheus.Counter
}

// shardEventLabels are the events of leasehold_shard_events_total.
var shardEventLabels = []shard.EventKind{shard.Assigned, shard.Revoked, shard.Lost, shard.Ended}

// addShards registers the shard metrics of a group of n shards; owned
// returns the shards this worker runs, assigner the group's assigner as it
// knows it. A worker leads as the group's assigner: leasehold_is_leader
// says whether it is the assigner, and leasehold_transitions_total, which
// nothing of a sharded run counts, is not exported.
func (m *metrics) addShards(n int, owned func() []shard.Shard, assigner func() shard.AssignerInfo) {
	s := &shardMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leasehold_shard_events_total",
			Help: "Shard changes on this worker: assigned (its command started), revoked (stopped to move, or on leaving), lost (stopped because this worker's liveness ended), ended (its command exited by itself).",
		}, []string{"event"}),
		balance: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leasehold_shard_balance_seconds",
			Help:    "Time the group took to balance after a change (a join, a leave, an expiry, a new assigner), measured by the group's assigner: only the assigner observes it.",
			Buckets: []float64{.5, 1, 2.5, 5, 10, 15, 20, 30, 45, 60, 90, 120, 300},
		}),
		granted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leasehold_shard_grants_total",
			Help: "Shards this worker, as the group's assigner, gave to a worker (each one start of a shard, with a new epoch).",
		}),
	}
	ownedGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "leasehold_shards_owned",
		Help: "Shards whose command runs on this worker.",
	}, func() float64 { return float64(len(owned())) })
	isAssigner := prometheus.NewGaugeFunc(isLeaderOpts, func() float64 {
		if assigner().Self {
			return 1
		}
		return 0
	})
	// With leasehold_shards_owned summed over the group's workers, the
	// alerting rules' count of the shards nobody runs.
	shards := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "leasehold_shards",
		Help: "Shards in the group (--shards; with --holders, its slots).",
	})
	shards.Set(float64(n))
	// In place of the lease's gauge, which nothing of a sharded run sets.
	m.registry.Unregister(m.isLeader)
	m.registry.Unregister(m.transitions)
	m.registry.MustRegister(s.events, s.balance, s.granted, ownedGauge, isAssigner, shards)
	for _, k := range shardEventLabels {
		s.events.WithLabelValues(k.String())
	}
	m.shards = s
}

// shardEvent is the worker's OnEvent.
func (m *metrics) shardEvent(e shard.Event) {
	m.shards.events.WithLabelValues(e.Kind.String()).Inc()
}

// settled is the worker's OnSettled.
func (m *metrics) settled(s shard.Settled) {
	m.shards.balance.Observe(s.Took.Seconds())
	m.shards.granted.Add(float64(s.Granted))
}

// serveAssigner answers /leader for a worker of a group: 200 while it is
// the group's assigner, 503 otherwise, naming the assigner it last saw.
func (s *leaderState) serveAssigner(w http.ResponseWriter, _ *http.Request) {
	a := s.assigner()
	answerLeader(w, "the group's assigner", "not the group's assigner", "last seen assigner", a.Self, a.Token, a.Identity)
}

// ownedShard is one shard in /shards' answer.
type ownedShard struct {
	Shard int    `json:"shard"`
	Epoch uint64 `json:"epoch"`
}

// serveShards answers /shards, /leader's counterpart for a worker of a
// group: 200 while it runs at least one shard's command, 503 while it runs
// none, with the shards and their epochs as JSON.
func (s *leaderState) serveShards(w http.ResponseWriter, _ *http.Request) {
	out := []ownedShard{}
	for _, sh := range s.owned() {
		out = append(out, ownedShard{sh.Index, sh.Epoch})
	}
	w.Header().Set("Content-Type", "application/json")
	if len(out) == 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	b, _ := json.Marshal(out) // plain fields always marshal
	fmt.Fprintf(w, "%s\n", b)
}
