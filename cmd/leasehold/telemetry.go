package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// newLogger returns the logger for --log-format and --log-level, writing to
// w (stderr, shared with the command's own).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// newRunLogger is newLogger for leasehold run, whose logs are written
// through a logSink to w: a log line never waits on stderr (see logSink).
// close writes out the lines still queued; call it before leasehold
// prints its last line and exits.
func newRunLogger(w io.Writer, format, level string) (log *slog.Logger, close func(), err error) {
	note := func(dropped int) []byte {
		var b bytes.Buffer
		if l, err := newLogger(&b, format, "warn"); err == nil {
			l.Warn("log lines dropped: stderr did not take them in time", "dropped", dropped)
		}
		return b.Bytes()
	}
	if _, err := newLogger(io.Discard, format, level); err != nil {
		return nil, nil, err
	}
	sink := newLogSink(w, note)
	log, _ = newLogger(sink, format, level)
	return log, sink.close, nil
}

// metrics are the Prometheus metrics of one leasehold process.
type metrics struct {
	registry      *prometheus.Registry
	isLeader      prometheus.Gauge
	transitions   *prometheus.CounterVec
	renewDuration prometheus.Histogram
	renewFailures *prometheus.CounterVec
	shards        *shardMetrics // with --shards (addShards)
}

// addQuorum adds, when l is a quorum lease, the metrics of its members:
// leasehold_quorum_member_failures_total, the renewals that a member did
// not take (while a majority did, the holder leads on: a minority's
// outage), and leasehold_quorum_members_held, how many members this
// instance's term holds (0 when it does not lead).
func (m *metrics) addQuorum(l lease.Lease) {
	q, ok := l.(interface{ Holds() []quorumlease.Hold })
	if !ok {
		return
	}
	help := "Renewals of a quorum lease that a member did not take (down, slow, partitioned, or held by another), by member; the holder leads on while a majority take them."
	for i, h := range q.Holds() {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "leasehold_quorum_member_failures_total",
			Help:        help,
			ConstLabels: prometheus.Labels{"member": h.Name},
		}, func() float64 { return float64(q.Holds()[i].Failures) }))
	}
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "leasehold_quorum_members_held",
		Help: "How many members of the quorum lease this instance's term holds; 0 when it does not lead.",
	}, func() float64 {
		n := 0
		for _, h := range q.Holds() {
			if h.Held {
				n++
			}
		}
		return float64(n)
	}))
}

// newMetrics returns the metrics of a process whose lease (or, with
// --shards, whose group) has TTL ttl.
func newMetrics(ttl time.Duration) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		isLeader: prometheus.NewGauge(isLeaderOpts),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leasehold_transitions_total",
			Help: "Leadership changes of this instance: reason is elected, or why a term ended (" + strings.Join(transitionLabels[1:], ", ") + ").",
		}, []string{"reason"}),
		renewDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "leasehold_renew_duration_seconds",
			Help:    "Duration of each renewal request to the store, retries included, successful or not.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		renewFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leasehold_renew_failures_total",
			Help: "Failed renewal requests, by reason: " + strings.Join(renewFailureLabels(), ", ") + ".",
		}, []string{"reason"}),
	}
	v := currentVersion()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "leasehold_build_info",
		Help:        "Always 1; the labels say which build of leasehold this is: version, commit, goversion.",
		ConstLabels: prometheus.Labels{"version": v.Version, "commit": v.Commit, "goversion": v.Go},
	})
	buildInfo.Set(1)
	// The alerting rules (deploy/prometheus) measure how long a lease has
	// gone without a leader against it, also after every instance stopped.
	ttlGauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "leasehold_ttl_seconds",
		Help: "The lease's TTL (--ttl), in seconds; with --shards, the group's.",
	})
	ttlGauge.Set(ttl.Seconds())
	m.registry.MustRegister(buildInfo, ttlGauge, m.isLeader, m.transitions, m.renewDuration, m.renewFailures,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every series exists from the start, at 0, so that a rate or an
	// alert on one finds it before its first event.
	for _, r := range transitionLabels {
		m.transitions.WithLabelValues(r)
	}
	for _, r := range renewFailureLabels() {
		m.renewFailures.WithLabelValues(r)
	}
	return m
}

// isLeaderOpts are leasehold_is_leader's, of one lease and of a shard
// group's assigner alike (see addShards).
var isLeaderOpts = prometheus.GaugeOpts{
	Name: "leasehold_is_leader",
	Help: "1 while this instance leads and its command runs, 0 otherwise (also while it steps down); with --shards, 1 while this worker is its group's assigner.",
}

