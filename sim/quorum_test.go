package sim_test

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

var (
	qseedFlag = flag.Uint64("qseed", 0, "replay the quorum schedule of this seed (0: explore)")
	qslowFlag = flag.Int("qslow", 4, "steady quorum schedules: members slow by up to CallTimeout/N")
)

// The quorum simulation: runners on a quorum lease of three or five
// memlease stores, with faults on the members, checked by the same global
// oracle as the engine's: at most one task at any instant, tokens strictly
// increasing in start order.
//
// A schedule draws its faults in one of two modes, the two halves of what
// a quorum promises to survive (quorumlease's package doc):
//
//   - crash: any member, for any contender or for all, partitioned, slow,
//     hung, failing or losing answers, for any length of time (a store's,
//     a region's or a network's outage), a contender cut off from one
//     member or a majority, or paused; records are never lost.
//   - lossy: one member, the schedule's unreliable one, has its record
//     restored from an earlier copy or deleted, and every crash fault
//     above, but on that member alone; contenders are paused.
//
// Beyond them (a record lost on one member while another is out of a
// term's reach) a quorum of three has lost what a majority held, and the
// promise of increasing tokens is void; its runs are not held to it.
//
// A quarter of the schedules are drawn in a third mode instead, the
// liveness half:
//
//   - steady: members slow for everyone (by up to a quarter of
//     CallTimeout, -qslow, for the whole run: a twentieth of the TTL,
//     near the most any lease's renewals can take, a sixteenth), and,
//     from 3 TTLs on, one member at a time down, hung, failing or losing
//     answers for everyone, for any length, each outage 3 to 4 TTLs after
//     the one before healed. The oracle holds these runs to one leader
//     from before the first outage to the end: a minority's outage, a
//     slow member, must change nothing. Until a renewal's calls to the
//     members slower than its majority went on after it returned, a
//     member slower than an eighth of CallTimeout was cut off and not
//     held again, and the next outage ended the term (red team 19's
//     RT19-1): this mode found it in 33 of 400 schedules.
type qmode int

const (
	crashMode qmode = iota
	lossyMode
	steadyMode
)

var qmodeNames = [...]string{"crash", "lossy", "steady"}

type qfault int

const (
	qDown    qfault = iota // a member unreachable for every contender for D
	qCut                   // one contender cut off from one or two members for D
	qSlow                  // one contender's calls to a member take D
	qHang                  // one contender's calls to a member hang for D
	qFail                  // one contender's next N calls to a member fail
	qLose                  // one contender's next N writes to a member land, answers lost
	qPause                 // one contender cut off from every member for D (a pause, a crash)
	qRestore               // the unreliable member's record put back to a copy taken earlier
	qDelete                // the unreliable member's record deleted
	qFaults
)

var qfaultNames = [...]string{"down", "cut", "slow", "hang", "fail", "lose", "pause", "restore", "delete"}

// qstep is one fault at one instant.
type qstep struct {
	at      time.Duration
	fault   qfault
	who     int   // contender
	members []int // members it applies to
	n       int
	d       time.Duration
}

func (s qstep) String() string {
	return fmt.Sprintf("%v %s c%d members %v n=%d d=%v", s.at, qfaultNames[s.fault], s.who, s.members, s.n, s.d)
}

// qscenario is one quorum schedule, drawn from its seed.
type qscenario struct {
	seed       uint64
	members    int
	contenders int
	starts     []time.Duration
	mode       qmode
	unreliable int
	steps      []qstep
	slow       []time.Duration // steady: each member's delay for everyone
	// callTimeout is the members' CallTimeout; 0 for the default. A third of the crash and lossy schedules draw
	// one up to the runner's renew deadline, which made a read left
	// running outlast a member's silence by most of a TTL (red team 23's
	// RT23-1).
	callTimeout time.Duration
}

