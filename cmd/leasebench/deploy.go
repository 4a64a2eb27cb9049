package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// deployInstances is how many instances a rolling deploy replaces.
const deployInstances = 5

// The Prefer of a deploy's old and new instances, with preference.
const (
	oldPrefer = "1"
	newPrefer = "2"
)

// deployOrder is how a rolling deploy replaces an instance: the new one
// started before the old one is stopped (as ECS and Kubernetes roll by
// default), or the old one stopped first.
type deployOrder bool

const (
	startFirst deployOrder = true
	stopFirst  deployOrder = false
)

var deployOrders = []deployOrder{startFirst, stopFirst}

func (o deployOrder) String() string {
	if o == startFirst {
		return "new started first"
	}
	return "old stopped first"
}

// deployRun is what one rolling deploy did to leadership.
type deployRun struct {
	// changes counts the terms that began after the first old instance's
	// election: leadership changes.
	changes int
	// gaps is each change's leaderless time, from the end of the latest
	// term's task to the start of the next one's (its Acquire returning);
	// handoffs those of the changes whose previous term was handed off.
	gaps, handoffs []time.Duration
	// lost counts terms that ended for another reason than their runner's
	// stop or a handoff (a renewal too slow on a loaded machine, say).
	lost int
	// overlaps counts terms that began before an earlier one had ended.
	overlaps int
}

// deployTrial runs one rolling deploy on a lease of its own on st:
// deployInstances old instances, each a runner at the defaults for st's
// TTL on a connection of its own (with preference, Prefer oldPrefer and
// Candidates beside the lease, as leasehold run --prefer opens them),
// once one of them leads, are replaced one at a time by new ones (Prefer
// newPrefer): the new one started, two TTLs later the old one stopped (its
// runner returns), a TTL later the next (startFirst); or the old one
// stopped, a TTL later the new one started, two TTLs later the next
// (stopFirst). It ends a TTL after a new instance leads.
func deployTrial(ctx context.Context, st *store, prefer bool, order deployOrder) (deployRun, error) {
	name := "deploy-" + randomHex(6)
	var all, olds, news []*contender
	defer func() {
		var wg sync.WaitGroup
		for _, c := range all {
			wg.Go(c.stop)
		}
		wg.Wait()
	}()
	start := func(who, p string) (*contender, error) {
		open, err := st.connect(st.endpoint)
		if err != nil {
			return nil, err
		}
		v := variant{}
		if prefer {
			v.prefer = p
		}
		_, c, err := v.contend(ctx, open, name, who, st.ttl)
		if err != nil {
			return nil, err
		}
		all = append(all, c)
		return c, nil
	}
	for i := range deployInstances {
		c, err := start(fmt.Sprintf("old-%d", i+1), oldPrefer)
		if err != nil {
			return deployRun{}, err
		}
		olds = append(olds, c)
	}
	// Not measured, and five runners starting at once each read every
	// TTL/20: a busy moto took more than 3 TTLs to answer them.
	if err := waitLeader(ctx, olds, 10*st.ttl, "an old instance's election"); err != nil {
		return deployRun{}, err
	}
	from := time.Now()
	for i := range deployInstances {
		if order == stopFirst {
			olds[i].stop()
			ctxtime.Sleep(ctx, st.ttl)
		}
		c, err := start(fmt.Sprintf("new-%d", i+1), newPrefer)
		if err != nil {
			return deployRun{}, err
		}
		news = append(news, c)
		ctxtime.Sleep(ctx, 2*st.ttl)
		if order == startFirst {
			olds[i].stop()
			ctxtime.Sleep(ctx, st.ttl)
		}
	}
	if err := waitLeader(ctx, news, 3*st.ttl, "a new instance's election"); err != nil {
		return deployRun{}, err
	}
	if ctxtime.Sleep(ctx, st.ttl); ctx.Err() != nil {
		return deployRun{}, ctx.Err()
	}
	return fareDeploy(all, from), nil
}

// waitLeader waits until one of cs leads, polling every TTL/20.
func waitLeader(ctx context.Context, cs []*contender, limit time.Duration, what string) error {
	deadline := time.Now().Add(limit)
	for !slices.ContainsFunc(cs, (*contender).leads) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not come within %v", what, limit)
		}
		ctxtime.Sleep(ctx, limit/60)
	}
	return nil
}

// leads reports whether c's task runs.
func (c *contender) leads() bool {
	ts := c.tenures()
	return len(ts) > 0 && ts[len(ts)-1].end.IsZero()
}

