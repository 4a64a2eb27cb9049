//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/chaos"
	"github.com/leasehold/leasehold/lease/gcslease"
)

// defaultQuorumDuration is TestChaosQuorum's run unless
// LEASEHOLD_CHAOS_QUORUM_DURATION says otherwise: a sixth of faults, two
// thirds of one member's outage (two minutes: a region's outage, not a
// blip), a sixth of faults again, beside the other chaos runs within their
// four minutes or so.
const defaultQuorumDuration = 3 * time.Minute

// The quorum's members, in its order: the S3 member is a MinIO server of
// the test's own, the one whose outage the test causes.
var quorumMembers = []string{"minio", "dynalite", "gcs"}

// TestChaosQuorum runs three leasehold run contenders on a quorum lease of
// three stores, a MinIO server that the test starts itself on a port of its
// own (the shared stack's MinIO serves the tests beside this one, which
// must not see it stop), the stack's dynalite and its fake-gcs-server. Each
// contender reaches each member through a toxiproxy proxy of its own,
// nine in all. Its commands (chaos/contender -child) record their terms.
// At the quorum's one TTL for all, twice Cloud Storage's 3s minimum (at 3s a loaded CI machine changed the leader once across the outage), the run
// has three phases, of LEASEHOLD_CHAOS_QUORUM_DURATION (3m by default) in
// all:
//
//   - for a sixth of it, faults one at a time, with quiet spells of one
//     to two TTLs between them, in rounds of one of each kind in a
//     shuffled order, a round begun being finished:
//     the leader killed (kill -9, restarted after 0.5 to 2 TTLs), a random
//     contender paused (SIGTSTP, then SIGCONT after 0.5 to 2.5 TTLs: SIGSTOP
//     cannot be caught, and sent to leasehold alone it leaves the command
//     running unrenewed, as leasehold help run says, so leasehold stops
//     its command's process group and itself), and the leader cut off from
//     one random member for one to three TTLs (its proxy to that member
//     disabled; the other contenders still reach it, and watch its record
//     unchanged for longer than a TTL);
//   - for two thirds of it, one member's outage and nothing else: the private
//     MinIO hung (SIGSTOP: connections are accepted, no request is
//     answered) for half the outage, then killed (connections refused) for
//     the other half, then started again on its port and its data, as a
//     region's store comes back with what it held (a record lost or put
//     back is TestChaosRestore's fault, and the simulation's);
//   - for the last sixth, the faults of the first again, with the member
//     back: its partitions now need it for a majority.
//
// Before each partition and the outage, the test waits until one
// contender leads and holds every member, renewing each (every member's
// record, read straight at its store, names it and is written again
// within 3/4 TTL): a partition with no such leader is skipped, and
// counted. chaos.Check checks every leader's
// records: no overlap and tokens in order (failures), and the leaderless
// gaps (figures, as in TestChaos). Across the outage and each partition,
// from its start until the leader holds every member again, the leader
// must not change and there must be no leaderless instant, or the test
// fails: a minority of the members out is what a quorum lease rides out.
// It fails too when the leader does not hold the member again within 10
// TTLs of its return.
func TestChaosQuorum(t *testing.T) {
	t.Parallel()
	tp, bins, _ := setup(t)
	duration := durationVar(t, "LEASEHOLD_CHAOS_QUORUM_DURATION", defaultQuorumDuration)
	for _, v := range []string{"LEASEHOLD_MINIO_BINARY", "LEASEHOLD_DYNALITE_ENDPOINT", "STORAGE_EMULATOR_HOST"} {
		if os.Getenv(v) == "" {
			t.Skipf(`chaos: the quorum of MinIO, dynalite and fake-gcs-server: %s is not set (scripts/stack up; eval "$(scripts/stack env)")`, v)
		}
	}
	q := newQuorumRun(t, tp, bins)
	for _, s := range q.slots {
		q.start(s)
	}
	time.Sleep(q.between(1, 1.5)) // the first election
	q.faultsFor(duration / 6)
	o := q.outage(duration * 2 / 3)
	q.faultsFor(duration / 6)
	q.stopAll()
	res := q.check()

	across := res.Across(o.fault.Start, o.back)
	var parts chaos.Steadiness
	var worstBack time.Duration
	for _, p := range q.partitions {
		s := res.Across(p.fault.Start, p.back)
		parts.Changes += s.Changes
		parts.Leaderless += s.Leaderless
		worstBack = max(worstBack, time.Duration(p.back-p.fault.End))
		if !s.Steady() {
			t.Errorf("quorum: the leader cut off from one member (%s, for %v) changed %d times and was leaderless %v: a minority out of its reach must not (logs in %s)",
				p.fault.Target, time.Duration(p.fault.End-p.fault.Start).Round(time.Millisecond), s.Changes, s.Leaderless, q.dir)
		}
		if !p.heldAgain {
			t.Errorf("quorum: after the leader's partition from one member (%s), no leader held every member within %v (logs in %s)", p.fault.Target, q.backBound(), q.dir)
		}
	}
	heldAgain := fmt.Sprintf("a leader held every member again %v after that", time.Duration(o.back-o.fault.End).Round(time.Millisecond))
	if !o.heldAgain {
		heldAgain = fmt.Sprintf("no leader held every member again within %v", q.backBound())
	}
	t.Logf("leasehold run on a quorum of %s (MinIO private), TTL %v, %v:\n%s\n"+
		"member outage: minio hung (SIGSTOP) %v, then down (SIGKILL) %v, then started again on its port and data, answering after %v; "+
		"%s; across it (%v): leader changes %d, leaderless %v\n"+
		"the leader cut off from one member: %d times (%d skipped: no one leader holding every member); every member held again at most %v after; "+
		"across them: leader changes %d, leaderless %v",
		strings.Join(quorumMembers, ", "), q.b.ttl, duration, res.Summary(q.faults),
		o.hung.Round(time.Second), o.down.Round(time.Second), o.restart.Round(time.Millisecond),
		heldAgain, time.Duration(o.back-o.fault.Start).Round(time.Second),
		across.Changes, across.Leaderless, len(q.partitions), q.skipped, worstBack.Round(time.Millisecond), parts.Changes, parts.Leaderless)
	verdict(t, "quorum", "leaders' records", q.dir, res.Safe(), res.OK())
	if len(res.Intervals) == 0 {
		t.Errorf("quorum: no contender ever led (logs in %s)", q.dir)
	}
	if !across.Steady() {
		t.Errorf("quorum: one member's outage changed the leader %d times and left it leaderless for %v: a minority out must not (logs in %s)", across.Changes, across.Leaderless, q.dir)
	}
	if !o.heldAgain {
		t.Errorf("quorum: no leader held every member within %v of the member's return (logs in %s)", q.backBound(), q.dir)
	}
	if len(q.partitions) == 0 {
		t.Errorf("quorum: the leader was never cut off from a member (%d tries skipped): the run proves nothing of it", q.skipped)
	}
}

