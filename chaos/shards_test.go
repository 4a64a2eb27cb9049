//go:build chaos

package chaos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/chaos"
)

// The sharded chaos run: shardMembers slots of leasehold run --shards
// shardCount, shardStarted of them running at first; joins and leaves keep
// from 2 to shardMembers running.
const (
	shardCount      = 6
	shardMembers    = 4
	shardStarted    = 3
	shardMinMembers = 2
	// holderCount is the slots of TestChaosHolders' leasehold run
	// --holders, over the same members: from 2 to 4 running, as many as
	// the slots or more, so that some wait.
	holderCount = 2
	// defaultShardDuration is each store's sharded run unless
	// LEASEHOLD_CHAOS_SHARDS_DURATION says otherwise (twice that on
	// Azurite), beside TestChaos's runs within their four minutes.
	defaultShardDuration = 60 * time.Second
)

// shardBackends are the stores of the sharded run: the CAS stores' main
// emulators and Azurite; dynalite needs a group table (dynamolease.Objects).
var shardBackends = map[string]func(*testing.T, string) (string, func(string) (string, []string), rawStore){
	"minio": nil, "dynalite": prepareDynamoGroup, "azurite": nil, "gcs": nil,
}

// shardPrepare returns how to prepare b for a shard group, if it is one of
// shardBackends.
func shardPrepare(b backend) (func(*testing.T, string) (string, func(string) (string, []string), rawStore), bool) {
	prepare, ok := shardBackends[b.name]
	if prepare == nil {
		prepare = b.prepare
	}
	return prepare, ok
}

var shardFaults = []faultKind{killMember, stopMember, slowMember, hangMember, resetMember, partitionMember, slowStore, joinMember, leaveMember}

// TestChaosShards runs a group of leasehold run --shards 6 instances on
// MinIO, dynalite, Azurite and the GCS emulator, each instance behind a
// toxiproxy proxy of its own, whose commands (chaos/contender -child)
// record their shard, epoch (LEASEHOLD_TOKEN), start and end; it injects
// faults into random members, one at a time (kill -9 and a restart under
// the same identity, a job-control stop and continue, latency, a hang, a
// reset, a partition, latency for all) and changes the group (a member
// joins, a member leaves with SIGTERM), for LEASEHOLD_CHAOS_SHARDS_DURATION
// (60s by default, twice that on Azurite). Then it waits for the group to
// settle: leasehold status --shards -o json says balanced, and the
// commands running are the ones it lists; it fails if that takes ten times
// what chaos.ShardBounds allows a move. chaos.CheckShards checks the
// records: no two runs of a shard overlap, epochs increase per shard, and
// (a figure, or a failure with LEASEHOLD_CHAOS_STRICT=1) no shard runs
// nowhere for longer than chaos.ShardBounds allows, nor does the group
// take longer than that to settle.
//
// A job-control stop is SIGTSTP, not SIGSTOP: SIGSTOP cannot be caught, and
// sent to leasehold alone it leaves the commands running unrenewed, which
// no lease can make safe (leasehold help run says so).
func TestChaosShards(t *testing.T) { chaosGroup(t, shardCount, false) }

// TestChaosHolders is TestChaosShards for leasehold run --holders 2 (slots,
// at most one a member) over the same members and faults, from 2 to 4 of
// them running, so that one or two wait at times: chaos.CheckSlots checks
// CheckShards' records and, beside, that no member's leasehold runs two
// slots' commands at once, so that with no two runs of a slot at once no
// more than two commands ever run. At the end, leasehold status --holders
// -o json must say balanced, with each slot's command running on the member
// it lists. It runs on MinIO and dynalite only (holderStores): the slots
// are the shard group's code on every store, which TestChaosShards runs
// on each, and the chaos stage's time in CI is shared by all its runs.
func TestChaosHolders(t *testing.T) { chaosGroup(t, holderCount, true) }

// holderStores are the stores TestChaosHolders runs on.
var holderStores = map[string]bool{"minio": true, "dynalite": true}