func newQScenario(seed uint64) qscenario {
	r := rand.New(rand.NewPCG(seed, 0x9e37))
	sc := qscenario{seed: seed, members: 3, contenders: 2 + r.IntN(4), unreliable: r.IntN(3), mode: qmode(r.IntN(2))}
	if r.IntN(4) == 0 {
		sc.members, sc.unreliable = 5, r.IntN(5)
	}
	together := r.IntN(2) == 0
	for i := range sc.contenders {
		at := time.Duration(i) * time.Millisecond // one apart, so that calls land in a fixed order
		if !together {
			at += time.Duration(r.Int64N(int64(2 * ttl)))
		}
		sc.starts = append(sc.starts, at)
	}
	offGrid := time.Millisecond / 2
	for range 4 + r.IntN(12) {
		s := qstep{
			at:  time.Duration(r.Int64N(int64(horizon-2*ttl))).Truncate(time.Millisecond) + offGrid,
			who: r.IntN(sc.contenders),
			n:   1 + r.IntN(4),
		}
		switch sc.mode {
		case crashMode:
			s.fault = qfault(r.IntN(int(qRestore))) // every fault but the lossy ones
		default:
			s.fault = qfault(r.IntN(int(qFaults)))
		}
		s.d = outageLength(r, horizon/2)
		switch {
		case s.fault == qPause:
		case sc.mode == lossyMode:
			s.members = []int{sc.unreliable}
		case s.fault == qCut:
			s.members = r.Perm(sc.members)[:1+r.IntN(sc.members/2+1)] // one to a majority
		default:
			s.members = []int{r.IntN(sc.members)}
		}
		sc.steps = append(sc.steps, s)
	}
	slices.SortStableFunc(sc.steps, func(a, b qstep) int { return int(a.at - b.at) })
	if rs := rand.New(rand.NewPCG(seed, 0x57ead)); rs.IntN(4) == 0 {
		sc.steady(rs)
	} else if rc := rand.New(rand.NewPCG(seed, 0xca11)); rc.IntN(3) == 0 {
		sc.callTimeout = drawCallTimeout(rc)
	}
	return sc
}

// outageLength draws an outage of any length: short, around the TTL, or
// long (up to long), in whole milliseconds.
func outageLength(r *rand.Rand, long time.Duration) time.Duration {
	var d time.Duration
	switch r.IntN(3) {
	case 0:
		d = time.Duration(r.Int64N(int64(ttl / 2)))
	case 1:
		d = ttl/2 + time.Duration(r.Int64N(int64(2*ttl)))
	default:
		d = time.Duration(r.Int64N(int64(long)))
	}
	return d.Truncate(time.Millisecond) + time.Millisecond
}

// steady makes sc a steady schedule (see qmode): slow members, and one
// member's outage at a time, for everyone.
func (sc *qscenario) steady(r *rand.Rand) {
	sc.mode, sc.steps, sc.slow = steadyMode, nil, make([]time.Duration, sc.members)
	for m := range sc.slow {
		if r.IntN(3) == 0 {
			sc.slow[m] = time.Millisecond + time.Duration(r.Int64N(int64(ttl/5)/int64(max(*qslowFlag, 1))))
		}
	}
	kinds := []qfault{qDown, qHang, qFail, qLose}
	for at := 3 * ttl; ; {
		s := qstep{at: at.Truncate(time.Millisecond) + time.Millisecond/2, fault: kinds[r.IntN(len(kinds))], who: -1, members: []int{r.IntN(sc.members)}, n: 1 + r.IntN(4)}
		s.d = outageLength(r, horizon/4)
		if at+s.d > horizon-2*ttl {
			return
		}
		sc.steps = append(sc.steps, s)
		at += s.d + 3*ttl + time.Duration(r.Int64N(int64(ttl)))
	}
}

// qtenure is one task's run, as the task saw it.
type qtenure struct {
	who        int
	token      uint64
	start, end time.Time
}

