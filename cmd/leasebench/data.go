package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// The -data file: a run's raw samples, the ones the figures draw, as JSON,
// so that `leasebench plot` redraws the figures without measuring again.
// A run of the lease scenarios writes leases, a run of -shards shards.

// runData is one run's raw samples.
type runData struct {
	// Date is when the run began, UTC, and Machine what it ran on.
	Date    string `json:"date"`
	Machine string `json:"machine"`
	// Command is the run's arguments.
	Command []string    `json:"command"`
	Leases  []leaseData `json:"leases,omitempty"`
	Shards  []shardData `json:"shards,omitempty"`
}

// leaseData is one store's, or one peer's, crash failovers and handovers.
type leaseData struct {
	// Name is the store ("dynalite"), or the peer ("dynamolock") with its
	// Setting and Version.
	Name    string `json:"name"`
	Peer    bool   `json:"peer,omitempty"`
	Setting string `json:"setting,omitempty"`
	Version string `json:"version,omitempty"`
	TTL     dur    `json:"ttl"`
	// Warmed and JustStarted are the crash failovers with each regime of
	// the follower, Handover the handovers.
	Warmed      []dur `json:"failover_warmed"`
	JustStarted []dur `json:"failover_just_started"`
	Handover    []dur `json:"handover"`
}

// shardData is one fleet's times per event and its requests per worker.
type shardData struct {
	Store   string    `json:"store"`
	Fleet   fleetKind `json:"fleet"`
	Shards  int       `json:"shards"`
	Workers int       `json:"workers"`
	TTL     dur       `json:"ttl"`
	// Times are, per event ("join", "leave", "crash", "assigner"), the
	// times to balance (shardRun.times).
	Times map[string][]dur `json:"times,omitempty"`
	// PerWorker is the requests per worker per hour at TTL 15s, by
	// operation, over the steady run (none without one).
	PerWorker map[string]float64 `json:"per_worker_per_hour,omitempty"`
}

// dur is a duration written as Go writes one ("2.043s"), exactly.
type dur time.Duration

func (d dur) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *dur) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = dur(v)
	return err
}

func durs(ds []time.Duration) []dur {
	out := make([]dur, len(ds))
	for i, d := range ds {
		out[i] = dur(d)
	}
	return out
}

func newRunData(began time.Time, args []string) *runData {
	return &runData{Date: began.UTC().Format(time.RFC3339), Machine: machine(), Command: args}
}

// data is the report's samples.
func (rep *report) data(args []string) *runData {
	d := newRunData(rep.began, args)
	var peerTTL time.Duration
	for _, r := range rep.results {
		d.Leases = append(d.Leases, leaseData{Name: r.st.name, TTL: dur(r.st.ttl),
			Warmed: durs(r.failover[warmed]), JustStarted: durs(r.failover[justStarted]), Handover: durs(r.handover)})
		if r.st.name == "dynalite" {
			peerTTL = r.st.ttl
		}
	}
	for _, p := range rep.peers {
		d.Leases = append(d.Leases, leaseData{Name: p.name, Peer: true, Setting: p.setting, Version: p.version, TTL: dur(peerTTL),
			Warmed: durs(p.failover[warmed]), JustStarted: durs(p.failover[justStarted]), Handover: durs(p.handover)})
	}
	return d
}

// data is the report's samples.
func (rep *shardReport) data(args []string) *runData {
	d := newRunData(rep.began, args)
	for _, r := range rep.runs {
		times := map[string][]dur{}
		for e, ts := range r.times {
			times[e] = durs(ts)
		}
		d.Shards = append(d.Shards, shardData{Store: r.store, Fleet: r.kind, Shards: r.n, Workers: r.m, TTL: dur(r.ttl), Times: times, PerWorker: r.perWorker})
	}
	return d
}

// write writes d to path, indented, one sample a line.
func (d *runData) write(path string) error {
	b, err := json.MarshalIndent(d, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// readRunData reads a -data file and checks what the figures rely on.
func readRunData(path string) (*runData, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d runData
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := d.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &d, nil
}

func (d *runData) check() error {
	if _, err := time.Parse(time.RFC3339, d.Date); err != nil {
		return fmt.Errorf("date %q is not RFC 3339", d.Date)
	}
	for i, l := range d.Leases {
		switch {
		case l.Name == "":
			return fmt.Errorf("leases[%d]: name is empty", i)
		case l.TTL <= 0:
			return fmt.Errorf("leases[%d] (%s): ttl %v is not positive", i, l.Name, time.Duration(l.TTL))
		}
	}
	for i, s := range d.Shards {
		switch {
		case s.Fleet != shardFleet && s.Fleet != kclFleet:
			return fmt.Errorf("shards[%d] (%s): fleet %q is neither %q nor %q", i, s.Store, s.Fleet, shardFleet, kclFleet)
		case s.Shards <= 0:
			return fmt.Errorf("shards[%d] (%s %s): shards %d is not positive", i, s.Store, s.Fleet, s.Shards)
		case s.TTL <= 0:
			return fmt.Errorf("shards[%d] (%s %s, %d shards): ttl %v is not positive", i, s.Store, s.Fleet, s.Shards, time.Duration(s.TTL))
		}
		for e := range s.Times {
			if !slices.Contains(shardEvents, e) {
				return fmt.Errorf("shards[%d] (%s %s, %d shards): times: unknown event %q (known: %s)", i, s.Store, s.Fleet, s.Shards, e, strings.Join(shardEvents, ", "))
			}
		}
	}
	return nil
}