// chaosGroup is TestChaosShards for a group of n shards, or with holders
// of n slots (leasehold run --holders n).
func chaosGroup(t *testing.T, n int, holders bool) {
	t.Parallel()
	tp, bins, _ := setup(t)
	duration := durationVar(t, "LEASEHOLD_CHAOS_SHARDS_DURATION", defaultShardDuration)
	for _, b := range backends {
		prepare, ok := shardPrepare(b)
		if !ok || holders && !holderStores[b.name] {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			value := os.Getenv(b.variable)
			if value == "" {
				t.Skipf("chaos: %s is not configured: set %s (scripts/stack up; eval \"$(scripts/stack env)\")", b.name, b.variable)
			}
			d := duration
			if b.ttl > 10*time.Second {
				d *= 2 // a TTL of 15s: fewer faults fit in the time
			}
			upstream, contender, _ := prepare(t, value)
			c := newRun(t, tp, bins, leaseholdMode, b, upstream, contender, shardMembers)
			c.shards, c.holders = n, holders
			for _, s := range c.slots[:shardStarted] {
				c.start(s)
			}
			statusURL, statusEnv := contender(upstream) // straight at the store
			bounds := chaos.ShardBounds(b.ttl, b.ttl*3/8, b.ttl/5)
			c.runShards(d)
			settleBound := bounds.TTL + bounds.Retry + bounds.Slack
			settled, err := c.settle(statusURL, statusEnv, 10*settleBound)
			until := monotonic()
			c.stopAll()
			if c.deaths != nil {
				c.deaths.stop()
			}
			var ivs []chaos.Interval
			for _, s := range c.slots {
				for _, log := range s.logs {
					ivs = append(ivs, c.intervals(log, 0)...)
				}
			}
			check := chaos.CheckShards
			if holders {
				check = chaos.CheckSlots
			}
			res := check(ivs, n, c.faults, bounds, until)
			t.Logf("leasehold run --%s %d on %s, TTL %v, %v:\n%s\nbalanced at the end %v after the faults stopped (bound %v)",
				c.groupFlag(), n, b.name, b.ttl, d, res.Summary(c.faults), settled.Round(time.Millisecond), settleBound.Round(time.Millisecond))
			if len(ivs) == 0 {
				t.Errorf("%s: no shard ran (logs in %s)", b.name, c.dir)
			}
			if err != nil {
				t.Errorf("%s: not balanced at the end: %v (logs in %s)", b.name, err, c.dir)
			}
			verdict(t, b.name, "shards' records", c.dir, res.Safe(), res.OK() && settled <= settleBound)
		})
	}
}

// groupFlag is the flag of c's group: "shards", or "holders".
func (c *chaosRun) groupFlag() string {
	if c.holders {
		return "holders"
	}
	return "shards"
}

// runShards injects shardFaults into random members, with quiet spells
// between them, for d.
func (c *chaosRun) runShards(d time.Duration) {
	deadline := time.Now().Add(d)
	time.Sleep(c.between(1, 1.5)) // the first assignment
	for time.Now().Before(deadline) {
		var live, idle []*slot
		for _, s := range c.slots {
			if s.alive() {
				live = append(live, s)
			} else {
				idle = append(idle, s)
			}
		}
		kind := shardFaults[c.rng.IntN(len(shardFaults))]
		switch {
		case kind == joinMember && len(idle) == 0:
			kind = leaveMember
		case kind == leaveMember && len(live) <= shardMinMembers:
			kind = joinMember
		}
		switch kind {
		case joinMember:
			s := idle[c.rng.IntN(len(idle))]
			at := monotonic()
			c.start(s)
			c.faults = append(c.faults, chaos.Fault{Kind: string(kind), Target: s.id, Start: at, End: at})
		case leaveMember:
			s := live[c.rng.IntN(len(live))]
			at := monotonic()
			c.leave(s)
			c.faults = append(c.faults, chaos.Fault{Kind: string(kind), Target: s.id, Start: at, End: at})
		default:
			c.apply(kind, live[c.rng.IntN(len(live))])
		}
		time.Sleep(c.between(1, 2)) // the group settles
	}
}

