//go:build chaos

package chaos_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"
	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/chaos"
	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/gcslease"
)

// defaultDuration is how long each backend's chaos runs unless
// LEASEHOLD_CHAOS_DURATION says otherwise: short enough for CI, with every
// backend at once.
const defaultDuration = 90 * time.Second

// contenders is how many contender processes compete for each lease.
const contenders = 3

// backend is one store the chaos test runs against.
type backend struct {
	name string
	// variable locates the store; the backend is skipped, naming it, when
	// it is not set.
	variable string
	ttl      time.Duration
	// prepare creates the bucket, table or container from the store's
	// address, and returns the upstream (host:port) for the proxies, a
	// function giving a contender's lease URL and environment, given its
	// proxy's address, and the lease object straight at the store, for
	// the restore fault (nil where the store judges the lease: Azure).
	prepare func(t *testing.T, value string) (upstream string, contender func(proxy string) (string, []string), raw rawStore)
	// storeJudged: the store, not the object, decides who holds the lease
	// (Azure's native blob lease); there is no restore fault.
	storeJudged bool
	// prefer are the modes whose contenders run with a preference
	// (runner.Config.Prefer, leasehold run --prefer), the deploy fault
	// among the faults: handoffs mixed into them.
	prefer []mode
	// http, if set, puts a fault proxy (internal/faultproxy) between each
	// contender and its toxiproxy proxy, and adds the HTTP faults to the
	// run: the service's answers under strain, and writes applied whose
	// answers are lost.
	http *httpFaults
}

// httpFaults are the HTTP-level faults of a backend's store.
type httpFaults struct {
	// throttled is the store's answer to a request rate it will not take.
	throttled faultproxy.Answer
	// write matches the store's writes; failed is the answer that may
	// replace one the store applied.
	write  func(*http.Request) bool
	failed faultproxy.Answer
}

var backends = []backend{
	{name: "minio", variable: "LEASEHOLD_MINIO_ENDPOINT", ttl: 2 * time.Second, prepare: func(t *testing.T, ep string) (string, func(string) (string, []string), rawStore) {
		return prepareS3(t, ep, os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), os.Getenv("LEASEHOLD_MINIO_SECRET_KEY"))
	}, http: &httpFaults{throttled: faultproxy.S3SlowDown, write: faultproxy.S3PutObject, failed: faultproxy.S3InternalError}, prefer: []mode{runnerMode, leaseholdMode}},
	// moto serves S3 and DynamoDB from one Python process, shared by the
	// runs beside this one, and its answers under CI's load are slow enough
	// to restart a follower's count (rule 2: a read returning more than R
	// after the previous one was sent): at TTL 2s a kill's failover overran
	// its bound by 1%, at 3s one came to 0.94 of it. At 4s a read may take
	// half a second, and the bound's slack grows with the TTL.
	{name: "moto-s3", variable: "LEASEHOLD_MOTO_ENDPOINT", ttl: 4 * time.Second, prepare: func(t *testing.T, ep string) (string, func(string) (string, []string), rawStore) {
		return prepareS3(t, ep, "chaos", "chaos")
	}},
	// leasehold run --prefer cannot open its candidates in a lease table
	// yet (cmd/leasehold's TestPreferOnADynamoDBLeaseTable, build tag
	// preferdynamoopen): the runner's contenders only.
	{name: "dynalite", variable: "LEASEHOLD_DYNALITE_ENDPOINT", ttl: 2 * time.Second, prepare: prepareDynamo, prefer: []mode{runnerMode}},
	{name: "moto-dynamodb", variable: "LEASEHOLD_MOTO_ENDPOINT", ttl: 4 * time.Second, prepare: prepareDynamo},
	{name: "azurite", variable: "LEASEHOLD_AZURITE_CONNECTION_STRING", ttl: 15 * time.Second, prepare: prepareAzure, storeJudged: true},
	// gcslease.MinTTL: Cloud Storage allows about one write per second to an object.
	{name: "gcs", variable: "STORAGE_EMULATOR_HOST", ttl: gcslease.MinTTL, prepare: prepareGCS},
}

// The contenders: a Go program on the runner (chaos/contender), or the
// leasehold command running chaos/contender -child as its command.
type mode string

const (
	runnerMode    mode = "runner"
	leaseholdMode mode = "leasehold"
)

// TestMain lets every backend's chaos run at once: they wait on TTLs and
// faults, not on the CPU, and go test's default -parallel (GOMAXPROCS)
// would run them a few at a time.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "32")
	}
	code := m.Run()
	if built.contender != "" {
		os.RemoveAll(filepath.Dir(built.contender))
	}
	os.Exit(code)
}