// quorumRun is a chaos run of leasehold run on a quorum lease.
type quorumRun struct {
	*chaosRun
	minio *privateMinIO
	// raws read each member's record straight at its store, in the
	// members' order.
	raws []rawStore
	// partitions are the leader's partitions from one member, skipped how
	// many were not injected.
	partitions []minorityFault
	skipped    int
}

// minorityFault is a fault that a quorum lease must ride out: the leader
// cut off from one member, or one member out.
type minorityFault struct {
	fault chaos.Fault
	// back is when the leader held every member again (or the bound for
	// that passed: heldAgain false).
	back      int64
	heldAgain bool
}

// outageFigures are the member outage's own.
type outageFigures struct {
	minorityFault
	hung, down, restart time.Duration
}

func newQuorumRun(t *testing.T, tp *toxiproxy, bins binaries) *quorumRun {
	t.Helper()
	minio := startMinIO(t, os.Getenv("LEASEHOLD_MINIO_BINARY"))
	type member struct {
		upstream  string
		contender func(string) (string, []string)
	}
	var members []member
	var raws []rawStore
	for _, prepare := range []func() (string, func(string) (string, []string), rawStore){
		func() (string, func(string) (string, []string), rawStore) {
			return prepareS3(t, "http://"+minio.addr, privateMinIOUser, privateMinIOPassword)
		},
		func() (string, func(string) (string, []string), rawStore) {
			return prepareDynamo(t, os.Getenv("LEASEHOLD_DYNALITE_ENDPOINT"))
		},
		func() (string, func(string) (string, []string), rawStore) {
			return prepareGCS(t, os.Getenv("STORAGE_EMULATOR_HOST"))
		},
	} {
		upstream, contender, raw := prepare()
		members = append(members, member{upstream, contender})
		raws = append(raws, raw)
	}
	q := &quorumRun{chaosRun: newSlotless(t, tp, bins, leaseholdMode, backend{name: "quorum", ttl: 2 * gcslease.MinTTL}), minio: minio, raws: raws}
	run := unique("quorum") // proxies are global to toxiproxy: names of this run's own
	for i := range contenders {
		s := &slot{id: fmt.Sprintf("c%d", i), kills: map[string]int64{}}
		// The members' URLs, each through the slot's proxy to it, and
		// their environments, the S3 member's (the first) last: exec keeps
		// the last value of a variable given twice, and MinIO takes only
		// its own keys, dynalite any.
		var urls, s3env []string
		for j, m := range members {
			name := fmt.Sprintf("chaos-%s-%d-%s", run, i, quorumMembers[j])
			s.members = append(s.members, name)
			u, env := m.contender(tp.proxy(t, name, m.upstream))
			urls = append(urls, u)
			if j == 0 {
				s3env = env
			} else {
				s.env = append(s.env, env...)
			}
		}
		s.leaseURL, s.env = "quorum:"+strings.Join(urls, ","), append(s.env, s3env...)
		q.slots = append(q.slots, s)
	}
	t.Cleanup(q.stopAll)
	return q
}