// runQuorum runs sc inside the current bubble and returns the tenures.
func runQuorum(t *testing.T, sc qscenario) []qtenure {
	stores := make([]*memlease.Store, sc.members)
	for i := range stores {
		stores[i] = memlease.NewStore()
	}
	id := func(c int) string { return "c" + strconv.Itoa(c) }
	var mu sync.Mutex
	var tenures []qtenure
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	begin := time.Now()
	for c := range sc.contenders {
		members := make([]lease.Lease, sc.members)
		for i, s := range stores {
			l, err := s.Open("job", lease.Options{Identity: id(c), TTL: ttl, CallTimeout: sc.callTimeout})
			if err != nil {
				t.Fatal(err)
			}
			members[i] = l
		}
		q, err := quorumlease.New(members, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{
			Lease:  q,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Rand:   runner.LockedSource(rand.NewPCG(sc.seed, uint64(c))),
			Task: func(ctx context.Context) error {
				term, _ := runner.Term(ctx)
				mu.Lock()
				tenures = append(tenures, qtenure{who: c, token: term.Token, start: time.Now()})
				i := len(tenures) - 1
				mu.Unlock()
				<-ctx.Done()
				mu.Lock()
				tenures[i].end = time.Now()
				mu.Unlock()
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			time.Sleep(sc.starts[c])
			r.Run(ctx)
		})
	}
	// Copies of the unreliable member's record, taken as the run goes,
	// for restores to put back.
	var copies [][]byte
	wg.Go(func() {
		for time.Since(begin) < horizon {
			time.Sleep(ttl/4 + time.Millisecond/3)
			if b, ok := stores[sc.unreliable].Bytes("job"); ok {
				mu.Lock()
				copies = append(copies, b)
				mu.Unlock()
			}
		}
	})
	slow := func(m int, w string) {
		if m < len(sc.slow) && sc.slow[m] > 0 {
			stores[m].Delay(w, sc.slow[m])
		}
	}
	for m := range sc.slow {
		for c := range sc.contenders {
			slow(m, id(c))
		}
	}
	r := rand.New(rand.NewPCG(sc.seed, 0x5eed))
	for _, s := range sc.steps {
		time.Sleep(begin.Add(s.at).Sub(time.Now()))
		who := id(max(s.who, 0))
		whom := []string{who} // the contenders a fault on one contender applies to
		if s.who < 0 {
			whom = nil
			for c := range sc.contenders {
				whom = append(whom, id(c))
			}
		}
		heal := func(members []int, ids ...string) {
			wg.Go(func() {
				time.Sleep(s.d)
				for _, m := range members {
					for _, w := range ids {
						stores[m].Heal(w)
						slow(m, w)
					}
				}
			})
		}
		switch s.fault {
		case qDown:
			var all []string
			for c := range sc.contenders {
				all = append(all, id(c))
				stores[s.members[0]].Partition(id(c))
			}
			heal(s.members, all...)
		case qCut:
			for _, m := range s.members {
				stores[m].Partition(who)
			}
			heal(s.members, who)
		case qPause:
			every := make([]int, sc.members)
			for m := range every {
				every[m] = m
				stores[m].Partition(who)
			}
			heal(every, who)
		case qSlow:
			stores[s.members[0]].Delay(who, s.d)
			heal(s.members, who)
		case qHang:
			for _, w := range whom {
				stores[s.members[0]].Hang(w)
			}
			heal(s.members, whom...)
		case qFail:
			for _, w := range whom {
				stores[s.members[0]].FailNext(w, s.n)
			}
		case qLose:
			for _, w := range whom {
				stores[s.members[0]].LoseResponses(w, s.n)
			}
		case qRestore:
			mu.Lock()
			if len(copies) > 0 {
				stores[sc.unreliable].Put("job", copies[r.IntN(len(copies))])
			}
			mu.Unlock()
		case qDelete:
			stores[sc.unreliable].Delete("job")
		}
	}
	time.Sleep(begin.Add(horizon).Sub(time.Now()))
	cancel()
	wg.Wait()
	time.Sleep(cmp.Or(sc.callTimeout, defaultCallTimeout)) // the members' calls that outlived their operations end within CallTimeout
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(tenures)
}

// synctestStart is when a bubble's clock starts (testing/synctest: midnight
// UTC, 2000-01-01), the schedule's instant 0.
var synctestStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// checkQuorum is the oracle: no two tasks at once, tokens strictly
// increasing in start order; and in a steady schedule, one task from
// before the first outage to the end.
func checkQuorum(sc qscenario, tenures []qtenure) []string {
	slices.SortStableFunc(tenures, func(a, b qtenure) int { return a.start.Compare(b.start) })
	var v []string
	if sc.mode == steadyMode && len(sc.steps) > 0 {
		if len(tenures) != 1 {
			v = append(v, fmt.Sprintf("steady: %d tenures, want one: a minority's outage, a slow member, must not change or lapse the leader", len(tenures)))
		} else if first := tenures[0].start.Sub(synctestStart); first > sc.steps[0].at {
			v = append(v, fmt.Sprintf("steady: the first leader came at %v, after the first outage at %v", first, sc.steps[0].at))
		}
	}
	for i := 1; i < len(tenures); i++ {
		prev, cur := tenures[i-1], tenures[i]
		if cur.start.Before(prev.end) {
			v = append(v, fmt.Sprintf("two leaders: c%d (token %d) started at %v while c%d (token %d) ran until %v", cur.who, cur.token, cur.start, prev.who, prev.token, prev.end))
		}
		if cur.token <= prev.token {
			v = append(v, fmt.Sprintf("token did not increase: c%d started with %d after c%d's %d", cur.who, cur.token, prev.who, prev.token))
		}
	}
	return v
}

func exploreQuorum(t *testing.T, sc qscenario) (v []string, tenures []qtenure) {
	synctest.Test(t, func(t *testing.T) {
		tenures = runQuorum(t, sc)
		v = checkQuorum(sc, tenures)
	})
	return v, tenures
}

func qreport(sc qscenario, v []string, tenures []qtenure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "quorum seed %d: %d violation(s): %s mode, %d members (unreliable %d), %d contenders starting at %v\n", sc.seed, len(v), qmodeNames[sc.mode], sc.members, sc.unreliable, sc.contenders, sc.starts)
	for _, x := range v[:min(len(v), 5)] {
		fmt.Fprintf(&b, "  %s\n", x)
	}
	if sc.mode == steadyMode {
		fmt.Fprintf(&b, "  members slow for everyone by %v\n", sc.slow)
	}
	if sc.callTimeout != 0 {
		fmt.Fprintf(&b, "  CallTimeout %v\n", sc.callTimeout)
	}
	for _, s := range sc.steps {
		fmt.Fprintf(&b, "  step %s\n", s)
	}
	for _, tn := range tenures {
		fmt.Fprintf(&b, "  c%d led with token %d from %v to %v\n", tn.who, tn.token, tn.start, tn.end)
	}
	fmt.Fprintf(&b, "  replay: go test ./sim -run TestQuorumSimulation -qseed %d\n", sc.seed)
	return b.String()
}