// TestChaos runs contenders on every backend of the stack, each behind a
// toxiproxy proxy of its own, injects faults for the chaos duration, and
// checks the leaders' records: no overlap, tokens increasing in time, no
// leaderless gap beyond the TTL, the retry period and the faults. It does
// so with each kind of contender in LEASEHOLD_CHAOS_CONTENDERS (default
// "runner,leasehold"): TestChaos/runner/minio, TestChaos/leasehold/minio.
// On MinIO, a fault proxy between each contender and its toxiproxy proxy
// adds HTTP faults: the leader throttled (503 SlowDown to every request),
// and the leader's writes applied with their answers lost or replaced by
// a 500 InternalError. On MinIO and dynalite (backend.prefer) the
// contenders run with a preference, and a deploy fault restarts a follower
// with a greater one, which the leader hands the lease to: handoffs among
// the kills, pauses and partitions (a killed leader of the greatest
// preference, restarted, is handed the lease back too); the run logs how
// many.
func TestChaos(t *testing.T) {
	t.Parallel()
	tp, bins, duration := setup(t)
	modes := []mode{runnerMode, leaseholdMode}
	if v := os.Getenv("LEASEHOLD_CHAOS_CONTENDERS"); v != "" {
		modes = nil
		for m := range strings.SplitSeq(v, ",") {
			if m := mode(strings.TrimSpace(m)); m == runnerMode || m == leaseholdMode {
				modes = append(modes, m)
			} else {
				t.Fatalf("LEASEHOLD_CHAOS_CONTENDERS=%q: want runner, leasehold or both", v)
			}
		}
	}
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			for _, b := range backends {
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
					upstream, contender, _ := b.prepare(t, value)
					kinds := faultsOf(b)
					var c *chaosRun
					if slices.Contains(b.prefer, m) {
						// Twice as likely as another fault: a few handoffs in a short run.
						kinds = append(kinds, deployFollower, deployFollower)
						c = newPreferring(t, tp, bins, m, b, upstream, contender)
					} else {
						c = newChaos(t, tp, bins, m, b, upstream, contender, 0)
					}
					c.run(d, kinds)
					res := c.check()
					t.Logf("%s contenders on %s, TTL %v, %v:\n%s", m, b.name, b.ttl, d, res.Summary(c.faults))
					if c.prefer {
						n := c.handoffs()
						t.Logf("%s contenders on %s: %d handoffs completed (the leader's ReleaseTo to a contender of a greater preference)", m, b.name, n)
						if n == 0 && strict() {
							t.Errorf("%s: no handoff in a run that began with a deploy, and LEASEHOLD_CHAOS_STRICT=1; logs in %s", b.name, c.dir)
						}
					}
					verdict(t, b.name, "leaders' records", c.dir, res.Safe(), res.OK())
				})
			}
		})
	}
}

// TestChaosCatchesUnsafeContenders shows that the checker finds overlaps
// when a safety rule is broken on purpose: the contenders run with
// -unsafe-renew-deadline 2.5 (RenewDeadline = 2.5 × TTL, beyond the TTL), and
// the leader is cut off from the store (its proxy disabled) three times,
// each time until another contender leads (at most 10 TTLs: how long that
// takes depends on the machine's load), so it keeps acting while another
// contender takes over. A follower takes over up to a renew interval and a
// TTL after the cut-off leader's last write was sent, and later on a loaded
// machine: at 1.5 × TTL, the cut-off leader had stepped down first in one
// loaded run (elected, cut off before its first renewal, demoted 3.0 s
// after its acquisition was sent; its successor came 3.5 s after it), and
// the check found nothing to find.
func TestChaosCatchesUnsafeContenders(t *testing.T) {
	t.Parallel()
	tp, bins, _ := setup(t)
	i := slices.IndexFunc(backends, func(b backend) bool { return os.Getenv(b.variable) != "" && b.ttl < 10*time.Second })
	if i < 0 {
		t.Skip("chaos: no backend with a short TTL is configured: set LEASEHOLD_DYNALITE_ENDPOINT or LEASEHOLD_MINIO_ENDPOINT (scripts/stack up; eval \"$(scripts/stack env)\")")
	}
	b := backends[i]
	upstream, contender, _ := b.prepare(t, os.Getenv(b.variable))
	c := newChaos(t, tp, bins, runnerMode, b, upstream, contender, 2.5)
	time.Sleep(c.between(1, 1.5)) // the first election
	for range 3 {
		c.partitionUntilTakeover(10 * b.ttl)
		time.Sleep(c.between(1, 2)) // a new leader settles in
	}
	c.stopAll()
	res := c.check()
	t.Logf("%s with RenewDeadline 2.5 × TTL:\n%s", b.name, res.Summary(c.faults))
	if len(res.Overlaps) == 0 {
		t.Errorf("%s: no overlap found although the contenders outlast their TTL when cut off; the checker or the faults do not work (logs in %s)", b.name, c.dir)
	}
}

// strict is LEASEHOLD_CHAOS_STRICT=1: the runs fail on a gap over its
// bound (a leaderless time, a shard running nowhere, a group balanced late)
// as on a safety rule broken. By default those are figures, printed: the
// bounds are real time, which a loaded machine stretches without a fault in
// the code, and the simulations assert them on a fake clock load cannot
// move.
func strict() bool { return os.Getenv("LEASEHOLD_CHAOS_STRICT") == "1" }