// leave stops s with SIGTERM and waits for it to exit, killing it if it
// does not stop within two TTLs and ten seconds.
func (c *chaosRun) leave(s *slot) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(2*c.b.ttl + 10*time.Second):
		c.t.Errorf("%s: %s did not stop within %v of SIGTERM; killing it", c.b.name, s.id, 2*c.b.ttl+10*time.Second)
		c.kill(s)
	}
}

// settle waits up to bound for the group to be balanced, as leasehold
// status --shards (or --holders) -o json says, with every shard's command running on the
// member it lists and no other command running; it returns how long that
// took.
func (c *chaosRun) settle(leaseURL string, env []string, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	var last error
	for time.Since(start) < bound {
		if last = c.balanced(leaseURL, env); last == nil {
			return time.Since(start), nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(start), fmt.Errorf("after %v: %v", bound, last)
}

// groupStatus is the part of leasehold status --shards -o json read here.
type groupStatus struct {
	Balanced bool `json:"balanced"`
	Members  []struct {
		Identity string `json:"identity"`
		Live     bool   `json:"live"`
		Shards   []struct {
			Shard int    `json:"shard"`
			Epoch uint64 `json:"epoch"`
		} `json:"shards"`
	} `json:"members"`
	Meaning string `json:"meaning"`
}

// balanced returns nil if the group is balanced and its commands run as
// its status says: each shard's command on its owner, and none other.
func (c *chaosRun) balanced(leaseURL string, env []string) error {
	// Watched for a TTL: a member that left or crashed without releasing
	// its liveness (a release is not sent once its writes' answers came
	// too late, and the lease lapses instead) reads as live until a watch
	// shows its record unchanged for a TTL.
	cmd := exec.Command(c.bins.leasehold, "status", "--"+c.groupFlag(), strconv.Itoa(c.shards), "--lease", leaseURL, "--watch", c.b.ttl.String(), "-o", "json")
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("leasehold status: %v: %s", err, stderr.Bytes())
	}
	var st groupStatus
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		return fmt.Errorf("leasehold status -o json: %v: %s", err, stdout.Bytes())
	}
	if !st.Balanced {
		return fmt.Errorf("leasehold status: %s", st.Meaning)
	}
	type run struct {
		who   string
		epoch uint64
	}
	want, got := map[int]run{}, map[int][]run{}
	for _, m := range st.Members {
		for _, s := range m.Shards {
			if m.Live {
				want[s.Shard] = run{m.Identity, s.Epoch}
			}
		}
	}
	for _, s := range c.slots {
		if !s.alive() {
			continue
		}
		for _, iv := range intervalsRunning(s.log) {
			got[iv.Shard] = append(got[iv.Shard], run{s.id, iv.Token})
		}
	}
	// A shard that ran on through a new assigner's fence shows the fence's
	// epoch, above that of its command, which was not restarted.
	for shard := range c.shards {
		if w, g := want[shard], got[shard]; len(g) != 1 || g[0].who != w.who || g[0].epoch > w.epoch {
			return fmt.Errorf("shard %d: the status gives it to %s (epoch %d); running: %v", shard, w.who, w.epoch, g)
		}
	}
	return nil
}

// intervalsRunning returns the runs in log whose commands have not ended
// and are running (not stopped): their shards and epochs.
func intervalsRunning(log string) []chaos.Interval {
	open := map[int]chaos.Interval{}
	for _, line := range readLines(log) {
		r, err := parseRecord(line)
		if err != nil {
			continue // intervalsOf reports it
		}
		switch r.what {
		case "start":
			open[r.pid] = chaos.Interval{Token: r.token, Shard: r.shard}
		case "end":
			delete(open, r.pid)
		}
	}
	var ivs []chaos.Interval
	for _, pid := range slices.Sorted(maps.Keys(open)) {
		if st := procState(pid); st != 0 && st != 'Z' && st != 'X' && st != 'T' {
			ivs = append(ivs, open[pid])
		}
	}
	return ivs
}

