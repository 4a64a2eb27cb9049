// Command leasebench measures leasehold on the local test stack and prints
// a table: per backend, acquire and renew latency; crash failover time as a
// ratio to the TTL; graceful handover time; store requests per hour for a
// leader and a follower at the defaults, and what they cost a month at list
// prices; and what holding 1,000 leases costs one process in memory and
// CPU. It also measures two peers on the same dynalite, in the same run,
// the npm package dynamodb-lock-client and the Go module
// cirello.io/dynamolock/v2 (at two settings), and prints them side by side
// with leasehold; and, on one backend (-curve), what crash failover each
// follower request budget buys, for leasehold's followers at four renew
// intervals and for the peers; and quorums of three stores beside their
// first member alone, with every member up and with one down, and across
// an outage of one store.
//
//	scripts/stack up; eval "$(scripts/stack env)"
//	go run ./cmd/leasebench                      # everything the stack offers, ~20 min
//	go run ./cmd/leasebench -backends mem,dynalite -trials 40 -markdown
//
// Backends whose variables scripts/stack env does not set are skipped with
// a note. How each figure is measured:
//
//   - Latency: one contender on one connection acquires a released lease
//     (a read and a conditional write on CAS stores), renews it and
//     releases it, -samples times; acquire and renew are timed.
//   - Crash failover: a holder and a follower, each a runner at the
//     defaults for -ttl (RenewInterval 3/8 of it, CampaignInterval TTL/3,
//     jitter 0.2) on a connection of its own, in this process. The
//     follower starts up to TTL/3 after the holder's election, at random,
//     so that its reads begin at a phase unrelated to the holder's
//     renewals, and the pair runs five TTLs and up to one more at random
//     (a dozen renew intervals) before the trial's event. Then the holder
//     crashes right after a successful renewal: from then on
//     its calls hang and send nothing, so it neither renews nor releases.
//     Failover is the time from that renewal's Sent to the follower's
//     successful Acquire returning, divided by the TTL. -trials trials, run
//     at once on leases of their own (-parallel), so Azure's 15s minimum
//     TTL costs no more wall time than the emulators' 2s.
//   - Crash failover, just-started follower: the same, but the crash is
//     armed at a random moment within TTL − RenewInterval of the
//     follower's start, so that the holder's last renewal comes within one
//     TTL of it, as when the follower that must take over was started by a
//     rolling deploy or a scale-out shortly before the holder died.
//   - Handover: the same pair, the same warm-up; then the holder's runner
//     is stopped and releases; from the Release call to the follower's
//     successful Acquire returning.
//   - Requests: a leader and a follower run, after the same warm-up, for
//     -count-for; each one's
//     requests are counted by a counting HTTP proxy in front of the store
//     (memlease counts its own calls), by operation, and scaled from -ttl
//     to the default TTL of 15s (every interval of the runner is a fixed
//     fraction of the TTL). Cost: those rates at list prices (internal/pricing),
//     for 730 hours a month.
//   - 1,000 leases: one process holds -leases leases at -resource-ttl
//     (default 15s, the default TTL) through one connection, a runner each;
//     once all are held, the process's CPU time (user + system) over
//     -resource-window (rounded up to whole renew intervals, as the
//     leases renew in rounds) is scaled to an hour, and the heap and goroutine
//     stacks in use after a GC are compared with those before.
//   - The peers: peer/peer.js runs dynamodb-lock-client's FailOpen lock with
//     leaseDurationMs = TTL and heartbeatPeriodMs = leasehold's renew
//     interval, one node process per contender; a crash is SIGKILL right
//     after a successful heartbeat. cirello.io/dynamolock/v2 runs in this
//     process, a client per contender, with lease duration = TTL, heartbeat
//     period = leasehold's renew interval and refresh period half of it
//     (leasehold's follower's read count); a crash makes its client's calls
//     hang right after a successful heartbeat. It is measured with the
//     library's AdditionalTimeToWaitForLock (scaled to TTL/2), and with an
//     hour of it, which fails over faster at the same request count (see
//     dynamolock.go). Both regimes, the same random start, warm-up, trials,
//     counting proxies and scaling as leasehold's.
//   - A follower's first requests: those it sends in its first two renew
//     intervals, counted with its rates, where a just-started follower's
//     learning of the holder's schedule shows.
//   - Quorums (lease/quorumlease): quorum-mem, of three memleases, and
//     quorum-emulators, of MinIO, dynalite and fake-gcs-server (each
//     member a bucket or table of its own; TTL the longest of its
//     members', 3s), are measured beside their member 1 alone, after the
//     stores' trials and the two at once: crash failover and handover as
//     above, and the first leader of 5 contenders started together (from
//     their runners' start to the first successful Acquire returning; one
//     trial at a time), column by column; requests as above, every column's at once (each
//     member's under its name);
//     with every member up, and with member 1 down from before the first
//     trial: refusing (its calls fail at once, as a stopped store's) and
//     hanging (until each call's timeout, as a partition's). Meanwhile, an
//     outage of member 1's store for -outage: three contenders of a lease
//     on that store alone and three of the quorum run for three TTLs, the
//     store refuses them for -outage, and they run three more; the table
//     shows the time within the outage that nobody led each, and the
//     terms led in it. A memory member is cut off by memlease's
//     Partition and Hang, for every contender that reaches it; an
//     emulator through a toxiproxy proxy (LEASEHOLD_TOXIPROXY_URL),
//     disabled or given a timeout toxic on its requests. The outage is
//     real time, so -outage defaults to a minute (the goal is
//     stated for five: -outage 5m; TestBenchQuorum runs five on a fake
//     clock).
//   - The curve: on -curve's backend, -curve-trials crash failovers and a
//     follower's requests counted for -curve-count-for, for leasehold's
//     runner at four renew intervals (written into the records; the
//     follower reads just after each renewal and once between; the renew
//     deadline leaves a sixteenth of the TTL), and the peers' figures from
//     above. (The polling follower of before 2026-11-24 is no longer
//     measured: polls further apart than the holder's renew interval never
//     count towards expiry under rule 2.) The npm peer's packages are
//     installed with npm ci into -peer-install (under the ignored .stack/),
//     outside the Go module.
//
// With -shards (say -shards 10,100,1000) or -shard-baseline it measures
// shard groups instead, and only them, for the numbers of shards the two
// list: on each backend (mem, minio, moto-s3, dynalite,
// moto-dynamodb, gcs, azurite), a group of -shard-workers in-process
// workers (shard.New) per number of shards, each worker on a connection
// of its own through a counting proxy, put through the -shard-scenarios.
// Once balanced, the group runs steadily for -shard-steady (steady), over
// which each worker's requests (scaled to TTL 15s) and the shard moves
// are counted; then -shard-trials times: a worker joins (time to balance)
// and the same worker leaves gracefully (time until its shards run
// elsewhere and the group is balanced) (join); a worker other than the
// assigner crashes right after a renewal (all its calls hang; time from
// that renewal's Sent until its shards run elsewhere) (crash); and the
// assigner crashes the same way (assigner); each with its moves against
// the fewest balance needs, a replacement joining after each crash. The
// KCL-style baseline (kcl.go) is measured the same way for
// -shard-baseline numbers of shards. With steady alone, the fleets of one
// store run at once.
//
// With -footprint it measures instead, and only, what the leasehold CLI
// costs the process it wraps, for two builds side by side: before
// (-footprint-before, a git revision, e979172 unless given) and after
// (-footprint-after, the work tree unless given), each built as
// scripts/release builds it for linux/amd64 (CGO_ENABLED=0, -trimpath,
// -ldflags '-s -w', a version stamped in) into a temporary directory, a
// revision from its git archive. On each store of -backends (by default
// mem, minio, dynalite, azurite, gcs), every leasehold process with an
// environment of PATH, an empty HOME and the store's variables only:
//
//   - binary size;
//   - leasehold version: its CPU time (user + system) from its rusage,
//     and its maximum RSS from a second run under GNU time (-f %M: a
//     process that Go starts reports this one's memory as its maximum
//     RSS, see maxRSS), the medians of -footprint-runs;
//   - run --once -- true, -footprint-runs times per build and store, the
//     builds alternating: the CPU time to the first store request, read
//     by a reverse proxy in front of the store when that request comes
//     (the client blocked on it), as the sum of the process's threads'
//     time on CPU in /proc/PID/task/*/schedstat (to the nanosecond, where
//     /proc/PID/stat counts 10 ms ticks); and the whole run's CPU time from
//     its rusage (memory has no store requests: only the latter);
//   - idle RSS: a leader, run --ttl (the store's shortest, as above)
//     --listen 127.0.0.1:PORT -- sleep 1000, and a follower of the same
//     lease (not on memory, which is per process), -footprint-idle after
//     the leader's /leader first answered 200; then /leader is checked
//     (200, 503), /metrics is scraped once, and VmRSS is read from
//     /proc/PID/status of leasehold, not of its command;
//   - renewing: a leader at the default TTL (15s; Azure's minimum is the
//     same), its CPU time (schedstat, as above) over -footprint-steady
//     rounded up to whole renew intervals, scaled to an hour.
//
// The short processes run first, one at a time; then the idle and
// renewing ones of every store and build at once, as they mostly sleep.
//
//	go run ./cmd/leasebench -footprint -footprint-after main -markdown
//
// With -deploy it measures instead, and only, rolling deploys with and
// without preference (runner.Config.Prefer and Candidates, as leasehold
// run --prefer opens them: the lease's name and ".candidates" in the same
// store), on each store of -backends (by default mem, minio, moto-s3,
// dynalite, moto-dynamodb, azurite, gcs; quorums are skipped), at -ttl
// as above:
//
//   - a rolling deploy: 5 runners at the defaults, each on a connection
//     of its own (Prefer "1" with preference), once one leads, are
//     replaced one at a time by new ones (Prefer "2"): a new one started,
//     two TTLs later an old one stopped, a TTL later the next; and, as a
//     second order, an old one stopped, a TTL later a new one started,
//     two TTLs later the next. -deploy-trials deploys per store, order and
//     preference, every column at once; the leadership changes of each
//     (terms begun after the first election, until a TTL after a new
//     instance leads), the leaderless time of each change (from the end of
//     the latest term's task to the start of the next one's) and of each
//     handoff, terms lost otherwise, and terms that overlapped;
//   - requests: a leader and a follower, both without preference and both
//     with Prefer "1" (the follower does not announce itself; the leader
//     reads Candidates once per renewal), counted as above for -count-for,
//     their Candidates' requests included.
//
// A store whose leases cannot hand off (no lease.Handoffer) has its Prefer
// refused by the runner: only the deploys without preference run, and the
// table shows "–" for the rest.
//
//	go run ./cmd/leasebench -deploy -deploy-trials 5 -markdown
//
// With -data FILE a run also writes the samples its figures draw (crash
// failovers and handovers; or the shard groups' times and requests per
// worker) to FILE as JSON, and
//
//	go run ./cmd/leasebench plot                 # -dir docs/figures
//
// draws docs/benchmarks.md's figures as SVG from every such file in -dir,
// without measuring: failover.svg, handover.svg, shards.svg, requests.svg.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/internal/pricing"
)