// verdict fails t when a run broke a safety rule, or broke a bound in
// strict mode, naming the logs; what it is asked is safe and ok, as
// Result.Safe and Result.OK say.
func verdict(t *testing.T, name, what, dir string, safe, ok bool) {
	t.Helper()
	switch {
	case !safe:
		t.Errorf("%s: the %s break a safety rule (above); logs in %s", name, what, dir)
	case !ok && strict():
		t.Errorf("%s: the %s break a liveness bound (above), and LEASEHOLD_CHAOS_STRICT=1; logs in %s", name, what, dir)
	case !ok:
		t.Logf("%s: over a liveness bound (above): a figure unless LEASEHOLD_CHAOS_STRICT=1; logs in %s", name, dir)
	}
}

// setup returns the toxiproxy client, the binaries and the chaos duration,
// or skips the test.
func setup(t *testing.T) (*toxiproxy, binaries, time.Duration) {
	t.Helper()
	if testing.Short() {
		t.Skip("chaos: skipped in -short mode")
	}
	tpURL := os.Getenv("LEASEHOLD_TOXIPROXY_URL")
	if tpURL == "" {
		t.Skip(`chaos: toxiproxy is not configured: set LEASEHOLD_TOXIPROXY_URL (scripts/stack up toxiproxy; eval "$(scripts/stack env)")`)
	}
	return newToxiproxy(tpURL), build(t), durationVar(t, "LEASEHOLD_CHAOS_DURATION", defaultDuration)
}

