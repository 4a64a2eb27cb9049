package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/internal/pricing"
	"github.com/leasehold/leasehold/runner"
)

// result is one store's measurements.
type result struct {
	st                         *store
	acquire, renew             []time.Duration
	failover, handover         []time.Duration
	failoverVoid, handoverVoid int
	leader, follower           map[string]float64 // requests per hour at the default TTL, by operation
	errs                       []string
}

func (r *result) fail(what string, err error) {
	r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", r.st.name, what, err))
	progress("%s: %s failed: %v", r.st.name, what, err)
}

// peerResult is dynamodb-lock-client's measurements on dynalite.
type peerResult struct {
	version                    string
	failover, handover         []time.Duration
	failoverVoid, handoverVoid int
	leader, follower           map[string]float64
	errs                       []string
}

func (p *peerResult) fail(what string, err error) {
	p.errs = append(p.errs, fmt.Sprintf("peer: %s: %v", what, err))
	progress("peer: %s failed: %v", what, err)
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
	peer      *peerResult
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
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
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
	var total float64
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(perHour)) {
		total += perHour[op]
		parts = append(parts, fmt.Sprintf("%s %.0f", op, perHour[op]))
	}
	return fmt.Sprintf("%.0f (%s)", total, strings.Join(parts, ", "))
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
		header: []string{"backend", "TTL", "acquire p50 / p99", "renew p50 / p99", "failover ÷ TTL min / p50 / p99", "handover p50 / p99"},
	}
	cost := &table{
		title:  "Store requests per hour and cost per month at the defaults (TTL 15s; renew every 5.625s, a follower's reads just after each and once between; on Azure a renewal is a lease renewal and a metadata write that shows it)",
		header: []string{"backend", "leader requests/h", "follower requests/h", "leader $/month", "follower $/month", "1 leader + 2 followers $/month"},
	}
	var errs []string
	for _, r := range rep.results {
		timing.rows = append(timing.rows, []string{
			r.st.name, r.st.ttl.String(), p50p99(r.acquire, ms), p50p99(r.renew, ms),
			minP50P99(r.failover, ratioTo(r.st.ttl)) + voidNote(r.failoverVoid), p50p99(r.handover, ms) + voidNote(r.handoverVoid),
		})
		l, f := r.st.service.Monthly(r.leader), r.st.service.Monthly(r.follower)
		row := []string{r.st.name, requests(r.leader), requests(r.follower), pricing.Dollars(l), pricing.Dollars(f), pricing.Dollars(l + 2*f)}
		if r.st.service == pricing.Memory {
			row[3], row[4], row[5] = "–", "–", "–"
		}
		cost.rows = append(cost.rows, row)
		errs = append(errs, r.errs...)
	}
	timing.print(w, markdown)
	cost.print(w, markdown)

	if p := rep.peer; p != nil {
		var mine *result
		for _, r := range rep.results {
			if r.st.name == "dynalite" {
				mine = r
			}
		}
		ttl := mine.st.ttl
		peer := &table{
			title: fmt.Sprintf("leasehold and dynamodb-lock-client %s (FailOpen) on the same dynalite: lease duration = TTL %v, heartbeat = renew interval %v; requests and cost at TTL 15s",
				p.version, ttl, runner.DefaultRenewInterval(ttl).Round(time.Millisecond)),
			header: []string{"", "leasehold", "dynamodb-lock-client", "peer ÷ leasehold"},
		}
		q := func(ds []time.Duration, at float64) float64 { return quantile(ds, at).Seconds() }
		ratio := func(a, b float64) string {
			if a == 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f", b/a)
		}
		total := func(m map[string]float64) (t float64) {
			for _, v := range m {
				t += v
			}
			return t
		}
		for _, row := range []struct {
			name   string
			a, b   float64
			format func(float64) string
		}{
			{"crash failover ÷ TTL, min", minOf(mine.failover) / ttl.Seconds(), minOf(p.failover) / ttl.Seconds(), func(v float64) string { return fmt.Sprintf("%.2f", v) }},
			{"crash failover ÷ TTL, p50", q(mine.failover, .5) / ttl.Seconds(), q(p.failover, .5) / ttl.Seconds(), func(v float64) string { return fmt.Sprintf("%.2f", v) }},
			{"crash failover ÷ TTL, p99", q(mine.failover, .99) / ttl.Seconds(), q(p.failover, .99) / ttl.Seconds(), func(v float64) string { return fmt.Sprintf("%.2f", v) }},
			{"handover, p50", q(mine.handover, .5), q(p.handover, .5), seconds},
			{"handover, p99", q(mine.handover, .99), q(p.handover, .99), seconds},
			{"leader requests/h", total(mine.leader), total(p.leader), count},
			{"follower requests/h", total(mine.follower), total(p.follower), count},
			{"leader $/month", pricing.DynamoDB.Monthly(mine.leader), pricing.DynamoDB.Monthly(p.leader), pricing.Dollars},
			{"follower $/month", pricing.DynamoDB.Monthly(mine.follower), pricing.DynamoDB.Monthly(p.follower), pricing.Dollars},
		} {
			peer.rows = append(peer.rows, []string{row.name, row.format(row.a), row.format(row.b), ratio(row.a, row.b)})
		}
		peer.rows = append(peer.rows,
			[]string{"leader requests by operation", requests(mine.leader), requests(p.leader), ""},
			[]string{"follower requests by operation", requests(mine.follower), requests(p.follower), ""})
		peer.print(w, markdown)
		errs = append(errs, p.errs...)
		if p.failoverVoid+p.handoverVoid > 0 {
			rep.notef("peer: %d failover and %d handover trials void (the holder's heartbeat failed first), repeated", p.failoverVoid, p.handoverVoid)
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
		if p := rep.peer; p != nil {
			curve.rows = append(curve.rows, curveRow{who: "dynamodb-lock-client", setting: "lease duration TTL (its follower's cadence)", follower: p.follower, failover: p.failover, ttl: ttl}.cells())
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

func minOf(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	return slices.Min(ds).Seconds()
}

func voidNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d void, repeated)", n)
}

func seconds(v float64) string { return ms(time.Duration(v * float64(time.Second))) }
func count(v float64) string   { return fmt.Sprintf("%.0f", v) }

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