// backBound is how long the leader may take to hold every member again
// once they are all within its reach.
func (q *quorumRun) backBound() time.Duration { return 10 * q.b.ttl }

// faultsFor injects the quorum's faults, one at a time with quiet spells
// between them, in rounds of one of each kind in a shuffled order, while d
// has not passed: each kind at least once, however short d is.
func (q *quorumRun) faultsFor(d time.Duration) {
	kinds := []faultKind{killLeader, stopMember, partitionLeaderMember}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		q.rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		for _, kind := range kinds {
			switch kind {
			case killLeader:
				q.inject(killLeader)
			case stopMember:
				var live []*slot
				for _, s := range q.slots {
					if s.alive() {
						live = append(live, s)
					}
				}
				q.apply(stopMember, live[q.rng.IntN(len(live))])
			case partitionLeaderMember:
				q.partitionFromMember()
			}
			time.Sleep(q.between(1, 2)) // a new leader settles in
		}
	}
}

// partitionFromMember waits for a leader that holds every member, cuts it
// off from one of them for one to three TTLs, and waits for it to hold
// every member again.
func (q *quorumRun) partitionFromMember() {
	leader := q.holdingAll(5 * q.b.ttl)
	if leader == nil {
		q.skipped++
		return
	}
	i := q.rng.IntN(len(leader.members))
	f := chaos.Fault{Kind: string(partitionLeaderMember), Target: leader.id + "/" + quorumMembers[i], Start: monotonic()}
	if err := q.tp.enable(leader.members[i], false); err != nil {
		q.t.Fatalf("quorum: cutting %s off: %v", f.Target, err)
	}
	time.Sleep(q.between(1, 3))
	if err := q.tp.enable(leader.members[i], true); err != nil {
		q.t.Fatalf("quorum: letting %s back: %v", f.Target, err)
	}
	f.End = monotonic()
	q.faults = append(q.faults, f)
	q.partitions = append(q.partitions, q.heldAgain(f))
}

// outage waits for a leader that holds every member, and takes the
// private MinIO out for d: hung for half of it, down for the other half,
// then started again on its port and data; then it waits for the leader
// to hold it again.
func (q *quorumRun) outage(d time.Duration) outageFigures {
	if q.holdingAll(20*q.b.ttl) == nil {
		q.t.Errorf("quorum: no leader held every member within %v before the outage; the members' records as read last: %s (logs in %s)", 20*q.b.ttl, q.records(), q.dir)
	}
	f := chaos.Fault{Kind: string(memberOutage), Target: "minio", Start: monotonic()}
	q.minio.signal(syscall.SIGSTOP)
	time.Sleep(d / 2)
	hung := time.Duration(monotonic() - f.Start)
	q.minio.kill()
	time.Sleep(d - d/2)
	restarted := monotonic()
	q.minio.start()
	f.End = monotonic()
	q.faults = append(q.faults, f)
	return outageFigures{minorityFault: q.heldAgain(f), hung: hung, down: time.Duration(restarted - f.Start - int64(hung)), restart: time.Duration(f.End - restarted)}
}

// heldAgain waits, after f, for a leader that holds every member again.
func (q *quorumRun) heldAgain(f chaos.Fault) minorityFault {
	back := q.holdingAll(q.backBound()) != nil
	if !back {
		q.t.Logf("quorum: after %s on %s, the members' records as read last: %s", f.Kind, f.Target, q.records())
	}
	return minorityFault{fault: f, back: monotonic(), heldAgain: back}
}

