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
	"github.com/leasehold/leasehold/lease/driver"
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
//     hung, failing or losing answers, or answering reads and refusing
//     writes, for any length of time (a store's, a region's or a
//     network's outage, a table out of write capacity), a contender cut
//     off from one member or a majority, paused, or restarted, and the
//     whole fleet restarted together (a deploy, whose start may throttle
//     a member's writes); records are never lost.
//   - lossy: one member, the schedule's unreliable one, has its record
//     restored from an earlier copy or deleted, and every crash fault
//     above, but on that member alone; contenders are paused and
//     restarted.
//
// Beyond them (a record lost on one member while another is out of a
// term's reach) a quorum of three has lost what a majority held, and the
// promise of increasing tokens is void; its runs are not held to it.
//
// Half the faults come at random moments, half within a TTL after the
// one before, where faults combine. Every contender reaches each member
// with a latency of its own, for the whole run (latencies).
//
// The oracle holds crash and lossy runs to liveness too: no span longer
// than qlivenessBound (3 TTLs) without a leader while a majority of the
// members is undisturbed for every contender that is up (clear), and a
// leader within deployBound (1.5 TTLs) of a deploy's contenders starting
// together on a majority of free members that no fault tells apart
// (redeployed). Red team 26's split anchor (d6f0ed0: a campaigning
// contender's fresh anchor passed over as "ending") fails the second.
//
// A quarter of the schedules are drawn in a third mode instead, the
// liveness half:
//
//   - steady: the latencies alone (by up to a quarter of CallTimeout,
//     -qslow, per contender and member), and, from 3 TTLs on, one member
//     at a time down, hung, failing, losing answers or refusing writes
//     for everyone, for any length, each outage 3 to 4 TTLs after
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
	qRefuse                // a member answers one contender's reads, or everyone's, and refuses their writes for D
	qRestart               // one contender's process stops (its task ends, it releases) and starts again D later
	qDeploy                // every contender's process restarts, a millisecond apart, each down for D (a deploy); N=1: their start throttles a member
	qRestore               // the unreliable member's record put back to a copy taken earlier
	qDelete                // the unreliable member's record deleted
	qFaults
)

var qfaultNames = [...]string{"down", "cut", "slow", "hang", "fail", "lose", "pause", "refuse", "restart", "deploy", "restore", "delete"}

// qstep is one fault at one instant.
type qstep struct {
	at      time.Duration
	fault   qfault
	who     int   // contender; -1: every contender
	members []int // members it applies to
	n       int
	d       time.Duration
}

