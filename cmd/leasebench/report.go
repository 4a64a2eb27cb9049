package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/internal/pricing"
	"github.com/leasehold/leasehold/runner"
)

// result is one store's measurements.
type result struct {
	st             *store
	acquire, renew []time.Duration
	// failover is crash failover in each regime of the follower.
	failover     map[regime][]time.Duration
	failoverVoid map[regime]int
	handover     []time.Duration
	handoverVoid int
	leader       map[string]float64 // requests per hour at the default TTL, by operation
	follower     map[string]float64
	startReads   int // the follower's requests in its first startWindow renew intervals
	// firstLeader is the time to the first leader of contenders started
	// together (a quorum's table).
	firstLeader []time.Duration
	mu          sync.Mutex // guards errs: requests are counted beside the trials
	errs        []string
}

func newResult(st *store) *result {
	return &result{st: st, failover: map[regime][]time.Duration{}, failoverVoid: map[regime]int{}}
}

func (r *result) fail(what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", r.st.name, what, err))
	progress("%s: %s failed: %v", r.st.name, what, err)
}

// peerResult is one peer's measurements on dynalite, at one setting.
type peerResult struct {
	name, version, setting string
	failover               map[regime][]time.Duration
	failoverVoid           map[regime]int
	handover               []time.Duration
	handoverVoid           int
	leader, follower       map[string]float64
	startReads             int
	errs                   []string
}

func newPeerResult(name, version, setting string) *peerResult {
	return &peerResult{name: name, version: version, setting: setting, failover: map[regime][]time.Duration{}, failoverVoid: map[regime]int{}}
}

func (p *peerResult) fail(what string, err error) {
	p.errs = append(p.errs, fmt.Sprintf("%s (%s): %s: %v", p.name, p.setting, what, err))
	progress("%s (%s): %s failed: %v", p.name, p.setting, what, err)
}

type resourceRow struct {
	store string
	use   resourceUse
}

// report is everything leasebench prints.
type report struct {
	config
	began     time.Time
	took      time.Duration
	results   []*result
	quorums   []*quorumResult
	peers     []*peerResult
	resources []resourceRow
	// curve is the cost/failover curve on curveStore.
	curve      []curveRow
	curveStore string
	notes      []string
}

func (rep *report) notef(format string, args ...any) {
	rep.notes = append(rep.notes, fmt.Sprintf(format, args...))
}

func deleteTable(name string) *ddb.DeleteTableInput { return &ddb.DeleteTableInput{TableName: &name} }

// quantile returns the q-quantile of ds by nearest rank.
func quantile[T cmp.Ordered](ds []T, q float64) T {
	if len(ds) == 0 {
		var zero T
		return zero
	}
	s := slices.Sorted(slices.Values(ds))
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// ms shows d in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.3f ms", v)
}

func p50p99(ds []time.Duration, show func(time.Duration) string) string {
	if len(ds) == 0 {
		return "–"
	}
	return show(quantile(ds, 0.5)) + " / " + show(quantile(ds, 0.99))
}

// minP50P99 is p50p99 with the minimum first.
func minP50P99(ds []time.Duration, show func(time.Duration) string) string {
	if len(ds) == 0 {
		return "–"
	}
	return show(slices.Min(ds)) + " / " + p50p99(ds, show)
}

func ratioTo(ttl time.Duration) func(time.Duration) string {
	return func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()/ttl.Seconds()) }
}

// requests shows requests per hour: the total, then by operation.
func requests(perHour map[string]float64) string {
	if perHour == nil {
		return "–"
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(perHour)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", op, perHour[op]))
	}
	return fmt.Sprintf("%.0f (%s)", total(perHour), strings.Join(parts, ", "))
}

// table is rows of cells, printed aligned or as markdown.
type table struct {
	title  string
	header []string
	rows   [][]string
}