// holdingAll waits up to limit for a leader that holds every member and
// renews each: its log says it leads, and every member's record, read
// straight at its store, names it, unreleased, and is written again
// within 3/4 TTL (the holder renews every 3/8 TTL, and every write draws a
// new nonce, so a new version; a member's record that is only the
// holder's from before an outage is not). It returns the leader, or nil.
func (q *quorumRun) holdingAll(limit time.Duration) *slot {
	var leader *slot
	if !eventuallyTrue(limit, func() bool {
		leader = q.leader()
		before, ok := q.heldBy(leader)
		if !ok {
			return false
		}
		time.Sleep(q.b.ttl * 3 / 4)
		after, ok := q.heldBy(leader)
		if !ok || q.leader() != leader {
			return false
		}
		for i := range before {
			if before[i] == after[i] {
				return false
			}
		}
		return true
	}) {
		return nil
	}
	return leader
}

// heldBy reads every member's record straight at its store, and returns
// their versions if each names s as its holder, unreleased.
func (q *quorumRun) heldBy(s *slot) ([]string, bool) {
	if s == nil {
		return nil, false
	}
	var versions []string
	for _, raw := range q.raws {
		ctx, cancel := context.WithTimeout(context.Background(), q.b.ttl)
		st, err := raw.get(ctx)
		cancel()
		if err != nil || st.rec.Holder != s.id || st.rec.Released {
			return nil, false
		}
		versions = append(versions, st.version)
	}
	return versions, true
}

// records describes every member's record, read straight at its store.
func (q *quorumRun) records() string {
	var rs []string
	for i, raw := range q.raws {
		ctx, cancel := context.WithTimeout(context.Background(), q.b.ttl)
		st, err := raw.get(ctx)
		cancel()
		if err != nil {
			rs = append(rs, fmt.Sprintf("%s: %v", quorumMembers[i], err))
			continue
		}
		rs = append(rs, fmt.Sprintf("%s: holder %q, its token %d, released %t", quorumMembers[i], st.rec.Holder, st.rec.Token, st.rec.Released))
	}
	return strings.Join(rs, "; ")
}

// The private MinIO's root user, which the contenders sign with.
const privateMinIOUser, privateMinIOPassword = "chaos", "chaos-secret"

// privateMinIO is a MinIO server of the test's own, which it stops, kills
// and starts again, on one port and one data directory throughout.
type privateMinIO struct {
	t              *testing.T
	bin, dir, addr string
	cmd            *exec.Cmd
	done           chan struct{}
}

// startMinIO starts a MinIO server from bin (LEASEHOLD_MINIO_BINARY, which
// scripts/stack installs) on a free loopback port, in a temporary
// directory, and waits until it answers; it is killed when the test ends.
func startMinIO(t *testing.T, bin string) *privateMinIO {
	t.Helper()
	m := &privateMinIO{t: t, bin: bin, dir: t.TempDir(), addr: freeAddr(t)}
	m.start()
	t.Cleanup(m.kill)
	return m
}

// freeAddr returns a loopback address that nothing listens on, below
// Linux's ephemeral ports (32768 and up): the listeners that other tests
// open on port 0 take theirs from that range, so none takes this one while
// the server is down.
func freeAddr(t *testing.T) string {
	t.Helper()
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free loopback port from 20000 to 31999 in 100 tries")
	return ""
}

// start runs the server on its address and data, appending to its log,
// and waits up to a minute for it to answer (scripts/stack waits as long).
func (m *privateMinIO) start() {
	m.t.Helper()
	log, err := os.OpenFile(filepath.Join(m.dir, "minio.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		m.t.Fatal(err)
	}
	cmd := exec.Command(m.bin, "server", filepath.Join(m.dir, "data"), "--address", m.addr)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+privateMinIOUser, "MINIO_ROOT_PASSWORD="+privateMinIOPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		m.t.Fatalf("LEASEHOLD_MINIO_BINARY=%s: %v", m.bin, err)
	}
	m.cmd, m.done = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(m.done)
	}()
	hc := &http.Client{Timeout: time.Second}
	ready := eventuallyTrue(time.Minute, func() bool {
		select {
		case <-m.done:
			return true
		default:
		}
		resp, err := hc.Get("http://" + m.addr + "/minio/health/live")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	select {
	case <-m.done:
		ready = false
	default:
	}
	if !ready {
		b, _ := os.ReadFile(filepath.Join(m.dir, "minio.log"))
		m.t.Fatalf("the private MinIO on %s did not answer within a minute (its port taken?); its log:\n%s", m.addr, b)
	}
}

func (m *privateMinIO) signal(sig syscall.Signal) {
	if err := m.cmd.Process.Signal(sig); err != nil {
		m.t.Fatalf("the private MinIO: %v: %v", sig, err)
	}
}

// kill kills the server (stopped or not) and waits for it to be gone.
func (m *privateMinIO) kill() {
	_ = m.cmd.Process.Kill()
	<-m.done
}
