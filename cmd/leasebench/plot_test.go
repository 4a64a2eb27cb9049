package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// svgTexts parses an SVG and returns its text elements, in order; it fails
// the test if the SVG is not well-formed XML with an svg root.
func svgTexts(t *testing.T, name string, b []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var texts []string
	root, inText := "", false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", name, root)
	}
	return texts
}

func seconds(vs ...float64) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

// TestPlotDrawsEverySeries writes the -data files of a lease run and a
// shard run, reads them back as written, and checks that every store, peer,
// fleet and regime is named on the figures drawn from them.
func TestPlotDrawsEverySeries(t *testing.T) {
	began := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	lease := func(name string, ttl time.Duration) *result {
		return &result{st: &store{name: name, ttl: ttl},
			failover: map[regime][]time.Duration{warmed: seconds(2.01, 2.05, 2.2), justStarted: seconds(2.0, 2.1)},
			handover: seconds(0.2, 0.35)}
	}
	peer := newPeerResult("dynamolock", "v2.1.0", "never gives up, refresh every R/2")
	peer.failover[warmed], peer.handover = seconds(2.5, 2.6), seconds(0.3)
	leases := &report{began: began, results: []*result{lease("dynalite", 2*time.Second), lease("mem", 2*time.Second)}, peers: []*peerResult{peer}}
	fleet := func(kind fleetKind, n int, perWorker float64) *shardRun {
		return &shardRun{store: "mem", kind: kind, n: n, m: 4, ttl: 2 * time.Second,
			times:     map[string][]time.Duration{"join": seconds(1, 1.5), "leave": seconds(0.7), scenarioCrash: seconds(2.2, 2.4)},
			perWorker: map[string]float64{"read": perWorker, "write": 640}}
	}
	shards := &shardReport{began: began.Add(time.Hour), runs: []*shardRun{
		fleet(shardFleet, 10, 2100), fleet(shardFleet, 100, 2110), fleet(kclFleet, 10, 7040), fleet(kclFleet, 100, 64640)}}
	shards.runs[0].times[scenarioAssigner] = seconds(1.9)

	dir := t.TempDir()
	for name, d := range map[string]*runData{"leases.json": leases.data([]string{"-backends", "mem,dynalite"}), "shards.json": shards.data([]string{"-shards", "10,100"})} {
		path := filepath.Join(dir, name)
		if err := d.write(path); err != nil {
			t.Fatal(err)
		}
		back, err := readRunData(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, d) {
			t.Errorf("%s read back as\n%+v\nwritten as\n%+v", name, back, d)
		}
	}
	figs, err := plotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"failover.svg": {"Crash failover ÷ TTL, box plots (leasebench 2026-12-06)", "mem", "dynalite", "dynamolock", "never gives up", "TTL 2s", "follower warmed", "follower just started", "one TTL, the wait before a takeover"},
		"handover.svg": {"mem", "dynalite", "dynamolock", "handover"},
		"shards.svg": {"a worker joins → balanced", "the same worker leaves → its shards running", "a worker crashes → its shards running",
			"the assigner crashes → its shards running", "mem, leasehold shard", "mem, KCL-style baseline"},
		"requests.svg": {"Requests per worker per hour at TTL 15s (leasebench -shards 2026-12-06)", "shards", "requests/h", "mem, leasehold shard", "mem, KCL-style baseline"},
	}
	if len(figs) != len(want) {
		t.Errorf("%d figures, want %d", len(figs), len(want))
	}
	for _, f := range figs {
		texts := svgTexts(t, f.name, f.svg)
		for _, w := range want[f.name] {
			if !slices.Contains(texts, w) {
				t.Errorf("%s: no text %q in %q", f.name, w, texts)
			}
		}
		// The stores in the tables' order, whatever the run's order.
		if i, j := slices.Index(texts, "mem"), slices.Index(texts, "dynalite"); j >= 0 && i > j {
			t.Errorf("%s: dynalite drawn before mem", f.name)
		}
	}
}

// TestPlotRefusesBadData checks that plot names the file and the field
// of a -data file it cannot draw, and does not draw from two runs of one
// store.
func TestPlotRefusesBadData(t *testing.T) {
	const (
		date   = `"date": "2026-12-06T09:00:00Z", "machine": "m", "command": []`
		leases = `{` + date + `, "leases": [{"name": "mem", "ttl": "2s", "failover_warmed": ["2.1s"], "failover_just_started": [], "handover": []}]}`
		shards = `{` + date + `, "shards": [{"store": "mem", "fleet": "shard", "shards": 10, "workers": 4, "ttl": "2s"}]}`
	)
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no files", map[string]string{}, "no -data files"},
		{"no shard run", map[string]string{"a.json": leases}, "no run of the shard scenarios"},
		{"no lease run", map[string]string{"b.json": shards}, "no run of the lease scenarios"},
		{"one store in two runs", map[string]string{"a.json": leases, "b.json": shards, "c.json": leases}, "c.json: mem is also in"},
		{"one fleet in two runs", map[string]string{"a.json": leases, "b.json": shards, "c.json": shards}, "c.json: mem, leasehold shard, 10 shards is also in"},
		{"unknown field", map[string]string{"a.json": strings.Replace(leases, "failover_warmed", "failover", 1), "b.json": shards}, `a.json: json: unknown field "failover"`},
		{"bad date", map[string]string{"a.json": strings.Replace(leases, "2026-12-06T09:00:00Z", "6 Dec", 1), "b.json": shards}, `a.json: date "6 Dec" is not RFC 3339`},
		{"no ttl", map[string]string{"a.json": strings.Replace(leases, `"2s"`, `"0s"`, 1), "b.json": shards}, "a.json: leases[0] (mem): ttl 0s is not positive"},
		{"bad sample", map[string]string{"a.json": strings.Replace(leases, `"2.1s"`, `"2.1"`, 1), "b.json": shards}, `a.json: time: missing unit in duration "2.1"`},
		{"unknown fleet", map[string]string{"a.json": leases, "b.json": strings.Replace(shards, `"fleet": "shard"`, `"fleet": "kinesis"`, 1)}, `b.json: shards[0] (mem): fleet "kinesis" is neither "shard" nor "kcl"`},
		{"no shards", map[string]string{"a.json": leases, "b.json": strings.Replace(shards, `"shards": 10`, `"shards": 0`, 1)}, "b.json: shards[0] (mem shard): shards 0 is not positive"},
		{"unknown event", map[string]string{"a.json": leases, "b.json": strings.Replace(shards, `"ttl": "2s"`, `"ttl": "2s", "times": {"rejoin": ["1s"]}`, 1)}, `times: unknown event "rejoin" (known: join, leave, crash, assigner)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := plotDir(dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("plotDir = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestFiguresUpToDate redraws docs/figures from its -data files and
// compares the result with the committed SVGs: a change of the data or of
// the drawing that was not followed by `go run ./cmd/leasebench plot`
// fails here.
func TestFiguresUpToDate(t *testing.T) {
	const dir = "../../docs/figures"
	figs, err := plotDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	drawn := map[string]bool{}
	for _, f := range figs {
		drawn[f.name] = true
		committed, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Errorf("%v (go run ./cmd/leasebench plot draws it)", err)
			continue
		}
		if !bytes.Equal(committed, f.svg) {
			t.Errorf("%s/%s differs from what its data draws: go run ./cmd/leasebench plot", dir, f.name)
		}
	}
	svgs, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range svgs {
		if !drawn[filepath.Base(p)] {
			t.Errorf("%s is not drawn by leasebench plot: remove it", p)
		}
	}
}