// takenOver waits until a member other than stopped starts a shard whose
// command still runs on stopped, having started after since, or until
// limit has passed, and reports whether one did: how long the group takes
// depends on the machine's load, and the overlap the check must find is
// there only once it has.
func takenOver(slots []*slot, stopped *slot, since int64, limit time.Duration) bool {
	return eventuallyTrue(limit, func() bool {
		running := map[int]bool{}
		for _, iv := range intervalsRunning(stopped.log) {
			running[iv.Shard] = true
		}
		for _, o := range slots {
			if o == stopped {
				continue
			}
			for _, line := range readLines(o.log) {
				if r, err := parseRecord(line); err == nil && r.what == "start" && r.at > since && running[r.shard] {
					return true
				}
			}
		}
		return false
	})
}

// TestChaosShardsCatchesSIGSTOP shows that the sharded run's records and
// CheckShards find two runs of a shard at once when there are some: a
// member's leasehold alone is stopped with SIGSTOP, which it cannot catch,
// so its commands run on unrenewed while the group gives their shards to
// the others. Each stop lasts until another member has started one of the
// stopped member's shards (at most 30 TTLs); a member that runs no shard
// is not stopped, and the stops go round the members until as many
// takeovers as members were seen, or three rounds.
func TestChaosShardsCatchesSIGSTOP(t *testing.T) {
	t.Parallel()
	tp, bins, _ := setup(t)
	i := slices.IndexFunc(backends, func(b backend) bool {
		_, ok := shardPrepare(b)
		return ok && os.Getenv(b.variable) != "" && b.ttl < 10*time.Second
	})
	if i < 0 {
		t.Skip("chaos: no store with a short TTL is configured: set LEASEHOLD_DYNALITE_ENDPOINT or LEASEHOLD_MINIO_ENDPOINT (scripts/stack up; eval \"$(scripts/stack env)\")")
	}
	b := backends[i]
	prepare, _ := shardPrepare(b)
	upstream, contender, _ := prepare(t, os.Getenv(b.variable))
	c := newRun(t, tp, bins, leaseholdMode, b, upstream, contender, shardStarted)
	c.shards = shardCount
	for _, s := range c.slots {
		c.start(s)
	}
	time.Sleep(2 * b.ttl) // the first assignment
	takeovers := 0
	for i := 0; i < 3*len(c.slots) && takeovers < len(c.slots); i++ {
		s := c.slots[i%len(c.slots)]
		if !eventuallyTrue(10*b.ttl, func() bool { return len(intervalsRunning(s.log)) > 0 }) {
			continue // it runs no shard: stopping it shows nothing
		}
		f := chaos.Fault{Kind: "sigstop", Target: s.id, Start: monotonic()}
		_ = s.cmd.Process.Signal(syscall.SIGSTOP)
		if takenOver(c.slots, s, f.Start, 30*b.ttl) {
			takeovers++
		}
		_ = s.cmd.Process.Signal(syscall.SIGCONT)
		f.End = monotonic()
		c.faults = append(c.faults, f)
		time.Sleep(2 * b.ttl)
	}
	until := monotonic()
	c.stopAll()
	c.deaths.stop()
	var ivs []chaos.Interval
	for _, s := range c.slots {
		for _, log := range s.logs {
			ivs = append(ivs, c.intervals(log, 0)...)
		}
	}
	res := chaos.CheckShards(ivs, shardCount, c.faults, chaos.ShardBounds(b.ttl, b.ttl*3/8, b.ttl/5), until)
	t.Logf("%s, leasehold stopped with SIGSTOP until another member took a shard over:\n%s", b.name, res.Summary(c.faults))
	overlaps := 0
	for _, r := range res.Shards {
		overlaps += len(r.Overlaps)
	}
	if overlaps == 0 {
		t.Errorf("%s: no overlap found although stopped members' commands ran on; the records or the checker do not work (logs in %s)", b.name, c.dir)
	}
}
