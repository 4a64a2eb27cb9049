package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/shard"
)

// The alerting kit in deploy/ (docs/operations.md#alerts-and-runbooks): the
// rules that promtool unit-tests (scripts/test), and the Grafana dashboard
// built on their recorded series. These tests keep the three in step with
// the metrics and the runbooks.
const (
	rulesPath      = "../../deploy/prometheus/leasehold-rules.yml"
	dashboardPath  = "../../deploy/grafana/leasehold.json"
	operationsPath = "../../docs/operations.md"
	runbookURL     = "https://github.com/leasehold/leasehold/blob/main/docs/operations.md"
)

// rule is one recording or alerting rule of rulesPath.
type rule struct {
	Record      string            `yaml:"record"`
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Annotations map[string]string `yaml:"annotations"`
}

func readRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []rule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rulesPath, err)
	}
	var rules []rule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	return rules
}

// leaseholdSeries are the names in a PromQL expression that mention
// leasehold: its metrics (leasehold_...) and the rules' recorded series
// (job:leasehold_...:...).
var leaseholdSeries = regexp.MustCompile(`[a-zA-Z_:]*leasehold_[a-zA-Z0-9_:]*`)

// exportedNames are the series names leasehold run serves on /metrics,
// with or without --shards, a histogram's _bucket, _sum and _count
// included.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	sharded := newMetrics(time.Second)
	sharded.addShards(4, func() []shard.Shard { return nil }, func() shard.AssignerInfo { return shard.AssignerInfo{} })
	quorum := newMetrics(time.Second)
	q, err := lease.Open(t.Context(), "quorum:mem://rules-1,mem://rules-2,mem://rules-3", lease.Options{Identity: "rules", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	quorum.addQuorum(q)
	names := map[string]bool{}
	for _, m := range []*metrics{newMetrics(time.Second), sharded, quorum} {
		families, err := m.registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			names[f.GetName()] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					names[f.GetName()+s] = true
				}
			}
		}
	}
	return names
}

// TestRulesReadExportedMetrics: every leasehold metric the rules read is
// one leasehold run serves, and every recorded series a rule reads is
// recorded by a rule, so that a renamed metric cannot leave a rule reading
// nothing.
func TestRulesReadExportedMetrics(t *testing.T) {
	rules := readRules(t)
	exported := exportedNames(t)
	recorded := map[string]bool{}
	for _, r := range rules {
		if r.Record != "" {
			recorded[r.Record] = true
		}
	}
	for _, r := range rules {
		for _, name := range leaseholdSeries.FindAllString(r.Expr, -1) {
			if strings.Contains(name, ":") && !recorded[name] {
				t.Errorf("rule %s%s reads %s, which no rule records", r.Record, r.Alert, name)
			}
			if !strings.Contains(name, ":") && !exported[name] {
				t.Errorf("rule %s%s reads %s, which leasehold run does not serve", r.Record, r.Alert, name)
			}
		}
	}
	if len(recorded) == 0 {
		t.Fatalf("%s records nothing", rulesPath)
	}
}

// TestAlertsHaveRunbooks: every alert's runbook_url is its own section of
// docs/operations.md, a heading named for the alert.
func TestAlertsHaveRunbooks(t *testing.T) {
	ops, err := os.ReadFile(operationsPath)
	if err != nil {
		t.Fatal(err)
	}
	headings := strings.Split(string(ops), "\n")
	alerts := 0
	for _, r := range readRules(t) {
		if r.Alert == "" {
			continue
		}
		alerts++
		if want := runbookURL + "#" + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !slices.Contains(headings, "### "+r.Alert) {
			t.Errorf("alert %s: %s has no runbook heading \"### %s\"", r.Alert, operationsPath, r.Alert)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("alert %s: a summary and a description are needed", r.Alert)
		}
	}
	if alerts == 0 {
		t.Fatalf("%s has no alert", rulesPath)
	}
}

// dashboardQueries are the PromQL expressions of the dashboard: its
// panels' targets and its variables' queries.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardPath, err)
	}
	var queries []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					queries = append(queries, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(d)
	return queries
}

// TestDashboardReadsRecordedSeries: each panel of the dashboard reads the
// rules' recorded series, never a metric of its own, so that it shows what
// the alerts judge.
func TestDashboardReadsRecordedSeries(t *testing.T) {
	recorded := map[string]bool{}
	for _, r := range readRules(t) {
		recorded[r.Record] = r.Record != ""
	}
	queries := dashboardQueries(t)
	if len(queries) == 0 {
		t.Fatalf("%s has no query", dashboardPath)
	}
	for _, q := range queries {
		names := leaseholdSeries.FindAllString(q, -1)
		if len(names) == 0 {
			t.Errorf("dashboard query %q reads none of the rules' recorded series", q)
		}
		for _, name := range names {
			if !recorded[name] {
				t.Errorf("dashboard query %q reads %s, which is not a series %s records", q, name, rulesPath)
			}
		}
	}
}

// TestDashboardQueriesParse: promtool (beside the Prometheus server of
// scripts/stack) parses each of the dashboard's queries, its variables
// given a value.
func TestDashboardQueriesParse(t *testing.T) {
	bin := os.Getenv("LEASEHOLD_PROMETHEUS")
	if bin == "" {
		t.Skip(`dashboard queries: set LEASEHOLD_PROMETHEUS to a prometheus server binary with promtool beside it (scripts/stack up prometheus; eval "$(scripts/stack env)")`)
	}
	var sb strings.Builder
	sb.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range dashboardQueries(t) {
		// Grafana's label_values(SERIES, LABEL): SERIES is the PromQL.
		if strings.HasPrefix(q, "label_values(") {
			q = strings.TrimSuffix(strings.TrimPrefix(q, "label_values("), ", job)")
		}
		q = strings.ReplaceAll(q, "$job", ".+")
		fmt.Fprintf(&sb, "      - record: dashboard_query_%d\n        expr: %q\n", i, q)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool := filepath.Join(filepath.Dir(bin), "promtool")
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, sb.String())
	}
}