type config struct {
	backends       []string
	trials         int
	parallel       int
	ttl            time.Duration
	samples        int
	countFor       time.Duration
	resources      []string
	leases         int
	resourceTTL    time.Duration
	resourceWindow time.Duration
	peer           bool
	peerDir        string
	peerInstall    string
	markdown       bool
	curve          string
	curveTrials    int
	curveCountFor  time.Duration
	shards         []int
	shardBaseline  []int
	shardWorkers   int
	shardTrials    int
	shardSteady    time.Duration
	shardScenarios map[string]bool
	data           string
	outage         time.Duration
	footprint      footprintConfig
	deployTrials   int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "plot" {
		if err := plotMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "leasebench:", err)
			os.Exit(2)
		}
		return
	}
	var c config
	var backends, resourceStores string
	flag.StringVar(&backends, "backends", strings.Join(slices.Concat(storeNames, quorumNames), ","), "backends and quorums to measure, comma-separated")
	flag.IntVar(&c.trials, "trials", 20, "crash failover and handover trials per backend")
	flag.IntVar(&c.parallel, "parallel", 0, "trials run at once, each on a lease of its own (0: all)")
	flag.DurationVar(&c.ttl, "ttl", 2*time.Second, "TTL of the timing measurements (Azure: at least 15s, its shortest lease)")
	flag.IntVar(&c.samples, "samples", 200, "acquisitions and renewals timed per backend")
	flag.DurationVar(&c.countFor, "count-for", time.Minute, "how long a leader's and a follower's requests are counted")
	flag.StringVar(&resourceStores, "resources", "mem,dynalite", "backends on which one process holds -leases leases (empty: none)")
	flag.IntVar(&c.leases, "leases", 1000, "leases held by one process for the memory and CPU figures")
	flag.DurationVar(&c.resourceTTL, "resource-ttl", 15*time.Second, "TTL of the leases held for the memory and CPU figures")
	flag.DurationVar(&c.resourceWindow, "resource-window", 30*time.Second, "how long CPU time is measured for")
	flag.BoolVar(&c.peer, "peer", true, "also measure the peers (dynamodb-lock-client, dynamolock) on dynalite")
	flag.StringVar(&c.peerDir, "peer-dir", "cmd/leasebench/peer", "directory of peer.js and its package.json")
	flag.StringVar(&c.peerInstall, "peer-install", ".stack/leasebench-peer", "where npm installs the peer's packages")
	flag.BoolVar(&c.markdown, "markdown", false, "print markdown tables (for docs/benchmarks.md)")
	flag.StringVar(&c.data, "data", "", "also write the run's samples to this JSON file, from which leasebench plot draws the figures (docs/figures/leases.json, docs/figures/shards.json)")
	flag.StringVar(&c.curve, "curve", "dynalite", "backend of the cost/failover curve (empty: none)")
	flag.DurationVar(&c.outage, "outage", time.Minute, "how long a quorum's member 1's store is cut off to count the time nobody leads (0: not measured; issue 36 states its goal for 5m)")
	flag.IntVar(&c.curveTrials, "curve-trials", 20, "crash failover trials per point of the curve")
	flag.DurationVar(&c.curveCountFor, "curve-count-for", 30*time.Second, "how long a follower's requests are counted per point of the curve")
	footprint := flag.Bool("footprint", false, "measure only the footprint of two builds of the leasehold CLI, side by side: binary size, memory and CPU time (see -footprint-before)")
	flag.StringVar(&c.footprint.before, "footprint-before", "e979172", "-footprint: the git revision of the build before (empty: the work tree)")
	flag.StringVar(&c.footprint.after, "footprint-after", "", "-footprint: the git revision of the build after (empty: the work tree)")
	flag.DurationVar(&c.footprint.idle, "footprint-idle", 20*time.Second, "-footprint: how long the idle leader and follower run before their memory is read")
	flag.DurationVar(&c.footprint.steady, "footprint-steady", 30*time.Second, "-footprint: how long a leader's CPU time is measured at the default TTL (rounded up to whole renew intervals)")
	flag.IntVar(&c.footprint.runs, "footprint-runs", 5, "-footprint: runs of leasehold version and of run --once per build and store, whose medians are shown")
	deploy := flag.Bool("deploy", false, "measure only rolling deploys of 5 instances without and with preference (runner.Config.Prefer), and a follower's requests with it, on each store of -backends")
	flag.IntVar(&c.deployTrials, "deploy-trials", 5, "-deploy: rolling deploys per store, order and preference")
	var shards, shardBaseline, shardScenarios string
	flag.StringVar(&shards, "shards", "", "run only the shard scenarios, for these numbers of shards, comma-separated (\"10,100,1000\"; not given, and no -shard-baseline: the lease scenarios)")
	flag.StringVar(&shardBaseline, "shard-baseline", "10,100", "numbers of shards of the KCL-style baseline; given without -shards, only the baseline runs")
	flag.IntVar(&c.shardWorkers, "shard-workers", 4, "workers of a shard group before a trial's join")
	flag.IntVar(&c.shardTrials, "shard-trials", 5, "joins, leaves and crashes per shard group")
	flag.DurationVar(&c.shardSteady, "shard-steady", time.Minute, "steady run per shard group, over which requests and moves are counted (the issue's goal is stated for 30m)")
	flag.StringVar(&shardScenarios, "shard-scenarios", strings.Join(shardScenarioNames, ","), "shard scenarios to run, comma-separated: steady (requests and moves; alone, a store's fleets run at once), join (then the same worker leaves), crash, assigner (the assigner crashes)")
	flag.Parse()
	var err error
	if c.shards, err = splitInts(shards); err == nil {
		c.shardBaseline, err = splitInts(shardBaseline)
	}
	if err == nil {
		c.shardScenarios, err = parseScenarios(shardScenarios)
	}
	if err == nil && *footprint && c.footprint.runs <= 0 {
		err = fmt.Errorf("-footprint-runs %d: want at least 1", c.footprint.runs)
	}
	if err == nil && c.data != "" {
		// Found now, not after an hour of measuring.
		if _, serr := os.Stat(filepath.Dir(c.data)); serr != nil {
			err = fmt.Errorf("-data %s: %w", c.data, serr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leasebench:", err)
		os.Exit(2)
	}
	c.backends = splitList(backends)
	switch {
	case *footprint && !flagSet(flag.CommandLine, "backends"):
		c.backends = footprintStores
	case *deploy && !flagSet(flag.CommandLine, "backends"):
		c.backends = storeNames
	}
	if *deploy && c.deployTrials <= 0 {
		fmt.Fprintf(os.Stderr, "leasebench: -deploy-trials %d: want at least 1\n", c.deployTrials)
		os.Exit(2)
	}
	c.resources = splitList(resourceStores)
	if c.parallel <= 0 {
		c.parallel = c.trials
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *footprint {
		if err := footprintMain(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "leasebench:", err)
			os.Exit(1)
		}
		return
	}
	if *deploy {
		if err := deployMain(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "leasebench:", err)
			os.Exit(1)
		}
		return
	}
	if shardMode(flag.CommandLine) {
		if err := shardsMain(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "leasebench:", err)
			os.Exit(1)
		}
		return
	}
	rep, err := bench(ctx, c)
	if err == nil {
		rep.print(os.Stdout, c.markdown)
		err = writeData(c.data, rep.data)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leasebench:", err)
		os.Exit(1)
	}
}