func (t *table) print(w io.Writer, markdown bool) {
	if markdown {
		fmt.Fprintf(w, "**%s**\n\n", t.title)
		fmt.Fprintf(w, "| %s |\n", strings.Join(t.header, " | "))
		fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(t.header)))
		for _, r := range t.rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "%s\n\n", t.title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func (rep *report) print(w io.Writer, markdown bool) {
	fmt.Fprintf(w, "leasebench, %s, %s\n\n", rep.began.Format("2006-01-02"), machine())

	timing := &table{
		title:  fmt.Sprintf("Latency, crash failover and graceful handover (runner defaults for the TTL; %d trials each)", rep.trials),
		header: []string{"backend", "TTL", "acquire p50 / p99", "renew p50 / p99", "failover ÷ TTL min / p50 / p99, warmed follower", "just-started follower", "handover p50 / p99"},
	}
	cost := &table{
		title:  "Store requests per hour and cost per month at the defaults (TTL 15s; renew every 5.625s, a follower's read just after each and one between, five on Azure, and at its start one every TTL/20 until it sees a renewal; on Azure a renewal is a lease renewal and a metadata write that shows it)",
		header: []string{"backend", "leader requests/h", "follower requests/h", "follower's first 2 renew intervals", "leader $/month", "follower $/month", "1 leader + 2 followers $/month"},
	}
	var errs []string
	for _, r := range rep.results {
		timing.rows = append(timing.rows, []string{
			r.st.name, r.st.ttl.String(), p50p99(r.acquire, ms), p50p99(r.renew, ms),
			minP50P99(r.failover[warmed], ratioTo(r.st.ttl)) + voidNote(r.failoverVoid[warmed]),
			minP50P99(r.failover[justStarted], ratioTo(r.st.ttl)) + voidNote(r.failoverVoid[justStarted]),
			p50p99(r.handover, ms) + voidNote(r.handoverVoid),
		})
		l, f := r.st.service.Monthly(r.leader), r.st.service.Monthly(r.follower)
		row := []string{r.st.name, requests(r.leader), requests(r.follower), fmt.Sprintf("%d requests", r.startReads), pricing.Dollars(l), pricing.Dollars(f), pricing.Dollars(l + 2*f)}
		if r.st.service == pricing.Memory {
			row[4], row[5], row[6] = "–", "–", "–"
		}
		cost.rows = append(cost.rows, row)
		errs = append(errs, r.errs...)
	}
	if len(rep.results) > 0 {
		timing.print(w, markdown)
		cost.print(w, markdown)
	}

	for _, qr := range rep.quorums {
		qr.table(rep.trials).print(w, markdown)
		rep.notes = append(rep.notes, qr.notes...)
		errs = append(errs, qr.errs...)
	}

	if len(rep.peers) > 0 {
		if t := rep.peerTable(); t != nil {
			t.print(w, markdown)
		}
		for _, p := range rep.peers {
			errs = append(errs, p.errs...)
			if v := p.failoverVoid[warmed] + p.failoverVoid[justStarted] + p.handoverVoid; v > 0 {
				rep.notef("%s (%s): %d trials void (the holder's heartbeat failed first, or the follower took over early), repeated", p.name, p.setting, v)
			}
		}
	}

	if len(rep.curve) > 0 {
		ttl := rep.curve[0].ttl
		curve := &table{
			title:  fmt.Sprintf("What failover each follower request budget buys (%s, TTL %v, followers started at random; requests at TTL 15s)", rep.curveStore, ttl),
			header: []string{"", "setting", "follower requests/h", "failover ÷ TTL p50", "p99"},
		}
		for _, r := range rep.curve {
			curve.rows = append(curve.rows, r.cells())
		}
		for _, p := range rep.peers {
			curve.rows = append(curve.rows, curveRow{who: p.name, setting: p.setting, follower: p.follower, failover: p.failover[warmed], ttl: ttl}.cells())
		}
		curve.print(w, markdown)
	}

	if len(rep.resources) > 0 {
		res := &table{
			title:  "One process holding many leases (a runner each, one connection, once all are held)",
			header: []string{"backend", "leases", "TTL", "heap in use", "per lease", "goroutine stacks", "goroutines", "CPU s per hour", "CPU per renewal", "renewals/s"},
		}
		for _, r := range rep.resources {
			u := r.use
			res.rows = append(res.rows, []string{
				r.store, fmt.Sprint(u.leases), u.ttl.String(),
				fmt.Sprintf("%.1f MiB", float64(u.heap)/(1<<20)), fmt.Sprintf("%.1f KiB", float64(u.heap)/1024/float64(u.leases)),
				fmt.Sprintf("%.1f MiB", float64(u.stacks)/(1<<20)), fmt.Sprint(u.goroutines), fmt.Sprintf("%.0f", u.cpuPerHour),
				fmt.Sprintf("%.0f µs", u.cpuPerHour/3600/u.renewals*1e6), fmt.Sprintf("%.0f", u.renewals),
			})
		}
		res.print(w, markdown)
	}

	notes := append([]string{
		fmt.Sprintf("failover: from the holder's last successful renewal's Sent to the follower's successful Acquire; handover: from the holder's Release call to the follower's successful Acquire; %d trials at a time", rep.parallel),
		fmt.Sprintf("requests: a leader and a follower counted for %v by a counting proxy each, scaled from their TTL to 15s", rep.countFor),
		"prices: " + pricing.Prices(),
	}, rep.notes...)
	for _, e := range errs {
		notes = append(notes, "FAILED: "+e)
	}
	notes = append(notes, fmt.Sprintf("took %v", rep.took.Round(time.Second)))
	for _, n := range notes {
		if markdown {
			fmt.Fprintf(w, "- %s\n", n)
		} else {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// peerTable is leasehold's dynalite figures beside every peer's, or nil
// when dynalite was not measured.
func (rep *report) peerTable() *table {
	i := slices.IndexFunc(rep.results, func(r *result) bool { return r.st.name == "dynalite" })
	if i < 0 {
		return nil
	}
	mine := rep.results[i]
	ttl := mine.st.ttl
	t := &table{
		title: fmt.Sprintf("leasehold and its peers on the same dynalite, in the same run: lease duration = TTL %v, heartbeat = renew interval %v; requests and cost at TTL 15s",
			ttl, runner.DefaultRenewInterval(ttl).Round(time.Millisecond)),
		header: []string{"", "leasehold (runner defaults)"},
	}
	type column struct {
		failover         map[regime][]time.Duration
		handover         []time.Duration
		leader, follower map[string]float64
		startReads       int
	}
	cols := []column{{mine.failover, mine.handover, mine.leader, mine.follower, mine.startReads}}
	for _, p := range rep.peers {
		t.header = append(t.header, fmt.Sprintf("%s %s (%s)", p.name, p.version, p.setting))
		cols = append(cols, column{p.failover, p.handover, p.leader, p.follower, p.startReads})
	}
	row := func(name string, cell func(column) string) {
		r := []string{name}
		for _, c := range cols {
			r = append(r, cell(c))
		}
		t.rows = append(t.rows, r)
	}
	for _, reg := range []regime{warmed, justStarted} {
		row("crash failover ÷ TTL min / p50 / p99, follower "+reg.String(), func(c column) string { return minP50P99(c.failover[reg], ratioTo(ttl)) })
	}
	row("handover p50 / p99", func(c column) string { return p50p99(c.handover, ms) })
	row("leader requests/h", func(c column) string { return requests(c.leader) })
	row("follower requests/h", func(c column) string { return requests(c.follower) })
	row("follower's requests in its first 2 renew intervals", func(c column) string { return fmt.Sprint(c.startReads) })
	row("leader $/month", func(c column) string { return pricing.Dollars(pricing.DynamoDB.Monthly(c.leader)) })
	row("follower $/month", func(c column) string { return pricing.Dollars(pricing.DynamoDB.Monthly(c.follower)) })
	return t
}

func voidNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d void, repeated)", n)
}

// machine describes the computer the figures were measured on.
func machine() string {
	cpu := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%s, %d CPUs%s, %s %s/%s", cpu, runtime.NumCPU(), mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