// transitionLabels are the reasons of leasehold_transitions_total: elected,
// and each runner.Reason a term can end with.
var transitionLabels = func() []string {
	labels := []string{"elected"}
	for r := runner.TaskEnded; r <= runner.HandedOff; r++ {
		labels = append(labels, reasonLabel(r))
	}
	return labels
}()

// renewFailures are the kinds of renewal failure, as
// leasehold_renew_failures_total labels them, in the order failureReason
// tries them; any other failure is "other".
var renewFailures = []struct {
	err    error
	reason string
}{
	{lease.ErrLost, "lost"}, {context.DeadlineExceeded, "timeout"}, {lease.ErrUnavailable, "unavailable"},
	{lease.ErrNotFound, "not_found"}, {lease.ErrPermission, "permission"},
	{lease.ErrCorrupt, "corrupt"}, {lease.ErrInvalid, "invalid"},
}

// renewFailureLabels are the reasons of leasehold_renew_failures_total.
func renewFailureLabels() []string {
	var labels []string
	for _, f := range renewFailures {
		labels = append(labels, f.reason)
	}
	return append(labels, "other")
}

// renewed is the runner's OnRenew.
func (m *metrics) renewed(took time.Duration, err error) {
	m.renewDuration.Observe(took.Seconds())
	if err != nil {
		m.renewFailures.WithLabelValues(failureReason(err)).Inc()
	}
}

// failureReason is the label of a failed renewal.
func failureReason(err error) string {
	for _, r := range renewFailures {
		if errors.Is(err, r.err) {
			return r.reason
		}
	}
	return "other"
}

// reasonLabel is a demotion reason as a label value: "renew deadline
// passed" becomes renew_deadline_passed.
func reasonLabel(r runner.Reason) string {
	return strings.ReplaceAll(r.String(), " ", "_")
}

// leaderState is what /leader reports, and with --shards /shards.
type leaderState struct {
	mu      sync.Mutex
	leading bool
	token   uint64
	leader  string // the leader last observed
	m       *metrics
	// owned returns the shards this worker runs, and assigner the group's
	// assigner as it knows it, with --shards; nil otherwise.
	owned    func() []shard.Shard
	assigner func() shard.AssignerInfo
}

func (s *leaderState) setLeading(on bool, token uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leading, s.token = on, token
	if on {
		s.m.isLeader.Set(1)
	} else {
		s.m.isLeader.Set(0)
	}
}

func (s *leaderState) observed(identity string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leader = identity
}

func (s *leaderState) elected(lease.Term) {
	s.m.transitions.WithLabelValues("elected").Inc()
}

func (s *leaderState) demoted(d runner.Demotion) {
	s.setLeading(false, d.Token)
	s.m.transitions.WithLabelValues(reasonLabel(d.Reason)).Inc()
}

// handler serves /healthz (the process is alive), /leader (200 while this
// instance leads and its command runs, 503 otherwise; with --shards, see
// serveAssigner), with --shards /shards (see serveShards), and /metrics.
func (s *leaderState) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	if s.assigner != nil {
		mux.HandleFunc("GET /leader", s.serveAssigner)
	} else {
		mux.HandleFunc("GET /leader", s.serveLeader)
	}
	if s.owned != nil {
		mux.HandleFunc("GET /shards", s.serveShards)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.registry, promhttp.HandlerOpts{}))
	return mux
}

// serveLeader answers /leader: 200 while this instance leads and its
// command runs, 503 otherwise, naming the leader it last saw.
func (s *leaderState) serveLeader(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	leading, token, leader := s.leading, s.token, s.leader
	s.mu.Unlock()
	answerLeader(w, "leader", "not the leader", "last seen leader", leading, token, leader)
}

// answerLeader writes /leader's answer: 200 saying held and the token
// while self holds it, else 503 saying not, and who was last seen as
// lastSeen, if anyone.
func answerLeader(w http.ResponseWriter, held, not, lastSeen string, self bool, token uint64, last string) {
	if self {
		fmt.Fprintf(w, "%s (token %d)\n", held, token)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
	if last == "" {
		fmt.Fprintln(w, not)
	} else {
		fmt.Fprintf(w, "%s (%s: %s)\n", not, lastSeen, last)
	}
}

// serve listens on addr and serves s's handler until ctx ends. It returns
// once it listens, or with the error that kept it from listening.
func (s *leaderState) serve(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	paths := "/healthz, /leader and /metrics"
	if s.owned != nil {
		paths = "/healthz, /leader, /shards and /metrics"
	}
	log.Info("serving "+paths, "addr", ln.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("--listen server stopped", "err", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
	}, nil
}