// writeData writes a run's samples to path (-data), unless it is empty.
func writeData(path string, data func(args []string) *runData) error {
	if path == "" {
		return nil
	}
	return data(os.Args[1:]).write(path)
}

// shardMode reports whether -shards or -shard-baseline was given to fs: then
// only the shard scenarios run, for the fleets they list (-shards "" with
// -shard-baseline 1000 runs only the baseline at 1,000 shards).
func shardMode(fs *flag.FlagSet) bool {
	return flagSet(fs, "shards") || flagSet(fs, "shard-baseline")
}

// flagSet reports whether the flag called name was given to fs.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// splitInts parses a comma-separated list of positive numbers.
func splitInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a positive number of shards", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// setupSingleStores sets up the stores of c.backends at c.ttl, but for the
// quorums, with a note for each saying quorumWhy, and a note for each
// store not configured here. On an error, stores holds those set up so
// far, for cleanupStores.
func setupSingleStores(ctx context.Context, c config, quorumWhy string) (stores []*store, notes []string, err error) {
	for _, name := range c.backends {
		if _, ok := quorumMembers[name]; ok {
			notes = append(notes, name+": skipped: "+quorumWhy)
			continue
		}
		st, why, err := setupStore(ctx, name, c.ttl)
		if err != nil {
			return stores, notes, err
		}
		if st == nil {
			notes = append(notes, name+": skipped: "+why)
			continue
		}
		stores = append(stores, st)
	}
	return stores, notes, nil
}