// durationVar returns the duration the variable name gives, or def if it
// is not set.
func durationVar(t *testing.T, name string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

// binaries are the programs the contenders run.
type binaries struct{ contender, leasehold string }

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

// build builds chaos/contender and cmd/leasehold once per test binary,
// with the race detector when this test has it.
func build(t *testing.T) binaries {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "leasehold-chaos-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built = binaries{contender: filepath.Join(dir, "contender"), leasehold: filepath.Join(dir, "leasehold")}
		for pkg, out := range map[string]string{"./contender": built.contender, "../cmd/leasehold": built.leasehold} {
			args := []string{"build", "-o", out}
			if raceEnabled {
				args = append(args, "-race")
			}
			if b, err := exec.Command("go", append(args, pkg)...).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// monotonic reads CLOCK_MONOTONIC in ns: the contenders' clock.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// faultKind is a fault the test can inject.
type faultKind string

const (
	killLeader      faultKind = "kill-leader"      // SIGKILL, restarted after 0.5-2 TTL
	slowLeader      faultKind = "latency-leader"   // responses delayed beyond the renew deadline
	hangLeader      faultKind = "hang-leader"      // requests or responses held (timeout toxic)
	resetLeader     faultKind = "reset-leader"     // every connection reset
	partitionLeader faultKind = "partition-leader" // the leader's proxy disabled: cut off alone
	slowStore       faultKind = "latency-all"      // every contender's responses delayed beyond the renew deadline
	// A follower's faults: it must neither take over a live lease when it
	// comes back, nor lose track of a takeover whose answer it never got.
	hangFollower      faultKind = "hang-follower"      // as hang-leader, on a follower
	partitionFollower faultKind = "partition-follower" // a follower's proxy disabled
	// A deploy, where contenders run with a preference (backend.prefer): a
	// follower stopped (SIGTERM) and started again with a preference
	// greater than every other contender's, which the leader then hands
	// the lease to.
	deployFollower faultKind = "deploy"
	// HTTP faults, on backends with a fault proxy (backend.http).
	throttleLeader faultKind = "throttle-leader"     // every request answered as throttled (503 SlowDown, ...)
	loseAnswers    faultKind = "lost-answers-leader" // every write applied, its answer lost or a 500
	// The restore fault, on CAS stores, in TestChaosRestore only: an
	// earlier write of the holder's term put back while the followers are
	// cut off (see there).
	restoreTerm faultKind = "restore"
	// A member's faults, in TestChaosShards: a random member of the group
	// (leasehold run --shards), whether it is the assigner, owns shards or
	// neither; and the group's own changes, a member joining and leaving.
	killMember      faultKind = "kill"      // SIGKILL, restarted under its identity after 0.5-2 TTL
	stopMember      faultKind = "stop"      // SIGTSTP (job control: its commands stop with it), SIGCONT after 0.5-2.5 TTL
	slowMember      faultKind = "latency"   // as latency-leader
	hangMember      faultKind = "hang"      // as hang-leader
	resetMember     faultKind = "reset"     // as reset-leader
	partitionMember faultKind = "partition" // as partition-leader
	joinMember      faultKind = "join"      // a new member started
	leaveMember     faultKind = "leave"     // a member stopped with SIGTERM: it releases its shards
	// A quorum's faults, in TestChaosQuorum, beside kill-leader and stop:
	// the leader cut off from one member of the quorum (its proxy to that
	// member disabled), and one member's store out for minutes (its
	// emulator hung with SIGSTOP, then killed, then started again).
	partitionLeaderMember faultKind = "partition-leader-member"
	memberOutage          faultKind = "member-outage"
)

var allFaults = []faultKind{killLeader, slowLeader, hangLeader, resetLeader, partitionLeader, slowStore, hangFollower, partitionFollower}

// faultsOf returns the faults a run on b injects: all of them, and the
// HTTP faults where b has a fault proxy.
func faultsOf(b backend) []faultKind {
	if b.http == nil {
		return allFaults
	}
	return append(slices.Clone(allFaults), throttleLeader, loseAnswers)
}

// slot is one contender: its proxy, and the process currently running in
// it (restarted after a kill).
type slot struct {
	id, proxy string
	// members are a quorum run's proxies instead of proxy: one in front of
	// each member, in the members' order (TestChaosQuorum).
	members  []string
	http     *faultproxy.Proxy // in front of the toxiproxy proxy, when the backend has HTTP faults
	prefer   int               // its process's preference, when the run has them
	leaseURL string
	env      []string

	cmd   *exec.Cmd
	done  chan struct{}
	log   string
	logs  []string
	kills map[string]int64 // log file → when its process was dead
	n     int
}

type chaosRun struct {
	t      *testing.T
	tp     *toxiproxy
	bins   binaries
	mode   mode
	b      backend
	dir    string
	unsafe float64
	// prefer: the contenders run with a preference (-prefer, --prefer),
	// 1 until a deploy fault gives one a greater one.
	prefer bool
	shards int // leasehold run --shards N, if not 0
	// holders makes shards leasehold run --holders N: slots, at most one
	// a member.
	holders bool
	slots   []*slot
	faults  []chaos.Fault
	rng     *rand.Rand
	deaths  *deathWatch // leasehold mode: when each command's process was gone
	// store and restores: the restore fault's view of the store, and its figures.
	store    *storeWatch
	restores restoreFigures
}

func newChaos(t *testing.T, tp *toxiproxy, bins binaries, m mode, b backend, upstream string, contender func(string) (string, []string), unsafe float64) *chaosRun {
	t.Helper()
	c := newRun(t, tp, bins, m, b, upstream, contender, contenders)
	c.unsafe = unsafe
	for _, s := range c.slots {
		c.start(s)
	}
	return c
}

// newPreferring is newChaos of contenders with a preference.
func newPreferring(t *testing.T, tp *toxiproxy, bins binaries, m mode, b backend, upstream string, contender func(string) (string, []string)) *chaosRun {
	t.Helper()
	c := newRun(t, tp, bins, m, b, upstream, contender, contenders)
	c.prefer = true
	for _, s := range c.slots {
		s.prefer = 1
		c.start(s)
	}
	return c
}

// newRun prepares a run of n slots, each behind a proxy of its own, and
// starts none.
func newRun(t *testing.T, tp *toxiproxy, bins binaries, m mode, b backend, upstream string, contender func(string) (string, []string), n int) *chaosRun {
	t.Helper()
	c := newSlotless(t, tp, bins, m, b)
	run := unique(string(m)) // proxies are global to toxiproxy: names of this run's own
	for i := range n {
		name := fmt.Sprintf("chaos-%s-%s-%d", b.name, run, i)
		listen := tp.proxy(t, name, upstream)
		var fp *faultproxy.Proxy
		if b.http != nil {
			fp = faultproxy.Start(t, "http://"+listen)
			listen = strings.TrimPrefix(fp.URL, "http://")
		}
		u, env := contender(listen)
		c.slots = append(c.slots, &slot{id: fmt.Sprintf("c%d", i), proxy: name, http: fp, leaseURL: u, env: env, kills: map[string]int64{}})
	}
	t.Cleanup(c.stopAll)
	return c
}

// newSlotless prepares a run with no slot yet: its directory for the logs
// and, in leasehold mode, its death watch. The caller adds the slots and
// then registers c.stopAll as a cleanup, so that the contenders stop
// before their proxies go.
func newSlotless(t *testing.T, tp *toxiproxy, bins binaries, m mode, b backend) *chaosRun {
	t.Helper()
	// The contenders' logs and stderr stay for a look when the test fails.
	dir, err := os.MkdirTemp("", "leasehold-chaos-"+b.name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		}
	})
	c := &chaosRun{t: t, tp: tp, bins: bins, mode: m, b: b, dir: dir, rng: rand.New(rand.NewPCG(rand.Uint64(), 0))}
	if m == leaseholdMode {
		c.deaths = watchDeaths(func() []string {
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			return logs
		})
		t.Cleanup(c.deaths.stop)
	}
	return c
}

// start runs a new process in the slot, logging to a file of its own.
func (c *chaosRun) start(s *slot) {
	c.t.Helper()
	s.n++
	s.log = filepath.Join(c.dir, fmt.Sprintf("%s-%d.log", s.id, s.n))
	s.logs = append(s.logs, s.log)
	stderr, err := os.Create(strings.TrimSuffix(s.log, ".log") + ".stderr")
	if err != nil {
		c.t.Fatal(err)
	}
	bin, args := c.bins.contender, []string{"-lease", s.leaseURL, "-id", s.id, "-ttl", c.b.ttl.String(), "-log", s.log}
	if c.unsafe > 0 {
		args = append(args, "-unsafe-renew-deadline", strconv.FormatFloat(c.unsafe, 'f', -1, 64))
	}
	if c.prefer {
		args = append(args, "-prefer", strconv.Itoa(s.prefer))
	}
	if c.mode == leaseholdMode {
		run := []string{"run"}
		if c.shards > 0 {
			run = append(run, "--"+c.groupFlag(), strconv.Itoa(c.shards))
		}
		if c.prefer {
			run = append(run, "--prefer", strconv.Itoa(s.prefer))
		}
		bin, args = c.bins.leasehold, append(run, "--lease", s.leaseURL, "--identity", s.id, "--ttl", c.b.ttl.String(),
			"--grace", "1s", "--", c.bins.contender, "-child", "-log", s.log)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		stderr.Close()
		close(s.done)
	}()
}

func (s *slot) alive() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the slot's process and notes when it was gone.
func (c *chaosRun) kill(s *slot) {
	_ = s.cmd.Process.Kill()
	<-s.done
	s.kills[s.log] = monotonic()
}

// handoffs counts the terms that the contenders' logs (the runner's, in
// their stderr) say were handed off, the lease handed to the successor.
func (c *chaosRun) handoffs() int {
	n := 0
	files, _ := filepath.Glob(filepath.Join(c.dir, "*.stderr"))
	for _, f := range files {
		for _, line := range readLines(f) {
			if strings.Contains(line, "msg=demoted") && strings.Contains(line, `reason="handed off"`) && strings.Contains(line, "released=true") {
				n++
			}
		}
	}
	return n
}

// stopAll stops every process gracefully (SIGTERM: the leader releases),
// killing those that do not stop.
func (c *chaosRun) stopAll() {
	for _, s := range c.slots {
		if s.alive() {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, s := range c.slots {
		if s.cmd == nil {
			continue
		}
		select {
		case <-s.done:
		case <-time.After(2*c.b.ttl + 10*time.Second):
			c.t.Errorf("%s: %s did not stop within %v of SIGTERM; killing it", c.b.name, s.id, 2*c.b.ttl+10*time.Second)
			c.kill(s)
		}
	}
}

// leader returns the slot whose process says it leads now, if any.
func (c *chaosRun) leader() *slot {
	for _, s := range c.slots {
		if !s.alive() {
			continue
		}
		lines := readLines(s.log)
		if len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "start ") {
			return s
		}
	}
	return nil
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// between returns a random duration from lo to hi TTLs.
func (c *chaosRun) between(lo, hi float64) time.Duration {
	return time.Duration((lo + c.rng.Float64()*(hi-lo)) * float64(c.b.ttl))
}

// run injects faults of the given kinds, one at a time with quiet spells
// between them, for d; then stops every contender. Contenders with a
// preference meet a deploy first, so that every such run hands off.
func (c *chaosRun) run(d time.Duration, kinds []faultKind) {
	deadline := time.Now().Add(d)
	time.Sleep(c.between(1, 1.5)) // the first election
	for i := 0; time.Now().Before(deadline); i++ {
		kind := kinds[c.rng.IntN(len(kinds))]
		if i == 0 && c.prefer {
			kind = deployFollower
		}
		c.inject(kind)
		time.Sleep(c.between(1, 2)) // a new leader settles in
	}
	c.stopAll()
}

// inject applies one fault to the current leader (or, with none, to a
// random contender), or for a follower's fault to a random live follower,
// and heals it.
func (c *chaosRun) inject(kind faultKind) {
	if kind == restoreTerm {
		c.restore()
		return
	}
	target := c.leader()
	if kind == hangFollower || kind == partitionFollower || kind == deployFollower {
		var followers []*slot
		for _, s := range c.slots {
			if s != target && s.alive() {
				followers = append(followers, s)
			}
		}
		if len(followers) == 0 {
			return
		}
		target = followers[c.rng.IntN(len(followers))]
	}
	if target == nil {
		target = c.slots[c.rng.IntN(len(c.slots))]
	}
	c.apply(kind, target)
}

// apply injects a fault of kind into target (or, for latency-all, every
// slot), holds it for 0.5 to 2.5 TTLs, and heals it; a kill restarts
// the target after 0.5 to 2 TTLs instead.
func (c *chaosRun) apply(kind faultKind, target *slot) {
	// Beyond the renew deadline (2/3 TTL, or the unsafe one): renewals
	// time out until the leader steps down.
	slow := map[string]int{"latency": int(c.between(1, 1.5).Milliseconds()), "jitter": 0}
	f := chaos.Fault{Kind: string(kind), Target: target.id, Start: monotonic()}
	hold := c.between(0.5, 2.5)
	var err error
	switch kind {
	case killLeader, killMember:
		alive := 0
		for _, s := range c.slots {
			if s.alive() {
				alive++
			}
		}
		if alive < 2 || !target.alive() {
			return
		}
		c.kill(target)
		f.End = f.Start
		c.faults = append(c.faults, f)
		time.Sleep(c.between(0.5, 2))
		c.start(target)
		return
	case deployFollower:
		if !target.alive() {
			return
		}
		c.leave(target)
		for _, s := range c.slots {
			target.prefer = max(target.prefer, s.prefer+1)
		}
		c.start(target)
		f.End = monotonic()
		c.faults = append(c.faults, f)
		return
	case stopMember:
		if !target.alive() {
			return
		}
		err = target.cmd.Process.Signal(syscall.SIGTSTP)
	case slowLeader, slowMember:
		err = c.tp.toxic(target.proxy, "chaos", "latency", "downstream", slow)
	case hangLeader, hangFollower, hangMember:
		// Upstream: requests never reach the store. Downstream: they are
		// applied, their answers lost: the unknown outcome.
		stream := []string{"upstream", "downstream"}[c.rng.IntN(2)]
		f.Kind += "-" + stream
		err = c.tp.toxic(target.proxy, "chaos", "timeout", stream, map[string]int{"timeout": 0})
	case resetLeader, resetMember:
		err = c.tp.toxic(target.proxy, "chaos", "reset_peer", "upstream", map[string]int{"timeout": 0})
	case partitionLeader, partitionFollower, partitionMember:
		err = c.tp.enable(target.proxy, false)
	case throttleLeader:
		target.http.Add(faultproxy.Rule{Fault: faultproxy.Refuse(c.b.http.throttled)})
	case loseAnswers:
		// Alternately: the answer replaced by a 500, the answer lost.
		target.http.Add(faultproxy.Rule{Match: c.b.http.write, Fault: faultproxy.Replace(c.b.http.failed), Every: 2},
			faultproxy.Rule{Match: c.b.http.write, Fault: faultproxy.Lose()})
	case slowStore:
		f.Target = "all"
		for _, s := range c.slots {
			if err = c.tp.toxic(s.proxy, "chaos", "latency", "downstream", slow); err != nil {
				break
			}
		}
	}
	if err != nil {
		c.t.Fatalf("%s: injecting %s: %v", c.b.name, kind, err)
	}
	time.Sleep(hold)
	switch kind {
	case partitionLeader, partitionFollower, partitionMember:
		err = c.tp.enable(target.proxy, true)
	case stopMember:
		err = target.cmd.Process.Signal(syscall.SIGCONT)
	case throttleLeader, loseAnswers:
		target.http.Clear()
	case slowStore:
		for _, s := range c.slots {
			if e := c.tp.removeToxic(s.proxy, "chaos"); e != nil {
				err = e
			}
		}
	default:
		err = c.tp.removeToxic(target.proxy, "chaos")
	}
	if err != nil {
		c.t.Fatalf("%s: healing %s: %v", c.b.name, kind, err)
	}
	f.End = monotonic()
	c.faults = append(c.faults, f)
}

// partitionUntilTakeover waits up to limit for a leader, cuts it off from
// the store until another contender's log says it leads, or limit has
// passed, and records the fault.
func (c *chaosRun) partitionUntilTakeover(limit time.Duration) {
	var target *slot
	if !eventuallyTrue(limit, func() bool { target = c.leader(); return target != nil }) {
		return
	}
	f := chaos.Fault{Kind: string(partitionLeader), Target: target.id, Start: monotonic()}
	if err := c.tp.enable(target.proxy, false); err != nil {
		c.t.Fatalf("%s: cutting %s off: %v", c.b.name, target.id, err)
	}
	eventuallyTrue(limit, func() bool {
		for _, s := range c.slots {
			if lines := readLines(s.log); s != target && len(lines) > 0 && strings.HasPrefix(lines[len(lines)-1], "start ") {
				return true
			}
		}
		return false
	})
	if err := c.tp.enable(target.proxy, true); err != nil {
		c.t.Fatalf("%s: letting %s back: %v", c.b.name, target.id, err)
	}
	f.End = monotonic()
	c.faults = append(c.faults, f)
}

// eventuallyTrue polls cond every 100ms until it holds or limit has
// passed, and reports whether it held.
func eventuallyTrue(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
		if !time.Now().Before(end) {
			return false
		}
	}
}

// check reads every process's records and checks them.
func (c *chaosRun) check() *chaos.Result {
	c.t.Helper()
	if c.deaths != nil {
		c.deaths.stop()
	}
	var ivs []chaos.Interval
	for _, s := range c.slots {
		for _, log := range s.logs {
			ivs = append(ivs, c.intervals(log, s.kills[log])...)
		}
	}
	retry := c.b.ttl / 3 * 12 / 10 // CampaignInterval + 20% jitter
	callTimeout := c.b.ttl / 5
	return chaos.Check(ivs, c.faults, chaos.Bounds{TTL: c.b.ttl, Retry: retry, Slack: 3 * callTimeout})
}

// record is one line of a contender's log: "start <ns> <token>" or
// "end <ns> <token>" of a contender, "start <ns> <token> <pid> [<shard>]",
// "end ..." or "cont ..." (continued after a stop) of leasehold's command.
type record struct {
	what  string
	at    int64
	token uint64
	pid   int // of leasehold's command
	shard int // of leasehold run --shards' command
}

func parseRecord(line string) (record, error) {
	f := strings.Fields(line)
	if len(f) < 3 || len(f) > 5 {
		return record{}, fmt.Errorf("%q: want WHAT NS TOKEN [PID [SHARD]]", line)
	}
	r := record{what: f[0]}
	var err1, err2, err3, err4 error
	r.at, err1 = strconv.ParseInt(f[1], 10, 64)
	r.token, err2 = strconv.ParseUint(f[2], 10, 64)
	if len(f) >= 4 {
		r.pid, err3 = strconv.Atoi(f[3])
	}
	if len(f) == 5 {
		r.shard, err4 = strconv.Atoi(f[4])
	}
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return record{}, fmt.Errorf("%q: %v", line, err)
	}
	return r, nil
}

// intervals parses one process's records: a contender's, or those of the
// commands of one leasehold run (one at a time, or one per shard), told
// apart by their process IDs. An election without an end is one that a
// kill ended: of leasehold's command, when the death watch saw its process
// gone, or stopped for good; of a contender, when the process killed (at
// killed) had been reaped.
func (c *chaosRun) intervals(log string, killed int64) []chaos.Interval {
	return intervalsOf(c.t, log, killed, c.deaths)
}

func intervalsOf(t *testing.T, log string, killed int64, deaths *deathWatch) []chaos.Interval {
	t.Helper()
	var ivs []chaos.Interval
	open := map[int]*chaos.Interval{} // by PID: 0 for a contender
	for i, line := range readLines(log) {
		r, err := parseRecord(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", log, i+1, err)
		}
		o := open[r.pid]
		switch {
		case r.what == "start" && o == nil:
			open[r.pid] = &chaos.Interval{Process: filepath.Base(log), Token: r.token, Start: r.at, Shard: r.shard}
		case r.what == "end" && o != nil && o.Token == r.token && o.Shard == r.shard:
			o.End = r.at
			ivs = append(ivs, *o)
			delete(open, r.pid)
		case r.what == "cont" && o != nil && o.Token == r.token && o.Shard == r.shard:
		default:
			t.Errorf("%s:%d: %q out of order", log, i+1, line)
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(open)) {
		o := open[pid]
		end := killed
		if deaths != nil && pid != 0 {
			end = deaths.diedAt(pid)
		}
		if end == 0 {
			t.Errorf("%s: started at %d (token %d, shard %d), never ended, and its process was not seen to die", log, o.Start, o.Token, o.Shard)
			end = monotonic()
		}
		o.End, o.Killed = end, true
		ivs = append(ivs, *o)
	}
	return ivs
}

// deathWatch notes when the commands that leasehold run started are gone:
// every few milliseconds it reads the new start lines of the logs, and
// checks whether each started command that has not recorded its end is
// still alive. A killed command cannot record its end itself; the time the
// watch saw it gone is a little after it died, which makes its interval, if
// anything, longer. A command that job control stopped (the stop fault)
// and that was killed while stopped ran last when the watch first saw it
// stopped: that is its end. A command's state alone cannot tell a continued
// command from one dying of SIGKILL (it runs to exit), so only its "cont"
// line, the first thing it does when continued, says it ran again.
type deathWatch struct {
	logs    func() []string
	offsets map[string]int64
	alive   map[int]int64 // PID of a command that has not ended → since when it is stopped (until its cont line), or 0
	mu      sync.Mutex
	dead    map[int]int64 // PID → when it was seen gone
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func watchDeaths(logs func() []string) *deathWatch {
	w := &deathWatch{logs: logs, offsets: map[string]int64{}, alive: map[int]int64{}, dead: map[int]int64{},
		quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			w.sweep()
			select {
			case <-w.quit:
				w.sweep()
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// stop ends the watch after a last sweep.
func (w *deathWatch) stop() {
	w.once.Do(func() { close(w.quit) })
	<-w.done
}

func (w *deathWatch) diedAt(pid int) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead[pid]
}

func (w *deathWatch) sweep() {
	for _, log := range w.logs() {
		b, err := os.ReadFile(log)
		if err != nil {
			continue
		}
		b = b[w.offsets[log]:]
		last := bytes.LastIndexByte(b, '\n') // whole lines only
		if last < 0 {
			continue
		}
		w.offsets[log] += int64(last + 1)
		for line := range strings.SplitSeq(string(b[:last]), "\n") {
			r, err := parseRecord(line)
			switch {
			case err != nil:
			case (r.what == "start" || r.what == "cont") && r.pid != 0:
				w.alive[r.pid] = 0
			case r.what == "end":
				delete(w.alive, r.pid)
			}
		}
	}
	for pid, stopped := range w.alive {
		now := monotonic()
		switch state := procState(pid); state {
		case 0, 'Z', 'X':
			if stopped == 0 {
				stopped = now
			}
			w.mu.Lock()
			w.dead[pid] = stopped
			w.mu.Unlock()
			delete(w.alive, pid)
		case 'T':
			if stopped == 0 {
				w.alive[pid] = now
			}
		}
	}
}

// procState is process pid's state (R, S, T, Z, ...), 0 if it is gone.
func procState(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// ---- the stores ----------------------------------------------------------------------------

func hostPort(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		t.Fatalf("endpoint %q: want http://HOST:PORT", endpoint)
	}
	return u.Host
}

// awsEnv is the environment of a contender of an AWS emulator: fixed keys,
// and nothing from the machine's AWS configuration.
func awsEnv(t *testing.T, key, secret string) []string {
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{
		"AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_SESSION_TOKEN=", "AWS_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + empty, "AWS_SHARED_CREDENTIALS_FILE=" + empty, "AWS_PROFILE=", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL=", "AWS_ENDPOINT_URL_S3=", "AWS_ENDPOINT_URL_DYNAMODB=",
	}
}

func unique(prefix string) string {
	return fmt.Sprintf("%s-%08x", prefix, rand.Uint32())
}

func prepareS3(t *testing.T, endpoint, key, secret string) (string, func(string) (string, []string), rawStore) {
	bucket := unique("chaos")
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")})
	if _, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("CreateBucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String("lease")})
		_, _ = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	})
	env := awsEnv(t, key, secret)
	return hostPort(t, endpoint), func(proxy string) (string, []string) {
		return fmt.Sprintf("s3://%s/lease?region=us-east-1&endpoint=http://%s&use_path_style=true", bucket, proxy), env
	}, s3Object{c: c, bucket: bucket, key: "lease"}
}

func prepareDynamo(t *testing.T, endpoint string) (string, func(string) (string, []string), rawStore) {
	key := "lease"
	c, table := dynamoTable(t, endpoint, key)
	env := awsEnv(t, "chaos", "chaos")
	return hostPort(t, endpoint), func(proxy string) (string, []string) {
		return fmt.Sprintf("dynamodb://%s/lease?region=us-east-1&endpoint=http://%s", table, proxy), env
	}, dynamoItem{c: c, table: table, key: map[string]types.AttributeValue{key: &types.AttributeValueMemberS{Value: "lease"}}}
}

// prepareDynamoGroup makes a shard group's table (dynamolease.Objects)
// instead of a lease table.
func prepareDynamoGroup(t *testing.T, endpoint string) (string, func(string) (string, []string), rawStore) {
	_, table := dynamoTable(t, endpoint, dynamolease.DefaultGroupAttribute, dynamolease.DefaultObjectKeyAttribute)
	env := awsEnv(t, "chaos", "chaos")
	return hostPort(t, endpoint), func(proxy string) (string, []string) {
		return fmt.Sprintf("dynamodb://%s/group?region=us-east-1&endpoint=http://%s", table, proxy), env
	}, nil
}

// dynamoTable creates a table keyed by string attributes, a hash key and
// an optional range key, deleted when the test ends.
func dynamoTable(t *testing.T, endpoint string, keys ...string) (*ddb.Client, string) {
	table := unique("chaos")
	c := ddb.New(ddb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("chaos", "chaos", "")})
	in := &ddb.CreateTableInput{TableName: &table, BillingMode: types.BillingModePayPerRequest}
	for i, k := range keys {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(k), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(k), KeyType: []types.KeyType{types.KeyTypeHash, types.KeyTypeRange}[i]})
	}
	if _, err := c.CreateTable(t.Context(), in); err != nil {
		t.Fatalf("CreateTable %s: %v", table, err)
	}
	if err := ddb.NewTableExistsWaiter(c).Wait(t.Context(), &ddb.DescribeTableInput{TableName: &table}, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.DeleteTable(context.Background(), &ddb.DeleteTableInput{TableName: &table}) })
	return c, table
}