// fareDeploy is what the terms of cs did from from on: the terms that
// began after it, each one's leaderless time, and overlaps. A term
// overlaps an earlier one when it began (tenure.began) before that one
// ended (tenure.ended), whatever their times say: equal times, in a
// synctest bubble, do not order them.
func fareDeploy(cs []*contender, from time.Time) deployRun {
	var ts []tenure
	ended := map[uint64]runner.Demotion{}
	var run deployRun
	for _, c := range cs {
		ts = append(ts, c.tenures()...)
		for _, d := range c.demotions() {
			ended[d.Token] = d
			if d.Reason != runner.Stopped && d.Reason != runner.HandedOff {
				run.lost++
			}
		}
	}
	slices.SortFunc(ts, func(a, b tenure) int { return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.began, b.began)) })
	var ledUntil uint64 // the latest tenure.ended so far; the largest while one leads
	for _, t := range slices.SortedFunc(slices.Values(ts), func(a, b tenure) int { return cmp.Compare(a.began, b.began) }) {
		if t.began < ledUntil {
			run.overlaps++
		}
		ledUntil = max(ledUntil, cmp.Or(t.ended, math.MaxUint64))
	}
	var led time.Time // the latest end of a term so far; the far future while one leads
	forever := time.Unix(1<<40, 0)
	for i, t := range ts {
		if i > 0 && t.start.After(from) {
			run.changes++
			gap := max(0, t.start.Sub(led))
			run.gaps = append(run.gaps, gap)
			if ended[ts[i-1].token].Reason == runner.HandedOff {
				run.handoffs = append(run.handoffs, gap)
			}
		}
		end := cmp.Or(t.end, forever)
		if end.After(led) {
			led = end
		}
	}
	return run
}

// deployKey is one column of a store's deploys: with or without
// preference, in one order.
type deployKey struct {
	prefer bool
	order  deployOrder
}

// deployResult is one store's rolling deploys and requests.
type deployResult struct {
	st *store
	// handoff reports whether the store's leases can hand off
	// (lease.Handoffer): without, only the deploys without preference
	// run. asked: whether that is known (an open succeeded).
	handoff, asked bool
	runs           map[deployKey][]deployRun
	// rates are a leader's and a follower's requests per hour at the
	// default TTL, without preference ([0]) and with ([1]), both
	// contenders' Prefer the same.
	rates [2][2]map[string]float64
	mu    sync.Mutex
	errs  []string
}

func (r *deployResult) fail(what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf("%s: %s: %v", r.st.name, what, err))
	progress("%s: %s failed: %v", r.st.name, what, err)
}

// canHandOff reports whether st's leases are lease.Handoffers.
func canHandOff(ctx context.Context, st *store) (bool, error) {
	open, err := st.connect(st.endpoint)
	if err != nil {
		return false, err
	}
	l, err := openRetrying(ctx, open, "handoff-"+randomHex(6), lease.Options{Identity: "bench-handoff", TTL: st.ttl})
	if err != nil {
		return false, err
	}
	_, ok := l.(lease.Handoffer)
	return ok, nil
}

// benchDeploy runs trials rolling deploys of each column on st, parallel
// at a time, every column at once, and then counts a leader's and a
// follower's requests without and with preference for countFor, both at
// once.
func benchDeploy(ctx context.Context, st *store, trials, parallel int, countFor time.Duration) *deployResult {
	r := &deployResult{st: st, runs: map[deployKey][]deployRun{}}
	var err error
	if r.handoff, err = canHandOff(ctx, st); err != nil {
		r.fail("setup", err)
		return r
	}
	r.asked = true
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for _, order := range deployOrders {
		for _, prefer := range []bool{false, true} {
			if prefer && !r.handoff {
				continue
			}
			k := deployKey{prefer, order}
			progress("%s: %d rolling deploys, %s, preference %v (TTL %v)", st.name, trials, order, prefer, st.ttl)
			for range trials {
				wg.Go(func() {
					sem <- struct{}{}
					run, err := deployTrial(ctx, st, prefer, order)
					<-sem
					if err != nil {
						r.fail(fmt.Sprintf("deploy, %s, preference %v", order, prefer), err)
						return
					}
					r.mu.Lock()
					r.runs[k] = append(r.runs[k], run)
					r.mu.Unlock()
				})
			}
		}
	}
	wg.Wait()
	// The requests after the deploys: beside them, on a loaded machine,
	// the counted leader missed its renew deadline.
	for i, prefer := range []bool{false, true} {
		if prefer && !r.handoff {
			continue
		}
		wg.Go(func() {
			v := variant{}
			if prefer {
				v.prefer = oldPrefer
			}
			progress("%s: counting requests for %v, preference %v", st.name, countFor, prefer)
			leader, follower, _, err := requestRates(ctx, st, countFor, v)
			if err != nil {
				r.fail(fmt.Sprintf("requests, preference %v", prefer), err)
				return
			}
			r.mu.Lock()
			r.rates[i] = [2]map[string]float64{leader, follower}
			r.mu.Unlock()
		})
	}
	wg.Wait()
	return r
}