func (s qstep) String() string {
	who := "c" + strconv.Itoa(s.who)
	if s.who < 0 {
		who = "everyone"
	}
	return fmt.Sprintf("%v %s %s members %v n=%d d=%v", s.at, qfaultNames[s.fault], who, s.members, s.n, s.d)
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
	slow       [][]time.Duration // each member's delay for each contender, the whole run
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
		if s.fault == qRefuse && r.IntN(2) == 0 {
			s.who = -1
		}
		if len(sc.steps) > 0 && r.IntN(2) == 0 { // a cluster: within a TTL after the fault before, where faults combine
			s.at = sc.steps[len(sc.steps)-1].at + time.Duration(r.Int64N(int64(ttl))).Truncate(time.Millisecond)
		}
		switch s.fault { // not before the processes started
		case qRestart:
			s.at = max(s.at, sc.starts[s.who]+time.Millisecond/2)
		case qDeploy:
			s.who, s.at = -1, max(s.at, slices.Max(sc.starts)+time.Millisecond/2)
		}
		switch {
		case s.fault == qPause || s.fault == qRestart:
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
	sc.latencies(rand.New(rand.NewPCG(seed, 0x1a7e)))
	return sc
}

// latencies draws each contender's delay to each member, for the whole
// run: a quorum spans regions, and a member near one contender is far
// from another. Half the pairs are slow, by up to the default CallTimeout
// over -qslow (a twentieth of the TTL at the default CallTimeout, near the most any
// lease's renewals can take, a sixteenth). Contenders that start together
// then read the anchor at different moments, which is what splits it when
// a contender passes over a member it should not (red team 26).
func (sc *qscenario) latencies(r *rand.Rand) {
	most := defaultCallTimeout / time.Duration(max(*qslowFlag, 1))
	sc.slow = make([][]time.Duration, sc.members)
	for m := range sc.slow {
		sc.slow[m] = make([]time.Duration, sc.contenders)
		for c := range sc.slow[m] {
			if r.IntN(2) == 0 {
				sc.slow[m][c] = time.Millisecond + time.Duration(r.Int64N(int64(most))).Truncate(time.Millisecond)
			}
		}
	}
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
	sc.mode, sc.steps = steadyMode, nil
	kinds := []qfault{qDown, qHang, qFail, qLose, qRefuse}
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
func runQuorum(t *testing.T, sc qscenario) (tenures []qtenure, free [][]bool) {
	stores := make([]*memlease.Store, sc.members)
	for i := range stores {
		stores[i] = memlease.NewStore()
	}
	id := func(c int) string { return "c" + strconv.Itoa(c) }
	var mu sync.Mutex
	free = make([][]bool, len(sc.steps)) // by deploy: the members free as its processes start again
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	begin := time.Now()
	refusing := make([][]atomic.Int32, sc.members) // refusals under way, by member and contender
	for m := range refusing {
		refusing[m] = make([]atomic.Int32, sc.contenders)
	}
	// newRunner is contender c's process, started for the k-th time: its
	// own Leases, which have seen nothing yet.
	newRunner := func(c, k int) (*runner.Runner, error) {
		members := make([]lease.Lease, sc.members)
		for i, s := range stores {
			l, err := s.Open("job", lease.Options{Identity: id(c), TTL: ttl, CallTimeout: sc.callTimeout})
			if err != nil {
				return nil, err
			}
			members[i] = refusable{l, &refusing[i][c]}
		}
		q, err := quorumlease.New(members, nil)
		if err != nil {
			return nil, err
		}
		return runner.New(runner.Config{
			Lease:  q,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Rand:   runner.LockedSource(rand.NewPCG(sc.seed, uint64(c+k*sc.contenders))),
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
	}
	// The members' latencies, set before any contender starts: set after,
	// a contender that starts at once could make its first calls before
	// its delay, or after, as the goroutines happened to run, and a seed
	// did not replay (TestQuorumSimulationReplays, one run in six).
	slow := func(m, c int) {
		if d := sc.slow[m][c]; d > 0 {
			stores[m].Delay(id(c), d)
		}
	}
	every := make([]int, sc.contenders)
	for c := range every {
		every[c] = c
		for m := range sc.members {
			slow(m, c)
		}
	}
	restarts := make([]chan time.Duration, sc.contenders) // when a process stopped now starts again
	for c := range sc.contenders {
		restarts[c] = make(chan time.Duration, len(sc.steps))
		wg.Go(func() {
			time.Sleep(sc.starts[c])
			for k := 0; ; k++ {
				r, err := newRunner(c, k)
				if err != nil {
					t.Error(err)
					return
				}
				run, stop := context.WithCancel(ctx)
				ran := make(chan struct{})
				go func() {
					defer close(ran)
					r.Run(run)
				}()
				select {
				case <-ctx.Done():
					<-ran
					stop()
					return
				case again := <-restarts[c]:
					stop()
					<-ran
					select {
					case <-ctx.Done():
						return
					case <-time.After(begin.Add(again).Sub(time.Now())):
					}
					for len(restarts[c]) > 0 { // a restart while it was down is none
						<-restarts[c]
					}
				}
			}
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
	r := rand.New(rand.NewPCG(sc.seed, 0x5eed))
	for i, s := range sc.steps {
		time.Sleep(begin.Add(s.at).Sub(time.Now()))
		who := id(max(s.who, 0))
		whom := []int{s.who} // the contenders a fault on one contender applies to
		if s.who < 0 {
			whom = every
		}
		heal := func(members []int, cs ...int) {
			wg.Go(func() {
				time.Sleep(s.d)
				for _, m := range members {
					for _, c := range cs {
						stores[m].Heal(id(c))
						slow(m, c)
					}
				}
			})
		}
		switch s.fault {
		case qDown:
			for c := range sc.contenders {
				stores[s.members[0]].Partition(id(c))
			}
			heal(s.members, every...)
		case qCut:
			for _, m := range s.members {
				stores[m].Partition(who)
			}
			heal(s.members, s.who)
		case qPause:
			all := make([]int, sc.members)
			for m := range all {
				all[m] = m
				stores[m].Partition(who)
			}
			heal(all, s.who)
		case qSlow:
			stores[s.members[0]].Delay(who, s.d)
			heal(s.members, s.who)
		case qHang:
			for _, c := range whom {
				stores[s.members[0]].Hang(id(c))
			}
			heal(s.members, whom...)
		case qFail:
			for _, c := range whom {
				stores[s.members[0]].FailNext(id(c), s.n)
			}
		case qLose:
			for _, c := range whom {
				stores[s.members[0]].LoseResponses(id(c), s.n)
			}
		case qRefuse:
			for _, c := range whom {
				refusing[s.members[0]][c].Add(1)
			}
			wg.Go(func() {
				time.Sleep(s.d)
				for _, c := range whom {
					refusing[s.members[0]][c].Add(-1)
				}
			})
		case qRestart:
			restarts[s.who] <- s.at + s.d
		case qDeploy:
			wg.Go(func() {
				for c := range sc.contenders {
					at := s.at + time.Duration(c)*time.Millisecond
					time.Sleep(begin.Add(at).Sub(time.Now()))
					restarts[c] <- at + s.d
				}
				if s.at+s.d >= horizon {
					return
				}
				time.Sleep(begin.Add(s.at + s.d - time.Millisecond/4).Sub(time.Now()))
				f := make([]bool, sc.members)
				for m, st := range stores {
					b, ok := st.Bytes("job")
					rec, err := driver.DecodeJSON(b)
					f[m] = !ok || (err == nil && !rec.Held())
				}
				mu.Lock()
				free[i] = f
				mu.Unlock()
				if t, ok := s.throttled(); ok {
					for c := range sc.contenders {
						refusing[s.members[0]][c].Add(1)
					}
					time.Sleep(begin.Add(min(t.to, horizon)).Sub(time.Now()))
					for c := range sc.contenders {
						refusing[s.members[0]][c].Add(-1)
					}
				}
			})
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
	return slices.Clone(tenures), free
}

// refusable is a member that, while refusing is above 0, answers reads
// and refuses every write with lease.ErrUnavailable: a table out of
// write capacity (DynamoDB's throttling), or a bucket whose writes are
// denied. Its reads keep showing the last record written, which may be a
// contender's release of an earlier attempt (red team 26).
type refusable struct {
	lease.Lease
	refusing *atomic.Int32
}

func (l refusable) refused() error {
	if l.refusing.Load() > 0 {
		return fmt.Errorf("sim: writes refused: %w", lease.ErrUnavailable)
	}
	return nil
}

func (l refusable) Acquire(ctx context.Context) (lease.Term, error) {
	if err := l.refused(); err != nil {
		return lease.Term{}, err
	}
	return l.Lease.Acquire(ctx)
}

func (l refusable) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := l.refused(); err != nil {
		return lease.Term{}, err
	}
	return l.Lease.Renew(ctx, t)
}

func (l refusable) Release(ctx context.Context, t lease.Term) error {
	if err := l.refused(); err != nil {
		return err
	}
	return l.Lease.Release(ctx, t)
}

func (l refusable) Keep(ctx context.Context, t lease.Term, d time.Duration) error {
	if err := l.refused(); err != nil {
		return err
	}
	return l.Lease.(lease.Keeper).Keep(ctx, t, d)
}

func (l refusable) Break(ctx context.Context, rec lease.Record) (lease.Record, error) {
	if err := l.refused(); err != nil {
		return lease.Record{}, err
	}
	return l.Lease.(lease.Breaker).Break(ctx, rec)
}

func (l refusable) Wait(rec lease.Record) time.Duration { return l.Lease.(lease.Watcher).Wait(rec) }

// synctestStart is when a bubble's clock starts (testing/synctest: midnight
// UTC, 2000-01-01), the schedule's instant 0.
var synctestStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// span is a stretch of a schedule, from its start.
type span struct{ from, to time.Duration }

// disturbed returns the spans in which a fault on member m disturbs
// contender c's calls to it, each until the calls it slowed have
// landed (slow: a call sent as it heals lands up to D later) and, for the
// faults that last a number of calls (fail, lose) or leave a record to
// lapse (restore, delete), a TTL.
func (sc qscenario) disturbed(c, m int) []span {
	var out []span
	for _, s := range sc.steps {
		on := slices.Contains(s.members, m) && (s.who < 0 || s.who == c)
		switch s.fault {
		case qPause, qRestart:
			on = false
		case qDeploy:
			if t, ok := s.throttled(); ok && s.members[0] == m {
				out = append(out, t)
			}
			continue
		case qDown:
			on = s.members[0] == m
		case qRestore, qDelete:
			on = m == sc.unreliable
		}
		if !on {
			continue
		}
		d := s.d
		switch s.fault {
		case qSlow:
			d = 2 * s.d
		case qFail, qLose, qRestore, qDelete:
			d = ttl
		}
		out = append(out, span{s.at, s.at + d})
	}
	return out
}

// down returns the spans in which contender c's process is not running
// or cannot reach any member: before it starts, restarting, paused.
func (sc qscenario) down(c int) []span {
	out := []span{{0, sc.starts[c]}}
	for _, s := range sc.steps {
		switch {
		case (s.fault == qPause || s.fault == qRestart) && s.who == c:
			out = append(out, span{s.at, s.at + s.d})
		case s.fault == qDeploy:
			at := s.at + time.Duration(c)*time.Millisecond
			out = append(out, span{at, at + s.d})
		}
	}
	return out
}

// clear returns the spans in which some contender is up, and a majority
// of the members are undisturbed for every contender that is up: none of
// those can read a member differently from another, or fail to write it.
// A contender that is down does nothing a member would see.
func (sc qscenario) clear() []span {
	down := make([][]span, sc.contenders)
	disturbed := make([][][]span, sc.contenders)
	cuts := []time.Duration{0, horizon}
	add := func(ss []span) {
		for _, d := range ss {
			cuts = append(cuts, min(d.from, horizon), min(d.to, horizon))
		}
	}
	for c := range sc.contenders {
		down[c] = sc.down(c)
		add(down[c])
		disturbed[c] = make([][]span, sc.members)
		for m := range sc.members {
			disturbed[c][m] = sc.disturbed(c, m)
			add(disturbed[c][m])
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []span
	for i := 1; i < len(cuts); i++ {
		from, to := cuts[i-1], cuts[i]
		in := func(ss []span) bool {
			return slices.ContainsFunc(ss, func(d span) bool { return d.from <= from && to <= d.to })
		}
		var up []int
		for c := range sc.contenders {
			if !in(down[c]) {
				up = append(up, c)
			}
		}
		clean := 0
		for m := range sc.members {
			if !slices.ContainsFunc(up, func(c int) bool { return in(disturbed[c][m]) }) {
				clean++
			}
		}
		switch {
		case len(up) == 0 || clean <= sc.members/2:
		case len(out) > 0 && out[len(out)-1].to == from:
			out[len(out)-1].to = to
		default:
			out = append(out, span{from, to})
		}
	}
	return out
}

// leaderless returns the spans with no task running; tenures are sorted
// by start.
func leaderless(tenures []qtenure) []span {
	var out []span
	led := time.Duration(0)
	for _, tn := range tenures {
		if from := tn.start.Sub(synctestStart); from > led {
			out = append(out, span{led, from})
		}
		end := horizon
		if !tn.end.IsZero() {
			end = tn.end.Sub(synctestStart)
		}
		led = max(led, end)
	}
	if led < horizon {
		out = append(out, span{led, horizon})
	}
	return out
}

// qlivenessBound is how long the crash and lossy schedules may go without
// a leader while a majority of the members are undisturbed for every
// contender that is up (see clear). The fixed code's longest such span
// over 3,000 schedules was 2.7 TTLs.
//
// It holds only when CallTimeout is at most the renew interval. Past it,
// a contender whose calls to one member time out (slow, hung) waits that
// CallTimeout at every other attempt, its reads of the other members
// come more than a renew interval apart, and its count of a held
// record starts again each time: it takes nothing over until that
// member answers (open; seed 1001413: 3.5 TTLs).
const qlivenessBound = 3 * ttl

// worstLeaderless returns the longest span with no leader in which a
// majority of the members were undisturbed all along for every
// contender that was up, and some contender was.
func worstLeaderless(sc qscenario, tenures []qtenure) (worst span) {
	gaps := leaderless(tenures)
	for _, cl := range sc.clear() {
		for _, g := range gaps {
			if o := (span{max(cl.from, g.from), min(cl.to, g.to)}); o.to-o.from > worst.to-worst.from {
				worst = o
			}
		}
	}
	return worst
}

// throttled returns the span in which a deploy's start has its member
// refuse every write, for everyone: the fleet's burst of writes as it
// starts took a table's write capacity, for as long as the fleet was
// down, a TTL at least.
func (s qstep) throttled() (span, bool) {
	if s.fault != qDeploy || s.n != 1 {
		return span{}, false
	}
	again := s.at + s.d
	return span{again - time.Millisecond/4, again + max(s.d, ttl)}, true
}

// lasting returns the span in which step s acts, as disturbed and down
// count it.
func (s qstep) lasting() span {
	switch s.fault {
	case qSlow:
		return span{s.at, s.at + 2*s.d}
	case qFail, qLose, qRestore, qDelete:
		return span{s.at, s.at + ttl}
	}
	return span{s.at, s.at + s.d}
}

// deployBound is how long after a deploy's contenders start again the
// quorum simulation wants a leader, when they start on a majority of
// free members that no contender can tell apart from another (see
// redeployed).
const deployBound = 3 * ttl / 2

// redeployed returns the instants at which a deploy's contenders started
// together again on a majority of the members that were free (its
// processes released them as they stopped: free, as the run found them
// just before) and that no fault disturbed until deployBound after, every
// fault acting then being one on a member for every contender alike. Of
// several contenders that start together, the one that takes the first
// member reachable goes on at once (the package doc); before the anchor
// could split, as red team 26 found, two of them each kept a member a TTL
// and gave it back, again and again.
func (sc qscenario) redeployed(free [][]bool) []time.Duration {
	var out []time.Duration
	for i, d := range sc.steps {
		if d.fault != qDeploy || free[i] == nil {
			continue
		}
		again := d.at + d.d
		w := span{again, again + deployBound}
		undisturbed := slices.Clone(free[i])
		if _, ok := d.throttled(); ok {
			undisturbed[d.members[0]] = false
		}
		downed := make([]bool, sc.members)
		alike := true
		for j, s := range sc.steps {
			if l := s.lasting(); j == i || l.to <= w.from || l.from >= w.to {
				continue
			}
			switch {
			case s.fault == qDown || (s.who < 0 && s.fault != qDeploy):
				for _, m := range s.members {
					undisturbed[m] = false
					downed[m] = downed[m] || s.fault == qDown
				}
			default:
				alike = false
			}
		}
		// The members before the first free one undisturbed must be passed
		// over at once: free (a write refused makes it unreachable) or down.
		anchor := slices.Index(undisturbed, true)
		passed := anchor >= 0
		for m := range max(anchor, 0) {
			passed = passed && (free[i][m] || downed[m])
		}
		if alike && passed && countTrue(undisturbed) > sc.members/2 && w.to <= horizon {
			out = append(out, again)
		}
	}
	return out
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// checkQuorum is the oracle: no two tasks at once, tokens strictly
// increasing in start order; in a steady schedule, one task from before
// the first outage to the end; in a crash or lossy one, no span longer
// than qlivenessBound without a leader while a majority of the members
// are undisturbed for every contender that is up (clear).
func checkQuorum(sc qscenario, tenures []qtenure, free [][]bool) []string {
	slices.SortStableFunc(tenures, func(a, b qtenure) int { return a.start.Compare(b.start) })
	var v []string
	if sc.mode == steadyMode && len(sc.steps) > 0 {
		if len(tenures) != 1 {
			v = append(v, fmt.Sprintf("steady: %d tenures, want one: a minority's outage, a slow member, must not change or lapse the leader", len(tenures)))
		} else if first := tenures[0].start.Sub(synctestStart); first > sc.steps[0].at {
			v = append(v, fmt.Sprintf("steady: the first leader came at %v, after the first outage at %v", first, sc.steps[0].at))
		}
	}
	if sc.mode != steadyMode {
		if w := worstLeaderless(sc, tenures); w.to-w.from > qlivenessBound && cmp.Or(sc.callTimeout, defaultCallTimeout) <= runner.DefaultRenewInterval(ttl) {
			v = append(v, fmt.Sprintf("no leader from %v to %v (%.1f TTLs), though a majority of the members was undisturbed all along for every contender up: want one within %v", w.from, w.to, float64(w.to-w.from)/float64(ttl), qlivenessBound))
		}
		for _, again := range sc.redeployed(free) {
			if !slices.ContainsFunc(tenures, func(tn qtenure) bool {
				at := tn.start.Sub(synctestStart)
				return again <= at && at <= again+deployBound
			}) {
				v = append(v, fmt.Sprintf("no leader within %v of a deploy's contenders starting together at %v on a majority of free members, undisturbed, every fault alike for all", deployBound, again))
			}
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
		var free [][]bool
		tenures, free = runQuorum(t, sc)
		v = checkQuorum(sc, tenures, free)
	})
	return v, tenures
}

func qreport(sc qscenario, v []string, tenures []qtenure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "quorum seed %d: %d violation(s): %s mode, %d members (unreliable %d), %d contenders starting at %v\n", sc.seed, len(v), qmodeNames[sc.mode], sc.members, sc.unreliable, sc.contenders, sc.starts)
	for _, x := range v[:min(len(v), 5)] {
		fmt.Fprintf(&b, "  %s\n", x)
	}
	fmt.Fprintf(&b, "  latencies by member, then contender: %v\n", sc.slow)
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