// cleanupStores removes what setupStore made on each of stores, even once
// ctx has ended.
func cleanupStores(ctx context.Context, stores []*store) {
	for _, st := range stores {
		st.cleanup(context.WithoutCancel(ctx))
	}
}

// shardsMain sets up the stores and runs the shard scenarios (-shards).
func shardsMain(ctx context.Context, c config) error {
	stores, skipped, err := setupSingleStores(ctx, c, "shard groups over a quorum are not measured (leasehold run --shards does not take one yet)")
	defer cleanupStores(ctx, stores)
	if err != nil {
		return err
	}
	rep := benchShardsAll(ctx, c, stores)
	rep.notes = append(rep.notes, skipped...)
	rep.print(os.Stdout, c)
	if err := ctx.Err(); err != nil {
		return err
	}
	return writeData(c.data, rep.data)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "leasebench: "+format+"\n", args...)
}

// bench runs every measurement and returns the report.
func bench(ctx context.Context, c config) (*report, error) {
	rep := &report{config: c, began: time.Now()}
	var (
		stores  []*store
		quorums []*quorum
	)
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, st := range stores {
			st.cleanup(cctx)
		}
		for _, q := range quorums {
			q.cleanup(cctx)
		}
	}()
	for _, name := range c.backends {
		var (
			why string
			err error
		)
		if _, ok := quorumMembers[name]; ok {
			var q *quorum
			if q, why, err = setupQuorum(ctx, name, c.ttl); q != nil {
				quorums = append(quorums, q)
			}
		} else {
			var st *store
			if st, why, err = setupStore(ctx, name, c.ttl); st != nil {
				stores = append(stores, st)
			}
		}
		if err != nil {
			return nil, err
		}
		if why != "" {
			rep.notef("%s: skipped: %s (scripts/stack up; eval \"$(scripts/stack env)\")", name, why)
			progress("%s: skipped: %s", name, why)
		}
	}

	// Latency first, one store at a time, with nothing else running.
	for _, st := range stores {
		r := newResult(st)
		rep.results = append(rep.results, r)
		progress("%s: latency (%d acquisitions and renewals)", st.name, c.samples)
		var err error
		if r.acquire, r.renew, err = latencies(ctx, st, c.samples); err != nil {
			r.fail("latency", err)
		}
	}

	// Failover, handover and requests: every store at once, as they mostly
	// wait for TTLs; stores that share a server (moto's) one after the
	// other.
	var wg sync.WaitGroup
	lanes := map[string][]*result{}
	var order []string
	for _, r := range rep.results {
		st := r.st
		switch {
		case st.service == pricing.AzureBlob && st.ttl != c.ttl:
			rep.notef("%s: TTL %v, Azure's shortest lease, instead of -ttl %v", st.name, st.ttl, c.ttl)
		case st.service == pricing.GCS && st.ttl != c.ttl:
			rep.notef("%s: TTL %v, gcslease.MinTTL (about one write per second to an object), instead of -ttl %v", st.name, st.ttl, c.ttl)
		case st.server != "" && st.ttl != c.ttl:
			rep.notef("%s: TTL %v instead of -ttl %v, %d trials at a time, after %s's other store: %s", st.name, st.ttl, c.ttl, min(c.parallel, st.parallel), st.server, st.why)
		}
		lane := cmp.Or(st.server, st.name)
		if lanes[lane] == nil {
			order = append(order, lane)
		}
		lanes[lane] = append(lanes[lane], r)
	}
	for _, lane := range order {
		wg.Go(func() {
			for _, r := range lanes[lane] {
				measureStore(ctx, c, r, len(lanes[lane]) > 1)
			}
		})
	}
	wg.Wait()
	// The quorums after the stores, both at once: beside the stores'
	// trials, theirs on the same emulators slowed every one past its
	// renew deadline on a loaded machine.
	rep.quorums = make([]*quorumResult, len(quorums))
	for i, q := range quorums {
		wg.Go(func() { rep.quorums[i] = benchQuorum(ctx, c, q) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}

	if c.peer {
		if err := benchPeers(ctx, c, rep, stores); err != nil {
			return nil, err
		}
	}

	if c.curve != "" {
		i := slices.IndexFunc(stores, func(st *store) bool { return st.name == c.curve })
		if i < 0 {
			rep.notef("curve: skipped: %s is not measured in this run", c.curve)
		} else {
			rep.curveStore = stores[i].name
			rep.curve = benchCurve(ctx, stores[i], c.curveTrials, c.parallel, c.curveCountFor)
		}
	}

	for _, name := range c.resources {
		i := slices.IndexFunc(stores, func(st *store) bool { return st.name == name })
		if i < 0 {
			rep.notef("1,000 leases on %s: skipped: the backend is not measured in this run", name)
			continue
		}
		progress("%s: holding %d leases (TTL %v) for %v", name, c.leases, c.resourceTTL, c.resourceWindow)
		use, err := resources(ctx, stores[i], c.leases, c.resourceTTL, c.resourceWindow)
		if err != nil {
			rep.notef("%d leases on %s: %v", c.leases, name, err)
			continue
		}
		rep.resources = append(rep.resources, resourceRow{store: name, use: use})
	}
	rep.took = time.Since(rep.began)
	return rep, ctx.Err()
}

// measureStore measures crash failover in both regimes, handover and
// requests on r's store, the requests at the same time as the trials
// unless alone.
func measureStore(ctx context.Context, c config, r *result, alone bool) {
	if alone {
		measureTrials(ctx, c, r)
		countRequests(ctx, c, r)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { countRequests(ctx, c, r) })
	measureTrials(ctx, c, r)
	wg.Wait()
}

// measureTrials measures crash failover in both regimes and handover on
// r's store.
func measureTrials(ctx context.Context, c config, r *result) {
	st := r.st
	parallel := c.parallel
	if st.parallel > 0 {
		parallel = min(parallel, st.parallel)
	}
	for _, reg := range []regime{warmed, justStarted} {
		progress("%s: %d crash failovers, follower %s (TTL %v)", st.name, c.trials, reg, st.ttl)
		ds, void, err := trials(ctx, c.trials, parallel, func(ctx context.Context) (time.Duration, error) { return failoverTrial(ctx, st, variant{}, reg) })
		if err != nil {
			r.fail("failover, follower "+reg.String(), err)
		}
		r.failover[reg], r.failoverVoid[reg] = ds, void
	}
	progress("%s: %d handovers", st.name, c.trials)
	var err error
	if r.handover, r.handoverVoid, err = trials(ctx, c.trials, parallel, func(ctx context.Context) (time.Duration, error) { return handoverTrial(ctx, st, variant{}) }); err != nil {
		r.fail("handover", err)
	}
}

// countRequests counts a leader's and a follower's requests on r's store
// for -count-for.
func countRequests(ctx context.Context, c config, r *result) {
	progress("%s: counting requests for %v", r.st.name, c.countFor)
	var err error
	if r.leader, r.follower, r.startReads, err = requestRates(ctx, r.st, c.countFor, variant{}); err != nil {
		r.fail("requests", err)
	}
}

// benchPeers measures the peers on dynalite, next to leasehold's dynalite
// result: dynamodb-lock-client (npm, in node processes) and, at the same
// time, cirello.io/dynamolock/v2 (in this process) at each of its
// settings.
func benchPeers(ctx context.Context, c config, rep *report, stores []*store) error {
	i := slices.IndexFunc(stores, func(st *store) bool { return st.name == "dynalite" })
	if i < 0 {
		rep.notef("peers: skipped: dynalite is not measured in this run")
		return nil
	}
	st := stores[i]
	admin := dynamoClient(st.endpoint)
	var tables []string
	defer func() {
		for _, t := range tables {
			_, _ = admin.DeleteTable(context.WithoutCancel(ctx), deleteTable(t))
		}
	}()
	table := func(key string) (string, error) {
		t := "leasebench-peer-" + randomHex(4)
		if err := createTable(ctx, admin, t, key); err != nil {
			return "", fmt.Errorf("peer: %w", err)
		}
		tables = append(tables, t)
		return t, nil
	}

	var (
		npm *peerResult
		pc  peerConfig
	)
	setup, why, err := installPeer(c.peerDir, c.peerInstall)
	switch {
	case err != nil:
		return err
	case setup == nil:
		rep.notef("%s: skipped: %s", peerPackage, why)
	default:
		t, err := table("id")
		if err != nil {
			return err
		}
		pc = peerConfig{setup: setup, table: t, key: "id", ttl: st.ttl, endpoint: st.endpoint}
		npm = newPeerResult(peerPackage, setup.version, "FailOpen, lease duration TTL (its follower's cadence)")
		rep.peers = append(rep.peers, npm)
	}
	var dls []*peerResult
	dlc := make([]dlConfig, len(dynamolockSettings))
	for i, s := range dynamolockSettings {
		t, err := table("key")
		if err != nil {
			return err
		}
		dlc[i] = dlConfig{table: t, ttl: st.ttl, endpoint: st.endpoint, setting: s}
		p := newPeerResult("dynamolock", dynamolockVersion(), s.name+", refresh every R/2")
		dls = append(dls, p)
		rep.peers = append(rep.peers, p)
	}

	var wg sync.WaitGroup
	if npm != nil {
		// Node processes are heavier than runners: ten pairs at a time.
		wg.Go(func() {
			npm.measure(ctx, c, min(c.parallel, 10), peerTrials{
				failover: func(ctx context.Context, r regime) (time.Duration, error) { return peerFailoverTrial(ctx, pc, r) },
				handover: func(ctx context.Context) (time.Duration, error) { return peerHandoverTrial(ctx, pc) },
				requests: func(ctx context.Context) (map[string]float64, map[string]float64, int, error) {
					return peerRequestRates(ctx, pc, st.label, c.countFor)
				},
			})
		})
	}
	wg.Go(func() {
		for i, p := range dls {
			dc := dlc[i]
			p.measure(ctx, c, c.parallel, peerTrials{
				failover: func(ctx context.Context, r regime) (time.Duration, error) { return dlFailoverTrial(ctx, dc, r) },
				handover: func(ctx context.Context) (time.Duration, error) { return dlHandoverTrial(ctx, dc) },
				requests: func(ctx context.Context) (map[string]float64, map[string]float64, int, error) {
					return dlRequestRates(ctx, dc, st.label, c.countFor)
				},
			})
		}
	})
	wg.Wait()
	return ctx.Err()
}

// peerTrials are one peer's measurements.
type peerTrials struct {
	failover func(context.Context, regime) (time.Duration, error)
	handover func(context.Context) (time.Duration, error)
	requests func(context.Context) (leader, follower map[string]float64, startReads int, err error)
}

// measure runs a peer's trials, parallel at a time, and counts its
// requests.
func (p *peerResult) measure(ctx context.Context, c config, parallel int, t peerTrials) {
	var err error
	for _, reg := range []regime{warmed, justStarted} {
		progress("%s (%s): %d crash failovers, follower %s", p.name, p.setting, c.trials, reg)
		ds, void, err := trials(ctx, c.trials, parallel, func(ctx context.Context) (time.Duration, error) { return t.failover(ctx, reg) })
		if err != nil {
			p.fail("failover, follower "+reg.String(), err)
		}
		p.failover[reg], p.failoverVoid[reg] = ds, void
	}
	progress("%s (%s): %d handovers", p.name, p.setting, c.trials)
	if p.handover, p.handoverVoid, err = trials(ctx, c.trials, parallel, t.handover); err != nil {
		p.fail("handover", err)
	}
	progress("%s (%s): counting requests for %v", p.name, p.setting, c.countFor)
	if p.leader, p.follower, p.startReads, err = t.requests(ctx); err != nil {
		p.fail("requests", err)
	}
}