// deployMain sets up the stores of -backends and measures rolling deploys
// on each (-deploy), every store at once, stores that share a server one
// after the other.
func deployMain(ctx context.Context, c config) error {
	stores, notes, err := setupSingleStores(ctx, c, "rolling deploys over a quorum are not measured")
	defer cleanupStores(ctx, stores)
	if err != nil {
		return err
	}
	began := time.Now()
	results := make([]*deployResult, len(stores))
	lanes := map[string][]int{}
	var order []string
	for i, st := range stores {
		lane := cmp.Or(st.server, st.name)
		if lanes[lane] == nil {
			order = append(order, lane)
		}
		lanes[lane] = append(lanes[lane], i)
	}
	var wg sync.WaitGroup
	for _, lane := range order {
		wg.Go(func() {
			for _, i := range lanes[lane] {
				st := stores[i]
				parallel := c.parallel
				if st.parallel > 0 {
					// A deploy keeps five or six runners at once: about
					// three pairs.
					parallel = min(parallel, max(1, st.parallel/3))
				}
				results[i] = benchDeploy(ctx, st, c.deployTrials, parallel, c.countFor)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	printDeploy(os.Stdout, c, results, append(notes, fmt.Sprintf("took %v", time.Since(began).Round(time.Second))))
	return nil
}

// deployTables are the rolling deploys' table and the requests' table.
func deployTables(c config, results []*deployResult) (deploys, reqs *table, notes []string) {
	deploys = &table{
		title: fmt.Sprintf("Rolling deploy of %d instances, one at a time, without and with preference (runner defaults for the TTL; old instances Prefer %q, new %q; a new one started two TTLs before an old one is stopped, or an old one stopped a TTL before a new one starts; %d deploys each)",
			deployInstances, oldPrefer, newPrefer, c.deployTrials),
		header: []string{"backend", "TTL", "order", "leadership changes p50 / max, without", "with preference", "leaderless per change p50 / p99, without", "per handoff, with", "terms lost, without / with", "overlapping terms"},
	}
	reqs = &table{
		title:  "A follower's and the leader's requests per hour without and with preference (TTL 15s; both contenders' Prefer the same, so the follower does not announce itself; the leader reads Candidates once per renewal)",
		header: []string{"backend", "follower without", "follower with", "follower with ÷ without", "leader without", "leader with"},
	}
	for _, r := range results {
		for _, o := range deployOrders {
			without, with := r.runs[deployKey{false, o}], r.runs[deployKey{true, o}]
			row := []string{r.st.name, r.st.ttl.String(), o.String(), changesCell(without), changesCell(with),
				p50p99(gapsOf(without, false), ms), p50p99(gapsOf(with, true), ms),
				fmt.Sprintf("%d / %d", sumOf(without, func(d deployRun) int { return d.lost }), sumOf(with, func(d deployRun) int { return d.lost })),
				fmt.Sprint(sumOf(slices.Concat(without, with), func(d deployRun) int { return d.overlaps })),
			}
			if !r.handoff {
				row[4], row[6] = "–", "–"
				row[7] = fmt.Sprintf("%d / –", sumOf(without, func(d deployRun) int { return d.lost }))
			}
			deploys.rows = append(deploys.rows, row)
		}
		ratio := "–"
		if f0, f1 := total(r.rates[0][1]), total(r.rates[1][1]); f0 > 0 && f1 > 0 {
			ratio = fmt.Sprintf("%.2f", f1/f0)
		}
		reqs.rows = append(reqs.rows, []string{r.st.name, requests(r.rates[0][1]), requests(r.rates[1][1]), ratio, requests(r.rates[0][0]), requests(r.rates[1][0])})
		if r.asked && !r.handoff {
			notes = append(notes, fmt.Sprintf("%s: its leases cannot hand off (no lease.Handoffer), so runner.Config.Prefer is refused and only the deploys without preference ran", r.st.name))
		}
		notes = append(notes, r.errs...)
	}
	notes = append(notes,
		"leadership changes: terms begun after the first old instance's election, until a TTL after a new instance leads; leaderless: from the end of the latest term's task to the start of the next one's (its Acquire returning); a handoff's is from the old leader's task end, through its ReleaseTo, to the successor's Acquire",
		fmt.Sprintf("requests: a leader and a follower counted for %v by a counting proxy each (their Candidates' requests included), scaled from their TTL to 15s", c.countFor))
	return deploys, reqs, notes
}

// printDeploy prints the rolling deploys' tables.
func printDeploy(w io.Writer, c config, results []*deployResult, notes []string) {
	fmt.Fprintf(w, "leasebench -deploy, %s, %s\n\n", time.Now().Format("2006-01-02"), machine())
	deploys, reqs, more := deployTables(c, results)
	deploys.print(w, c.markdown)
	reqs.print(w, c.markdown)
	for _, n := range append(more, notes...) {
		if c.markdown {
			fmt.Fprintf(w, "- %s\n", n)
		} else {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// changesCell shows runs' leadership changes: p50 / max.
func changesCell(runs []deployRun) string {
	if len(runs) == 0 {
		return "–"
	}
	var n []int
	for _, r := range runs {
		n = append(n, r.changes)
	}
	return fmt.Sprintf("%d / %d", quantile(n, 0.5), slices.Max(n))
}

// gapsOf is runs' leaderless times: of every change, or of handoffs only.
func gapsOf(runs []deployRun, handoffs bool) []time.Duration {
	var out []time.Duration
	for _, r := range runs {
		if handoffs {
			out = append(out, r.handoffs...)
		} else {
			out = append(out, r.gaps...)
		}
	}
	return out
}

func sumOf(runs []deployRun, f func(deployRun) int) (n int) {
	for _, r := range runs {
		n += f(r)
	}
	return n
}