// qtrace is the tenures of a quorum run as text, to compare runs.
func qtrace(tenures []qtenure) string {
	var b strings.Builder
	for _, tn := range tenures {
		fmt.Fprintf(&b, "c%d token %d from %v to %v\n", tn.who, tn.token, tn.start.UnixNano(), tn.end.UnixNano())
	}
	return b.String()
}

// qreplay runs seed's quorum schedule n times and returns how many runs
// were identical to the first (the same tenures, tokens and instants),
// logging the first that differs.
func qreplay(t *testing.T, seed uint64, n int) int {
	sc := newQScenario(seed)
	var first string
	same := 0
	for i := range n {
		_, tenures := exploreQuorum(t, sc)
		switch trace := qtrace(tenures); {
		case i == 0:
			first = trace
		case trace == first:
			same++
		case same == i-1:
			t.Logf("quorum seed %d: run %d differs from the first:\n%s\nfirst:\n%s", seed, i+1, trace, first)
		}
	}
	return same
}

// TestQuorumSimulationReplays: a quorum seed replays exactly, run after
// run, so that a failing seed is a failure to study, not a chance: seeds
// of each mode, with the members' calls in parallel.
func TestQuorumSimulationReplays(t *testing.T) {
	const runs = 4
	for _, seed := range []uint64{1000001, 1000002, 1000008, 1000130, 1000500} {
		if same := qreplay(t, seed, runs); same != runs-1 {
			t.Errorf("quorum seed %d: %d of %d replays identical to the first run", seed, same, runs-1)
		}
	}
}

// TestQuorumSimulation runs LEASEHOLD_QSIM_SCHEDULES quorum schedules
// (10,000 by default, 200 under -race) from LEASEHOLD_QSIM_BASE; -qseed
// N replays one (with -replays M, M times, counting the runs identical
// to the first).
func TestQuorumSimulation(t *testing.T) {
	if *qseedFlag != 0 && *replaysFlag > 0 {
		same := qreplay(t, *qseedFlag, *replaysFlag)
		t.Logf("quorum seed %d: %d of %d replays identical to the first run", *qseedFlag, same, *replaysFlag-1)
		if same != *replaysFlag-1 {
			t.Errorf("quorum seed %d does not replay exactly", *qseedFlag)
		}
		return
	}
	if *qseedFlag != 0 {
		sc := newQScenario(*qseedFlag)
		if v, tenures := exploreQuorum(t, sc); len(v) > 0 {
			t.Fatal(qreport(sc, v, tenures))
		}
		return
	}
	n, base := budget(t, "LEASEHOLD_QSIM", defaultQuorumSchedules)
	var next, failed atomic.Uint64
	began := time.Now()
	t.Run("schedules", func(t *testing.T) {
		for w := range runtime.GOMAXPROCS(0) {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				for {
					i := next.Add(1)
					if i > uint64(n) {
						return
					}
					sc := newQScenario(base + i)
					if v, tenures := exploreQuorum(t, sc); len(v) > 0 {
						if failed.Add(1) <= 3 {
							t.Error(qreport(sc, v, tenures))
						} else if *listFlag {
							t.Logf("failed: quorum seed %d: %s", sc.seed, v[0])
						}
					}
				}
			})
		}
	})
	t.Logf("%d quorum schedules from base %d in %v: %d failed", n, base, time.Since(began).Round(time.Second), failed.Load())
}
