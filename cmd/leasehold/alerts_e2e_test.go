//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// alertsTTL is the instances' TTL in TestAlertsOnPrometheus: the no-leader
// alert fires past twice it, so the test takes seconds.
const alertsTTL = 2 * time.Second

// TestAlertsOnPrometheus: the shipped rules (deploy/prometheus), loaded into
// a real Prometheus (Debian's package, from scripts/stack) that scrapes
// three leasehold run instances on MinIO every second. Once all three are
// killed, LeaseholdNoLeader fires through Prometheus's HTTP API, and it
// resolves when one instance comes back and leads.
func TestAlertsOnPrometheus(t *testing.T) {
	bin := os.Getenv("LEASEHOLD_PROMETHEUS")
	if bin == "" {
		t.Skip(`alerts on Prometheus: set LEASEHOLD_PROMETHEUS to a prometheus server binary (scripts/stack up prometheus; eval "$(scripts/stack env)")`)
	}
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	names := []string{"p1", "p2", "p3"}
	addrs := map[string]string{}
	var targets []string
	for _, n := range names {
		addrs[n] = freeAddr(t)
		targets = append(targets, addrs[n])
	}
	start := func(name string) *proc {
		return e.start(name, "run", "--lease", url, "--identity", name, "--ttl", alertsTTL.String(),
			"--listen", addrs[name], "--", e.script)
	}
	procs := map[string]*proc{}
	for _, n := range names {
		procs[n] = start(n)
	}
	prom := startPrometheus(t, bin, targets)

	// Generous limits: on a loaded machine Prometheus and MinIO answer late.
	const limit = 90 * time.Second
	prom.waitFor(limit, "Prometheus scrapes a leader, and LeaseholdNoLeader is not active", func() bool {
		return prom.has(`job:leasehold_is_leader:sum{job="leasehold"} == 1`) && prom.alert("LeaseholdNoLeader") == ""
	})

	killed := time.Now()
	for _, p := range procs {
		p.signal(syscall.SIGKILL)
	}
	for _, p := range procs {
		p.wait(t, 10*time.Second)
	}
	prom.waitFor(limit, "LeaseholdNoLeader fires once every instance is killed", func() bool {
		return prom.alert("LeaseholdNoLeader") == promv1.AlertStateFiring
	})
	fired := time.Now()
	t.Logf("LeaseholdNoLeader fired %v after the kill (TTL %v: past 2 TTL without a leader, scraped and evaluated every second)",
		fired.Sub(killed).Round(10*time.Millisecond), alertsTTL)

	start(names[0])
	prom.waitFor(limit, "LeaseholdNoLeader resolves once an instance is back and leads", func() bool {
		return prom.alert("LeaseholdNoLeader") == ""
	})
	t.Logf("LeaseholdNoLeader resolved %v after %s came back", time.Since(fired).Round(10*time.Millisecond), names[0])
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// promServer is a Prometheus server a test started, and its HTTP API.
type promServer struct {
	t   *testing.T
	api promv1.API
}

// startPrometheus starts the prometheus binary bin in a directory of its
// own, on a free loopback port, with the rules of deploy/prometheus, and
// scraping targets as job "leasehold" every second; it returns once the
// server is ready. It is stopped when the test ends.
func startPrometheus(t *testing.T, bin string, targets []string) *promServer {
	t.Helper()
	rules, err := filepath.Abs("../../deploy/prometheus/leasehold-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: leasehold
    static_configs:
      - targets: ["%s"]
`, rules, strings.Join(targets, `", "`))
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	logs := &syncBuffer{}
	cmd := exec.Command(bin, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("Prometheus's log:\n%s", logs)
		}
	})
	client, err := api.NewClient(api.Config{Address: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	p := &promServer{t: t, api: promv1.NewAPI(client)}
	p.waitFor(60*time.Second, "Prometheus answers with the leasehold rules loaded", func() bool {
		select {
		case <-done:
			t.Fatalf("%s exited: %v; its log:\n%s", bin, cmd.ProcessState, logs)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r, err := p.api.Rules(ctx, nil)
		return err == nil && len(r.Groups) > 0
	})
	return p
}

// waitFor asks cond of Prometheus every quarter of a second (it evaluates
// its rules every second) until it holds, and fails the test if it does not
// within limit.
func (p *promServer) waitFor(limit time.Duration, what string, cond func() bool) {
	p.t.Helper()
	eventually(p.t, limit, what, func() bool {
		time.Sleep(250 * time.Millisecond)
		return cond()
	})
}

// has says whether the PromQL query q returns a sample now.
func (p *promServer) has(q string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, _, _, err := p.api.Query(ctx, q, time.Now())
	if err != nil {
		p.t.Logf("query %s: %v", q, err)
		return false
	}
	vec, ok := v.(model.Vector)
	return ok && len(vec) > 0
}

// alert is the state of the alert called name for job "leasehold"
// (pending or firing), or "" when it is not active.
func (p *promServer) alert(name string) promv1.AlertState {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := p.api.Alerts(ctx)
	if err != nil {
		p.t.Logf("alerts: %v", err)
		return ""
	}
	for _, a := range r.Alerts {
		if a.Labels[model.AlertNameLabel] == model.LabelValue(name) && a.Labels["job"] == "leasehold" {
			return a.State
		}
	}
	return ""
}