// prepareGCS gives each run an object of its own in the emulator's test
// bucket (LEASEHOLD_GCS_BUCKET); contenders reach the emulator through
// their proxy by STORAGE_EMULATOR_HOST, which the Go client honours.
func prepareGCS(t *testing.T, host string) (string, func(string) (string, []string), rawStore) {
	bucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
	if bucket == "" {
		t.Skip(`chaos: gcs: set LEASEHOLD_GCS_BUCKET with STORAGE_EMULATOR_HOST (scripts/stack up gcs; eval "$(scripts/stack env)")`)
	}
	object := unique("chaos") + "/lease"
	// This process reaches the emulator straight, by its own STORAGE_EMULATOR_HOST.
	c, err := storage.NewService(context.Background(), option.WithEndpoint("http://"+host+"/storage/v1/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Objects.Delete(bucket, object).Context(context.Background()).Do() })
	return host, func(proxy string) (string, []string) {
		return fmt.Sprintf("gs://%s/%s", bucket, object), []string{"STORAGE_EMULATOR_HOST=" + proxy}
	}, gcsObject{c: c, bucket: bucket, object: object}
}

var blobEndpoint = regexp.MustCompile(`BlobEndpoint=([a-z]+://)([^/;]+)(/[^;]*)?`)

func prepareAzure(t *testing.T, cs string) (string, func(string) (string, []string), rawStore) {
	m := blobEndpoint.FindStringSubmatch(cs)
	if m == nil {
		t.Fatalf("the Azurite connection string has no BlobEndpoint")
	}
	container := unique("chaos")
	c, err := azblob.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(t.Context(), container, nil); err != nil {
		t.Fatalf("CreateContainer %s: %v", container, err)
	}
	t.Cleanup(func() { _, _ = c.DeleteContainer(context.Background(), container, nil) })
	return m[2], func(proxy string) (string, []string) {
		viaProxy := blobEndpoint.ReplaceAllLiteralString(cs, "BlobEndpoint="+m[1]+proxy+m[3])
		return fmt.Sprintf("azblob://%s/lease?connection_string_env=LEASEHOLD_CHAOS_CONNECTION_STRING", container),
			[]string{"LEASEHOLD_CHAOS_CONNECTION_STRING=" + viaProxy}
	}, nil
}
