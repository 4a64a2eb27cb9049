package sim_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	cliwatch "github.com/leasehold/leasehold/internal/watch"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/runner"
)

var (
	seedFlag    = flag.Uint64("seed", 0, "replay the schedule of this seed (0: explore)")
	stepsFlag   = flag.String("steps", "", "with -seed: keep only these steps (a shrunk trace), e.g. 0,3,5")
	listFlag    = flag.Bool("list", false, "log every schedule that failed, with its classes of violation and timing")
	replaysFlag = flag.Int("replays", 0, "with -seed: run the schedule this many times and count the runs identical to the first")
	// A search can be focused on some contenders, faults and one store shape.
	kindsFlag  = flag.String("kinds", "", "only these contender kinds, e.g. run,once (default: all)")
	faultsFlag = flag.String("faults", "", "only these faults, e.g. restore,fail-reads, or none (default: all)")
	storeFlag  = flag.String("store", "", "keep: only stores with Keep; nokeep: only without (default: both)")
)

// focus is what a search is limited to.
type focus struct {
	kinds  []kind
	faults []fault
	keep   []bool
	// unpaired draws schedules as they were before late answers came to
	// arm a restore-hang too (a2824cc), so that the seeds found before
	// replay as found (TestFoundSeeds).
	unpaired bool
}

func parseFocus() (focus, error) { return focusOf(*kindsFlag, *faultsFlag, *storeFlag) }

// focusOf is the focus that the flags -kinds, -faults and -store (each ""
// for all) name.
func focusOf(kinds, faults, store string) (focus, error) {
	f := focus{keep: []bool{true, false}}
	for i := range kindNames {
		f.kinds = append(f.kinds, kind(i))
	}
	for i := range faultNames {
		f.faults = append(f.faults, fault(i))
	}
	if kinds != "" {
		f.kinds = nil
		for _, n := range strings.Split(kinds, ",") {
			i := slices.Index(kindNames[:], n)
			if i < 0 {
				return f, fmt.Errorf("-kinds: %q is not one of %v", n, kindNames)
			}
			f.kinds = append(f.kinds, kind(i))
		}
	}
	switch faults {
	case "":
	case "none":
		f.faults = nil
	default:
		f.faults = nil
		for _, n := range strings.Split(faults, ",") {
			i := slices.Index(faultNames[:], n)
			if i < 0 {
				return f, fmt.Errorf("-faults: %q is not one of %v", n, faultNames)
			}
			f.faults = append(f.faults, fault(i))
		}
	}
	switch store {
	case "":
	case "keep":
		f.keep = []bool{true}
	case "nokeep":
		f.keep = []bool{false}
	default:
		return f, fmt.Errorf("-store: %q is not keep or nokeep", store)
	}
	return f, nil
}

const (
	ttl     = 3 * time.Second
	horizon = 40 * ttl
	// period is the length of one scheduled period of the RunOnce callers.
	period = 6 * ttl
)

// kind is a contender's kind.
type kind int

const (
	runKind   kind = iota // Runner.Run
	childKind             // Runner.Run with the CLI's child model: drains, killed by Expiry
	onceKind              // RunOnce, fired by a scheduler, duplicates included
	pairKind              // two Runners (Run) on one Lease value
)

var kindNames = [...]string{"run", "child", "once", "pair"}

// contender is one identity's part in a schedule.
type contender struct {
	id    string
	kind  kind
	stall time.Duration // StallTimeout, 0: off
	// RunOnce callers:
	period  bool          // Config.Period set (the period's index)
	retry   bool          // Config.RetryFailed
	minHold time.Duration // Config.MinHold
	reuse   bool          // one Lease value for every invocation
}

func (c contender) String() string {
	s := c.id + ":" + kindNames[c.kind]
	if c.stall > 0 {
		s += fmt.Sprintf(" stall=%v", c.stall)
	}
	if c.kind == onceKind {
		s += fmt.Sprintf(" period=%t retry=%t minHold=%v reuse=%t", c.period, c.retry, c.minHold, c.reuse)
	}
	return s
}

// fault is one kind of step.
type fault int

const (
	failReads    fault = iota // the next N reads of Who fail
	failWrites                // the next N writes of Who fail
	loseAnswer                // the next N writes of Who are applied, their answers lost
	slowCalls                 // the next N calls of Who take D, past CallTimeout (and are applied then)
	hang                      // every call of Who hangs for D (longer than the TTL)
	restore                   // an earlier body of the current term is put back (same bytes, same version)
	foreign                   // a foreign object replaces the record; a person restores the last body D later
	deleteRec                 // the record is deleted
	sick                      // Who's health checks fail for D
	stall                     // Who's tasks make no progress for D
	taskEnd                   // Who's running tasks return
	lateAnswer                // the next N writes of Who, and the read after each, are applied at once and answered late (up to 1.5 CallTimeouts)
	restoreHang               // at Who's next write of a term over an earlier body of it, that body is put back and Who hangs for D
	breakLease                // an operator runs leasehold break (no --force) on the lease; N=1: a restore lands during its watch
	outage                    // Who's calls fail for D, from when its next task returns (N=1) or as its hold ends (N>1)
	restoreUnder              // at the next takeover of a term of Who, D later, a held body of that term is put back under the successor; Who's tasks ignore cancellation until then, and its calls come back then
	nFaults
)

var faultNames = [...]string{"fail-reads", "fail-writes", "lose-answer", "slow", "hang", "restore", "foreign", "delete", "sick", "stall", "task-returns",
	"late-answer", "restore-hang", "break", "outage", "restore-under"}

// stateFaults are the faults that put back or replace what the record
// said (a restore, a foreign object, a delete, a restore-under): the period, the hold and the
// done mark are not promised across them.
var stateFaults = []fault{restore, foreign, deleteRec, restoreHang, restoreUnder}

// cutFaults are the faults that cut a contender off from the store for
// longer than its deadlines: what it could not write then is not promised.
var cutFaults = []fault{hang, slowCalls, restoreHang}

// step is one fault at one moment.
type step struct {
	At   time.Duration
	F    fault
	Who  int
	N    int
	D    time.Duration
	Seed uint64 // a restore's choice
}

func (s step) String() string {
	return fmt.Sprintf("+%-8v %-12s who=%d n=%d d=%v", s.At, faultNames[s.F], s.Who, s.N, s.D)
}

// scenario is one schedule: the store's shape, the fleet's timing, the
// contenders and the faults, all drawn from one seed.
type scenario struct {
	seed       uint64
	keep       bool // the store keeps a record held without its holder (lease.Keeper)
	contenders []contender
	steps      []step
	// The fleet's timing (0: the default): a CallTimeout up to the renew
	// deadline, and a RenewDeadline up to TTL - RenewInterval + TTL/16
	// (past it, runner.New refuses the Config: the contenders do not run).
	callTimeout, renewDeadline time.Duration
}

// timing draws the fleet's timing: the defaults half of the time; else a
// CallTimeout between the default and the renew deadline, and a quarter of
// the time a RenewDeadline around TTL - RenewInterval, the most the
// runner accepts.
func (sc *scenario) timing(rng *rand.Rand) {
	switch rng.IntN(8) {
	case 0, 1, 2, 3:
	case 4, 5, 6:
		sc.callTimeout = drawCallTimeout(rng)
	case 7:
		ri := lease.DefaultRenewInterval(ttl)
		sc.renewDeadline = ttl - ri - ttl/16 + time.Duration(rng.Int64N(int64(ttl/8)))
	}
	sc.callTimeout, sc.renewDeadline = sc.callTimeout.Truncate(time.Millisecond), sc.renewDeadline.Truncate(time.Millisecond)
}

// deadline is the fleet's RenewDeadline.
func (sc scenario) deadline() time.Duration {
	return cmp.Or(sc.renewDeadline, runner.DefaultRenewDeadline(ttl))
}

// leads is the longest a term's task runs after its last successful write
// was sent: to the renew deadline (Run, RunOnce), or a child's to its kill
// before runner.Expiry, a TTL less a renew interval after that write.
func (sc scenario) leads() time.Duration {
	return max(sc.deadline(), ttl-lease.DefaultRenewInterval(ttl))
}

// timeout is the fleet's CallTimeout.
func (sc scenario) timeout() time.Duration { return cmp.Or(sc.callTimeout, defaultCallTimeout) }

// defaultCallTimeout is a lease's CallTimeout at the simulations' TTL by
// default.
var defaultCallTimeout = lease.Options{TTL: ttl}.WithDefaults().CallTimeout

// drawCallTimeout draws a CallTimeout from the default up to the runner's
// renew deadline (runner.New refuses one at it), in whole milliseconds.
func drawCallTimeout(rng *rand.Rand) time.Duration {
	return (defaultCallTimeout + time.Duration(rng.Int64N(int64(runner.DefaultRenewDeadline(ttl)-defaultCallTimeout)))).Truncate(time.Millisecond)
}

func newScenario(seed uint64, fo focus) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x1ea5e401d))
	sc := scenario{seed: seed, keep: fo.keep[rng.IntN(len(fo.keep))]}
	sc.timing(rng)
	retry := rng.IntN(2) == 0 // one RetryFailed for the fleet: it says what a period is
	for i := range 2 + rng.IntN(3) {
		c := contender{id: "w" + strconv.Itoa(i), kind: fo.kinds[rng.IntN(len(fo.kinds))]}
		if rng.IntN(3) == 0 {
			c.stall = ttl / 2
		}
		if c.kind == onceKind {
			c.period, c.retry, c.reuse = rng.IntN(3) > 0, retry, rng.IntN(2) == 0
			if rng.IntN(2) == 0 {
				c.minHold = time.Duration(1+rng.IntN(3)) * ttl
			}
		}
		sc.contenders = append(sc.contenders, c)
	}
	for range 4 + rng.IntN(16) {
		if len(fo.faults) == 0 {
			break
		}
		s := step{
			At:   time.Duration(rng.Int64N(int64(horizon - 2*ttl))),
			F:    fo.faults[rng.IntN(len(fo.faults))],
			Who:  rng.IntN(len(sc.contenders)),
			N:    1 + rng.IntN(3),
			Seed: rng.Uint64(),
		}
		// Half the faults come in clusters: on the contender of the one
		// before, within a TTL after it, where windows open only to faults
		// that combine (a late answer, then a restore and a hang).
		if n := len(sc.steps); n > 0 && rng.IntN(2) == 0 {
			prev := sc.steps[n-1]
			s.At, s.Who = min(horizon-2*ttl, prev.At+time.Duration(rng.Int64N(int64(ttl)))), prev.Who
		}
		// Steps come half a millisecond off the millisecond grid the
		// contenders' own timers keep, so that no step ties with a call.
		s.At = s.At.Truncate(time.Millisecond) + time.Millisecond/2
		switch s.F {
		case slowCalls:
			s.D = ttl/5 + time.Duration(rng.Int64N(int64(ttl/2)))
		case hang, restoreHang:
			s.D = ttl + time.Duration(rng.Int64N(int64(ttl)))
		case outage: // shorter than a holder's slack after its last write: survivable
			s.D = time.Duration(rng.Int64N(int64(ttl - sc.deadline())))
		case restoreUnder: // before the successor's first renewal, which would find the body and end its term
			s.D = time.Duration(rng.Int64N(int64(lease.DefaultRenewInterval(ttl))))
		default:
			s.D = time.Duration(rng.Int64N(int64(2 * ttl)))
		}
		s.D = s.D.Truncate(time.Millisecond)
		sc.steps = append(sc.steps, s)
		// A late answer on an Acquire reaches RunOnce's period-mark window
		// only when the mark that follows it is hidden (a restore-hang on
		// the same contender, which fires at the mark): half the late
		// answers arm one with them, drawn from the step's own seed so that
		// every other draw of the schedule stays as it was.
		if s.F == lateAnswer && s.Seed%2 == 0 && slices.Contains(fo.faults, restoreHang) && !fo.unpaired {
			sc.steps = append(sc.steps, step{At: s.At, F: restoreHang, Who: s.Who, N: 1, D: (ttl + time.Duration(s.Seed/2%uint64(ttl))).Truncate(time.Millisecond), Seed: s.Seed / 2})
		}
	}
	slices.SortStableFunc(sc.steps, func(a, b step) int { return int(a.At - b.At) })
	return sc
}

// event is one entry of the history.
type event struct {
	at    time.Duration
	task  int
	who   string
	start bool
	// a start's:
	token   uint64
	period  string
	retry   bool
	minHold time.Duration
	called  time.Duration // when its RunOnce was called
	opened  time.Duration // when its Lease value was opened
	// an end's:
	ok bool
}

// outcome is how one RunOnce task's term ended, for the hold and done
// checks: cut says that the term ended as lost or past its deadline.
type outcome struct {
	cut bool
}

// history is everything that happened, on the bubble's clock.
type history struct {
	mu       sync.Mutex
	t0       time.Time
	events   []event
	faults   []step // as applied, At = when
	outcomes map[int]outcome
	lingered map[int]bool // tasks that ran on after their cancellation (see linger)
	calls    []call       // RunOnce invocations
	st       *store
	nextTask int
}

type call struct {
	who    string
	at     time.Duration
	period string
	ran    int // the task it ran, -1: none
}

func (h *history) now() time.Duration { return time.Since(h.t0) }

func (h *history) start(who string, t lease.Term, period string, retry bool, minHold, called, opened time.Duration) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextTask++
	h.events = append(h.events, event{at: h.now(), task: h.nextTask, who: who, start: true, token: t.Token, period: period, retry: retry, minHold: minHold, called: called, opened: opened})
	return h.nextTask
}

func (h *history) end(task int, who string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, event{at: h.now(), task: task, who: who, ok: ok})
}

// linger notes that task ran on after its cancellation (an armed
// restore-under): its minimum hold is not promised, as the hold is written
// only once the task has returned, which may be after its lease lapsed
// (sim seed 1796172335227442567: a stalled task stepped down, ran on past
// the TTL, and its hold was never written).
func (h *history) linger(task int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lingered[task] = true
}

func (h *history) fault(s step) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.At = h.now()
	h.faults = append(h.faults, s)
}

// faultIn reports whether a fault of one of kinds (on who, if the kind
// names one) came within [from, to].
func (h *history) faultIn(from, to time.Duration, who int, kinds ...fault) bool {
	for _, f := range h.faults {
		if f.At >= from && f.At <= to && slices.Contains(kinds, f.F) && (who < 0 || f.Who == who || f.F != restoreHang && slices.Contains(stateFaults, f.F)) {
			return true
		}
	}
	return false
}

// check is the oracle: it reads the whole history and returns every
// violation of the promises (see the package doc).
func (h *history) check(sc scenario) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	whoIndex := func(id string) int {
		for i, c := range sc.contenders {
			if c.id == id {
				return i
			}
		}
		return -1
	}
	running := map[int]event{}
	var starts []event
	var maxToken uint64
	var maxAt time.Duration
	var maxEv event
	ends := map[int]event{}
	for _, e := range h.events {
		if !e.start {
			ends[e.task] = e
		}
	}
	for _, e := range h.events {
		if !e.start {
			delete(running, e.task)
			continue
		}
		// A Lease opened after a delete knows only what it reads: it may
		// create the record at once, with token 1 (rule 10 binds only a
		// process that saw the record before). An earlier term's record
		// may have been written, and deleted, before its task started
		// (answers late by up to two CallTimeouts, a mark): a delete up to
		// two TTLs before that start counts.
		deletedUnseen := func(since time.Duration) bool {
			since -= 2 * ttl
			return h.faultIn(max(since, e.opened), e.at, -1, deleteRec) || h.faultIn(since, e.at, -1, deleteRec) && e.opened > since
		}
		// restore-under puts back a body of an ended term under its
		// successor: a contender that counted that body before the record
		// moved on takes it over, never having seen the newer record, and
		// no design that reads only the object can tell (see the package
		// doc); and a Lease that never saw a token may write it again
		// (rule 10 binds only what a Lease has read or written).
		// Either of two terms may be the one that took the body over: a
		// start whose acquisition was answered late comes after the
		// takeover of the restored body it was hidden by.
		// Only the pair of the taker and the term whose record the body
		// replaced is waived, and only while that term may lead (by its
		// renew deadline, a child by its kill: sc.leads()).
		tookRestored := func(p, q event) bool {
			a, ok := h.st.acqOf(p.who, p.token, h.t0.Add(p.at))
			return ok && h.st.tookRestored(a, q.who, q.token, h.t0.Add(e.at), sc.leads())
		}
		// And the release of a term that began so frees the lease at
		// once under the holder whose record the body replaced, which
		// leads on until its next renewal: whoever takes the released
		// record then cannot tell either (releasedTaken). Only that
		// holder is waived.
		tookFreed := func(r event) bool {
			a, ok := h.st.acqOf(e.who, e.token, h.t0.Add(e.at))
			return ok && h.st.tookFreed(a, r.who, r.token, h.t0.Add(e.at), sc.leads())
		}
		// unseenToken: of the writes that started e's and p's terms, the
		// later came from a Lease that never saw the other's token.
		unseenToken := func(p event) bool {
			a, okA := h.st.acqOf(e.who, e.token, h.t0.Add(e.at))
			b, okB := h.st.acqOf(p.who, p.token, h.t0.Add(p.at))
			other := p.token
			if okA && okB && a.at.Before(b.at) {
				a, other = b, e.token
			}
			return okA && okB && a.known < other && h.st.restoredUnderBy(a.at)
		}
		for _, r := range running {
			if deletedUnseen(r.at) || tookRestored(e, r) || tookRestored(r, e) || tookFreed(r) {
				continue
			}
			out = append(out, fmt.Sprintf("two tasks at once: %s (token %d) started at +%v while %s (token %d, since +%v) ran", e.who, e.token, e.at, r.who, r.token, r.at))
		}
		// The pair tookRestored waives may also start out of the store's
		// order: the replaced term's acquisition landed first, at a lower
		// token, and its answer came after the taker's task started (its
		// start is then the later one). The tokens increased in the
		// store; no design can start the late answer's task first. Only
		// then: e is the replaced term, maxEv the taker, and e's token
		// below the taker's (a taker that wrote a token at or below one
		// its Lease had read is reported, whichever started first: red
		// team 19).
		if e.token <= maxToken && !deletedUnseen(maxAt) && !unseenToken(maxEv) && (e.token == maxToken || !tookRestored(maxEv, e)) {
			out = append(out, fmt.Sprintf("token did not increase: %s started with token %d at +%v after token %d", e.who, e.token, e.at, maxToken))
		}
		if e.token > maxToken {
			maxToken, maxAt, maxEv = e.token, e.at, e
		}
		for _, p := range starts {
			// State faults (delete, restore, foreign) lose what the record
			// remembered: the period and the hold are not promised after them.
			// A restore-hang fires as the period's mark lands, just before
			// the task starts; a state fault before the mark would have
			// kept the task from starting, so a TTL before it is safe.
			stateLost := h.faultIn(p.at-ttl, e.at, -1, stateFaults...)
			if p.minHold > 0 && e.at < p.at+p.minHold && !stateLost && !h.holdCut(p, whoIndex(p.who)) {
				out = append(out, fmt.Sprintf("run during a minimum hold: %s started at +%v, inside the hold of %s (started +%v, hold %v)", e.who, e.at, p.who, p.at, p.minHold))
			}
			if e.period == "" || p.period != e.period || stateLost {
				continue
			}
			pe, ended := ends[p.task]
			switch {
			case !p.retry:
				out = append(out, fmt.Sprintf("period %s ran twice: %s at +%v, %s at +%v", e.period, p.who, p.at, e.who, e.at))
			case ended && pe.ok && pe.at <= e.at && !h.faultIn(pe.at-ttl, pe.at+ttl, whoIndex(p.who), cutFaults...) && !h.st.cutIn(p.who, h.t0.Add(pe.at-ttl), h.t0.Add(pe.at+ttl)):
				out = append(out, fmt.Sprintf("done mark lost: period %s succeeded on %s (ended +%v) and ran again on %s at +%v", e.period, p.who, pe.at, e.who, e.at))
			}
		}
		starts = append(starts, e)
		running[e.task] = e
	}
	for _, c := range h.calls {
		if c.ran < 0 {
			continue
		}
		for _, p := range starts {
			// A call while p's task runs meets a live holder, which it may
			// outwait; one after the task ended, inside the hold, meets a
			// record that says the lease is held after a run.
			if pe, ok := ends[p.task]; !ok || c.at < pe.at {
				continue
			}
			// A caller cut off from the store (hung, slow, its reads failing) sees the record
			// only later: it is not a duplicate of the hold it never saw.
			// It learns the holder is alive when it sees the record renewed:
			// within a renew interval and a call, which the fleet's
			// CallTimeout bounds (an answer later than that is a cut).
			// A state fault loses the hold from the instant p's acquisition
			// landed, which an answer late by seconds puts well before its
			// task starts (seed 6000171332: restore-under replaced the record
			// between the two, and the holder lost the lease it began with).
			if p.minHold > 0 && c.at >= p.at && c.at < p.at+p.minHold-lease.DefaultRenewInterval(ttl)-sc.timeout() && p.task != c.ran &&
				!h.faultIn(h.landed(p), p.at+p.minHold, -1, stateFaults...) && !h.holdCut(p, whoIndex(p.who)) &&
				!h.st.hitIn(c.who, h.t0.Add(c.at), h.t0.Add(p.at+p.minHold)) {
				out = append(out, fmt.Sprintf("a duplicate called during a hold ran: %s called at +%v, inside the hold of %s (started +%v, hold %v)", c.who, c.at, p.who, p.at, p.minHold))
			}
		}
	}
	return out
}

// String lists the history, for a replay.
func (h *history) String() string {
	var b strings.Builder
	b.WriteString("  history:\n")
	for _, e := range h.events {
		if e.start {
			fmt.Fprintf(&b, "    +%-14v task %d of %s starts: token %d period %q minHold %v (called +%v)\n", e.at, e.task, e.who, e.token, e.period, e.minHold, e.called)
		} else {
			fmt.Fprintf(&b, "    +%-14v task %d of %s ends: ok=%t\n", e.at, e.task, e.who, e.ok)
		}
	}
	for _, f := range h.faults {
		fmt.Fprintf(&b, "    fault %s\n", f)
	}
	return b.String()
}

// trace is the history and the hash of every call that reached the store,
// for comparing two runs of one schedule.
func (h *history) trace() string {
	h.st.mu.Lock()
	sum := h.st.trace.Sum64()
	h.st.mu.Unlock()
	return fmt.Sprintf("%s  store calls: %016x\n", h, sum)
}

// landed is when the acquisition that began start p's term reached the
// store, or p's start if the store has no record of it.
func (h *history) landed(p event) time.Duration {
	if a, ok := h.st.acqOf(p.who, p.token, h.t0.Add(p.at)); ok {
		return a.at.Sub(h.t0) // acqOf finds none after p.at
	}
	return p.at
}

// holdCut reports whether the hold of start p could not be kept through
// no fault of the runner: its holder was cut off from the store (hung) while
// it held the lease, or its term ended as lost or past its deadline.
func (h *history) holdCut(p event, who int) bool {
	return h.outcomes[p.task].cut || h.lingered[p.task] || h.faultIn(p.at, p.at+p.minHold, who, cutFaults...) || h.st.cutIn(p.who, h.t0.Add(p.at), h.t0.Add(p.at+p.minHold))
}

// sim runs one schedule in the calling synctest bubble and returns its
// history.
func run(t *testing.T, sc scenario) *history {
	st := newStore()
	st.traceUntil, st.callTimeout = time.Now().Add(horizon), sc.timeout()
	h := &history{t0: time.Now(), outcomes: map[int]outcome{}, lingered: map[int]bool{}, st: st}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)

	ctls := make([]*ctl, len(sc.contenders))
	for i := range ctls {
		ctls[i] = &ctl{returns: map[int]chan struct{}{}}
	}
	var wg sync.WaitGroup
	open := func(c contender) lease.Lease {
		l := ranked{openCAS(t, st, c.id, sc).(casCaps)}
		if !sc.keep {
			return noKeep{l}
		}
		return l
	}
	// task returns a task for contender i: it records its start and end,
	// makes progress unless stalled, and returns when told to (a step), when
	// its own work is done (RunOnce: after work), or when its context ends
	// (child: later, as the CLI's drained child).
	task := func(i int, work time.Duration, period string, retry bool, minHold, called, opened time.Duration, ran *int) func(context.Context) error {
		c, k := sc.contenders[i], ctls[i]
		return func(tctx context.Context) error {
			lt, _ := runner.Term(tctx)
			id := h.start(c.id, lt, period, retry, minHold, called, opened)
			if ran != nil {
				*ran = id
			}
			// An armed outage starts as the task returns, before the
			// runner writes what the run left, or as its hold ends.
			started := time.Now()
			defer func() {
				s, ok := k.takeOutage()
				if !ok {
					return
				}
				down := func() {
					st.fault(c.id, func(f *faults) { f.downUntil = time.Now().Add(s.D) })
					h.fault(s)
				}
				if s.N == 1 || time.Until(started.Add(minHold-s.D/2)) <= 0 {
					down() // before the runner's next write
					return
				}
				wg.Go(func() {
					sleepCtx(ctx, time.Until(started.Add(minHold-s.D/2)))
					down()
				})
			}()
			back := make(chan struct{})
			k.mu.Lock()
			k.returns[id] = back
			k.mu.Unlock()
			defer func() {
				k.mu.Lock()
				delete(k.returns, id)
				k.mu.Unlock()
			}()
			var done <-chan time.Time
			if work > 0 {
				done = time.After(work)
			}
			// Off the millisecond grid, so that no progress ties with the
			// stall watchdog's timer.
			tick := time.NewTicker(ttl/20 - time.Microsecond)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					if !k.stalled.Load() {
						runner.Progress(tctx)
					}
					continue
				case <-done:
					ok := work%7 != 0 // some tasks fail
					h.end(id, c.id, ok && tctx.Err() == nil)
					if !ok {
						return errors.New("task failed")
					}
					return nil
				case <-back:
					h.end(id, c.id, true)
					return nil
				case <-tctx.Done():
				}
				break
			}
			// An armed restore-under: the task ignores its cancellation
			// (rule 6) until the fault fires, 2 TTLs at most. It stops
			// acting as leader for the oracle when it is cancelled: the
			// runner promises nothing of a task that runs on, only that
			// it releases after the task returned.
			if ch := k.lingering(); ch != nil {
				h.end(id, c.id, false)
				h.linger(id)
				select {
				case <-ch:
				case <-time.After(2 * ttl):
				case <-ctx.Done():
				}
				return tctx.Err()
			}
			if c.kind == childKind { // drains until its own end or the kill at Expiry
				drain := time.After(work % ttl)
				for {
					kill := time.Until(runner.Expiry(tctx).Add(-ttl / 20))
					select {
					case <-drain:
					case <-time.After(kill):
						if time.Until(runner.Expiry(tctx).Add(-ttl/20)) > 0 {
							continue // renewed while draining
						}
					}
					break
				}
			}
			h.end(id, c.id, false)
			return tctx.Err()
		}
	}
	// config draws each runner's random numbers from a source of its own,
	// seeded by the schedule's seed and the runner's stream.
	config := func(i int, stream uint64, l lease.Lease, t func(context.Context) error) runner.Config {
		c, k := sc.contenders[i], ctls[i]
		cfg := runner.Config{Lease: l, Task: t, Logger: logger, StallTimeout: c.stall, RenewDeadline: sc.renewDeadline,
			// Off the renewals' grid, so that no health check ties with a
			// renewal.
			HealthInterval: lease.DefaultRenewInterval(ttl) - time.Millisecond/3,
			Rand:           runner.LockedSource(rand.NewPCG(sc.seed, uint64(i)<<32|stream)),
			HealthCheck: func(context.Context) error {
				if k.sick.Load() {
					return errors.New("sick")
				}
				return nil
			}}
		if c.kind == childKind {
			cfg.DrainTimeout = ttl
		}
		return cfg
	}

	for i, c := range sc.contenders {
		rng := rand.New(rand.NewPCG(sc.seed, uint64(i)))
		switch c.kind {
		case runKind, childKind, pairKind:
			l := open(c)
			n := 1
			if c.kind == pairKind {
				n = 2
			}
			for j := range n {
				// Off the grid of the renewals (a RenewInterval after the
				// election), so that a task's end never ties with a renewal.
				work := time.Duration(1+rng.IntN(20))*ttl/2 + time.Millisecond/4
				r := newRunner(t, config(i, uint64(j), l, task(i, work, "", false, 0, 0, 0, nil)))
				if r == nil {
					continue
				}
				// One after the other, a millisecond apart, in a fixed
				// order: runners started at one instant would race.
				at := time.Duration(2*i+j) * time.Millisecond
				wg.Go(func() {
					sleepCtx(ctx, at)
					_ = r.Run(withRank(ctx, j))
				})
			}
		case onceKind:
			shared := open(c)
			for k := range int(horizon / period) {
				for j := range 1 + rng.IntN(2) {
					at := time.Duration(k)*period + time.Duration(rng.Int64N(int64(period)))
					work := time.Duration(rng.Int64N(int64(2*ttl))).Truncate(time.Millisecond) + time.Millisecond/4
					l := shared
					wg.Go(func() {
						sleepCtx(ctx, at)
						if ctx.Err() != nil {
							return
						}
						opened := time.Duration(0)
						if !c.reuse {
							l, opened = open(c), h.now()
						}
						cl := call{who: c.id, at: h.now(), ran: -1}
						cfg := config(i, 1<<16|uint64(k)<<8|uint64(j), l, nil)
						if c.period {
							cfg.Period, cl.period = strconv.Itoa(k), strconv.Itoa(k)
						}
						cfg.RetryFailed, cfg.MinHold = c.retry, c.minHold
						cfg.Task = task(i, work, cfg.Period, c.retry, c.minHold, cl.at, opened, &cl.ran)
						r := newRunner(t, cfg)
						if r == nil {
							return
						}
						once, err := r.RunOnce(withRank(ctx, j))
						h.mu.Lock()
						defer h.mu.Unlock()
						h.calls = append(h.calls, cl)
						if err == nil && cl.ran >= 0 {
							d := once.Demotion
							h.outcomes[cl.ran] = outcome{cut: d.Reason == runner.LeaseLost || d.Reason == runner.DeadlinePassed}
						}
					})
				}
			}
		}
	}
	// The faults.
	wg.Go(func() {
		for _, s := range sc.steps {
			sleepCtx(ctx, s.At-h.now())
			if ctx.Err() != nil {
				return
			}
			apply(ctx, t, st, h, s, sc, ctls[s.Who], &wg)
		}
	})
	sleepCtx(ctx, horizon)
	cancel()
	wg.Wait()
	st.slow.Wait()
	return h
}

// openCAS opens the lease on st for id with the fleet's timing.
func openCAS(t *testing.T, st *store, id string, sc scenario) lease.Lease {
	rank := len(sc.contenders)
	for i, c := range sc.contenders {
		if c.id == id {
			rank = i
		}
	}
	l, err := driver.NewCAS(&conn{s: st, id: id, rank: time.Duration(rank) * maxRunners}, lease.Options{Identity: id, TTL: ttl, CallTimeout: sc.callTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newRunner returns a runner of cfg, or nil when runner.New refuses the
// fleet's drawn timing (a RenewDeadline past TTL - RenewInterval): that
// contender does not run.
func newRunner(t *testing.T, cfg runner.Config) *runner.Runner {
	r, err := runner.New(cfg)
	if err != nil && !errors.Is(err, lease.ErrInvalid) {
		t.Error(err)
	}
	return r
}

// ctl is how steps reach one contender's health check and tasks.
type ctl struct {
	sick, stalled atomic.Bool
	mu            sync.Mutex
	returns       map[int]chan struct{} // running tasks: close to make them return
	outage        *step                 // armed: starts as the next task returns
	linger        chan struct{}         // armed restore-under: tasks ignore cancellation until it is closed
}

// lingering returns the channel a cancelled task waits on before it
// returns, nil if none is armed.
func (k *ctl) lingering() chan struct{} {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.linger
}

// takeOutage returns the armed outage, if any, and disarms it.
func (k *ctl) takeOutage() (step, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.outage
	k.outage = nil
	if s == nil {
		return step{}, false
	}
	return *s, true
}

// apply applies step s and notes it in h when it happens; faults that
// last (sick, stall, foreign) are undone by a goroutine of wg after s.D,
// and faults that wait for an event (restore-hang, outage) are noted when
// they fire.
func apply(ctx context.Context, t *testing.T, st *store, h *history, s step, sc scenario, k *ctl, wg *sync.WaitGroup) {
	id := sc.contenders[s.Who].id
	switch s.F {
	case restoreHang, outage, restoreUnder, restore:
	default:
		h.fault(s)
	}
	later := func(undo func()) {
		wg.Go(func() {
			sleepCtx(ctx, s.D)
			undo()
		})
	}
	switch s.F {
	case failReads:
		st.fault(id, func(f *faults) { f.failReads = s.N })
	case failWrites:
		st.fault(id, func(f *faults) { f.failWrites = s.N })
	case loseAnswer:
		st.fault(id, func(f *faults) { f.lose = s.N })
	case slowCalls:
		st.fault(id, func(f *faults) { f.slow, f.slowFor = s.N, s.D })
	case hang:
		st.fault(id, func(f *faults) { f.hungUntil = time.Now().Add(s.D) })
	case restore:
		cur, _, err := st.current()
		if err != nil {
			return
		}
		// The term is the latest one the engine started, not the stored
		// record's, nor that of the latest body written: after a
		// restore-under the record is an ended term's, and a late write of
		// that term may land on it (seed 9000539078: the bodies of the
		// latest write's term, w1's, held its release, which, put back
		// under w3's live term, freed the lease at once); a release put
		// back under the live holder frees the lease while that holder
		// leads, which no design can tell.
		r, ok := st.latestTerm()
		if !ok {
			return
		}
		bodies, stored := st.termBodies(r, cur)
		var body []byte
		switch {
		case len(bodies) == 0:
			return
		case s.N == 1: // a backup D old: the latest body of the term stored by then, else its first
			body = bodies[max(0, sort.Search(len(stored), func(i int) bool { return stored[i].After(time.Now().Add(-s.D)) })-1)]
		default:
			body = bodies[s.Seed%uint64(len(bodies))]
		}
		// A restore that puts back the record it replaces changes nothing,
		// and waives nothing (red team 11: one before a term's first write
		// after its acquisition waived a duplicate run during its hold).
		if !bytes.Equal(body, cur) {
			h.fault(s)
		}
		st.put(body)
	case foreign:
		st.put([]byte(`{"not":"a lease record"}`))
		later(func() { st.put(st.lastValid()) })
	case deleteRec:
		st.put(nil)
	case sick:
		k.sick.Store(true)
		later(func() { k.sick.Store(false) })
	case stall:
		k.stalled.Store(true)
		later(func() { k.stalled.Store(false) })
	case taskEnd:
		k.mu.Lock()
		for _, id := range slices.Sorted(maps.Keys(k.returns)) {
			close(k.returns[id])
			delete(k.returns, id)
		}
		k.mu.Unlock()
	case lateAnswer:
		rng := rand.New(rand.NewPCG(s.Seed, 0))
		st.fault(id, func(f *faults) {
			f.late = nil
			for range 2 * s.N { // a write's delay, then its read-back's
				f.late = append(f.late, time.Duration(rng.Int64N(int64(sc.timeout()*3/2))))
			}
		})
	case restoreHang:
		st.mu.Lock()
		st.watched[id] = watch{hang: s.D, done: func() { h.fault(s) }}
		st.mu.Unlock()
	case outage:
		k.mu.Lock()
		k.outage = &s
		k.mu.Unlock()
	case restoreUnder:
		k.mu.Lock()
		if k.linger == nil {
			k.linger = make(chan struct{})
		}
		linger := k.linger
		k.mu.Unlock()
		st.mu.Lock()
		st.under[id] = func(ended lease.Record) { // under the store's lock
			wg.Go(func() {
				sleepCtx(ctx, s.D+time.Millisecond/2)
				st.restoreUnder(id, ended, s)
				h.fault(s)
				k.mu.Lock()
				if k.linger == linger {
					close(linger)
					k.linger = nil
				}
				k.mu.Unlock()
			})
		}
		st.mu.Unlock()
	case breakLease:
		wg.Go(func() { operatorBreak(ctx, t, st, h, s, sc) })
	}
}

// operatorBreak is leasehold break without --force, with the CLI's own
// judgement (internal/watch, which leasehold status and break call): it
// reads the record, reads it again at a follower's pace until a TTL has
// passed or the version changed, and breaks it only if the watch says its
// holder is gone (the Lease's own count: a contender would take it over).
// With s.N = 1, a restore lands during the watch and puts back the body the
// first read saw (a backup taken then), if it is of the term the record
// then names.
func operatorBreak(ctx context.Context, t *testing.T, st *store, h *history, s step, sc scenario) {
	l := openCAS(t, st, "operator", sc)
	wg := sync.WaitGroup{}
	defer wg.Wait()
	reads := 0
	read := func(ctx context.Context) (lease.Record, error) {
		rec, err := l.Observe(ctx)
		if reads++; reads == 1 && err == nil && rec.Held() && s.N == 1 {
			body, _, _ := st.current()
			wg.Go(func() {
				sleepCtx(ctx, time.Duration(s.Seed%uint64(rec.TTL)))
				// Of the term the engine started last, as restore takes it (a
				// stored record that restore-under put back is an ended
				// term's: seed 5000062437 put the break's body back under
				// the live holder so, three replacements between two of
				// the watch's reads).
				last, ok := st.latestTerm()
				if cur, _, err := st.current(); err == nil && ok && last.Holder == rec.Holder && last.Token == rec.Token && version(cur) != rec.Version {
					st.put(body)
					h.fault(step{F: restore, Who: s.Who, N: 0})
				}
			})
		}
		return rec, err
	}
	w, err := cliwatch.Lease(ctx, l, read, cliwatch.ToBreak(l))
	if err != nil || !w.Lapsed() {
		return
	}
	_, _ = l.(lease.Breaker).Break(ctx, w.Last)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// explore runs one schedule in a bubble of its own and returns its
// violations.
func explore(t *testing.T, sc scenario) (violations []string, h *history) {
	synctest.Test(t, func(t *testing.T) {
		h = run(t, sc)
		violations = h.check(sc)
	})
	return violations, h
}

// shrink drops steps from a failing schedule while it still fails: a
// schedule replays from its seed, so one run of each candidate tells.
func shrink(t *testing.T, sc scenario) scenario {
	for i := 0; i < len(sc.steps); {
		cand := sc
		cand.steps = slices.Delete(slices.Clone(sc.steps), i, i+1)
		if v, _ := explore(t, cand); len(v) > 0 {
			sc = cand
		} else {
			i++
		}
	}
	return sc
}

func report(sc scenario, violations []string, kept []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d violation(s)\n", sc.seed, len(violations))
	for _, v := range violations[:min(len(violations), 5)] {
		fmt.Fprintf(&b, "  %s\n", v)
	}
	fmt.Fprintf(&b, "  store keeps held records (Keeper): %t; CallTimeout %v, RenewDeadline %v\n", sc.keep, sc.timeout(), sc.deadline())
	for _, c := range sc.contenders {
		fmt.Fprintf(&b, "  contender %s\n", c)
	}
	for _, s := range sc.steps {
		fmt.Fprintf(&b, "  step %s\n", s)
	}
	ks := make([]string, len(kept))
	for i, k := range kept {
		ks[i] = strconv.Itoa(k)
	}
	fmt.Fprintf(&b, "  replay: go test ./sim -run TestSimulation -seed %d -steps %s%s\n", sc.seed, strings.Join(ks, ","), focusFlags())
	return b.String()
}

// budget is how many schedules a run explores, from which base: the
// variables PREFIX_SCHEDULES (def if unset; at most 500 with -short) and
// PREFIX_BASE (the clock if unset).
func budget(t *testing.T, prefix string, def int) (n int, base uint64) {
	n = def
	if s := os.Getenv(prefix + "_SCHEDULES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("%s_SCHEDULES=%q: want a positive number of schedules", prefix, s)
		}
	}
	if testing.Short() {
		n = min(n, 500)
	}
	base = uint64(time.Now().UnixNano())
	if s := os.Getenv(prefix + "_BASE"); s != "" {
		base, _ = strconv.ParseUint(s, 10, 64)
	}
	return n, base
}

func TestSimulation(t *testing.T) {
	fo, err := parseFocus()
	if err != nil {
		t.Fatal(err)
	}
	if *seedFlag != 0 {
		sc := newScenario(*seedFlag, fo)
		if *stepsFlag != "" {
			var keep []step
			for _, f := range strings.Split(*stepsFlag, ",") {
				i, err := strconv.Atoi(f)
				if err != nil || i < 0 || i >= len(sc.steps) {
					t.Fatalf("-steps: %q is not a step of seed %d (0..%d)", f, *seedFlag, len(sc.steps)-1)
				}
				keep = append(keep, sc.steps[i])
			}
			sc.steps = keep
		}
		if *replaysFlag > 0 {
			replay(t, sc, *replaysFlag)
			return
		}
		if v, h := explore(t, sc); len(v) > 0 {
			t.Fatal(report(sc, v, indexes(newScenario(*seedFlag, fo).steps, sc.steps)) + h.String())
		}
		return
	}
	n, base := budget(t, "LEASEHOLD_SIM", defaultSchedules)
	var next atomic.Uint64
	var mu sync.Mutex
	failed := map[string][]found{} // per class of violation and signature: the first schedules that showed it
	began := time.Now()
	workers := runtime.GOMAXPROCS(0)
	t.Run("schedules", func(t *testing.T) {
		for w := range workers {
			t.Run(strconv.Itoa(w), func(t *testing.T) {
				t.Parallel()
				for {
					i := next.Add(1)
					if i > uint64(n) {
						return
					}
					sc := newScenario(base+i, fo)
					v, h := explore(t, sc)
					mu.Lock()
					if *listFlag && len(v) > 0 {
						t.Logf("failed: seed %d (CallTimeout %v, RenewDeadline %v): %s", sc.seed, sc.timeout(), sc.deadline(), classesOf(v))
					}
					for _, msg := range v {
						class, _, _ := strings.Cut(msg, ":")
						key := class + "\x00" + signature(sc)
						fs := failed[key]
						if len(fs) < shrunkPerClass && (len(fs) == 0 || fs[len(fs)-1].sc.seed != sc.seed) {
							failed[key] = append(fs, found{sc: sc, after: time.Since(began), schedules: i, seen: report(sc, v, nil) + h.String()})
						}
					}
					mu.Unlock()
				}
			})
		}
	})
	took := time.Since(began)
	done := min(next.Load(), uint64(n))
	t.Logf("%d schedules in %v: %.0f schedules/s on %d workers; first seed %d", done, took.Round(time.Millisecond), float64(done)/took.Seconds(), workers, base+1)
	// Several holes can show as one class (two tasks at once): the first
	// schedules of each class and signature are shrunk, and grouped by the
	// faults that remain, so that each hole is reported with the first
	// seed that showed it, even where another hole shows more often.
	type group struct {
		found
		shrunk scenario
		v      []string
	}
	groups := map[string]group{}
	for _, ck := range slices.Sorted(maps.Keys(failed)) {
		class, _, _ := strings.Cut(ck, "\x00")
		for _, f := range failed[ck] {
			sc := shrink(t, f.sc)
			v, _ := explore(t, sc)
			if len(v) == 0 {
				sc = f.sc
				v, _ = explore(t, sc)
			}
			key := class + ", with " + faultKinds(sc)
			if g, ok := groups[key]; !ok || f.schedules < g.schedules {
				groups[key] = group{f, sc, v}
			}
		}
	}
	keys := slices.Sorted(maps.Keys(groups))
	for _, key := range keys {
		g := groups[key]
		t.Logf("found %q: seed %d, after %v (%d schedules)", key, g.sc.seed, g.after.Round(time.Millisecond), g.schedules)
	}
	for _, key := range keys {
		g := groups[key]
		t.Error(report(g.shrunk, g.v, indexes(g.sc.steps, g.shrunk.steps)) + "  as first seen:\n" + g.seen)
	}
}

// shrunkPerClass is how many of the schedules that showed a class of
// violation, per signature, are shrunk, to tell the holes behind it apart.
const shrunkPerClass = 3

// signature says which of the faults that reach narrow windows (late
// answers, restores with a hang, breaks, outages) sc has.
func signature(sc scenario) string {
	var b strings.Builder
	for _, f := range []fault{lateAnswer, restoreHang, breakLease, outage, restoreUnder} {
		if slices.ContainsFunc(sc.steps, func(s step) bool { return s.F == f }) {
			b.WriteString(faultNames[f] + " ")
		}
	}
	return b.String()
}

// classesOf lists the classes of violations v, sorted.
func classesOf(v []string) string {
	var cs []string
	for _, msg := range v {
		class, _, _ := strings.Cut(msg, ":")
		cs = append(cs, class)
	}
	slices.Sort(cs)
	return strings.Join(slices.Compact(cs), "; ")
}

// faultKinds names the kinds of sc's steps, sorted, or "no faults".
func faultKinds(sc scenario) string {
	var names []string
	for _, s := range sc.steps {
		names = append(names, faultNames[s.F])
	}
	slices.Sort(names)
	if names = slices.Compact(names); len(names) == 0 {
		return "no faults"
	}
	return strings.Join(names, "+")
}

// replay runs sc n times and logs how many runs were identical to the
// first: the same history, and the same calls reaching the store in the
// same order at the same instants.
func replay(t *testing.T, sc scenario, n int) {
	var first string
	same := 0
	for i := range n {
		_, h := explore(t, sc)
		trace := h.trace()
		switch {
		case i == 0:
			first = trace
		case trace == first:
			same++
		default:
			t.Logf("run %d differs from the first:\n%s\nfirst:\n%s", i+1, trace, first)
		}
	}
	t.Logf("seed %d: %d of %d replays identical to the first run", sc.seed, same, n-1)
	if same != n-1 {
		t.Errorf("seed %d does not replay exactly: %d of %d replays differ", sc.seed, n-1-same, n-1)
	}
}

// found is the first schedule that showed a class of violation.
type found struct {
	seen      string // the report and history of the run that showed it
	sc        scenario
	after     time.Duration
	schedules uint64
}

// focusFlags returns the focus flags given, for a replay's command line.
func focusFlags() string {
	var s string
	for _, f := range []struct{ name, value string }{{"kinds", *kindsFlag}, {"faults", *faultsFlag}, {"store", *storeFlag}} {
		if f.value != "" {
			s += " -" + f.name + " " + f.value
		}
	}
	return s
}

// indexes returns the positions in all of the steps in some.
func indexes(all, some []step) []int {
	var out []int
	for i, s := range all {
		if slices.Contains(some, s) {
			out = append(out, i)
		}
	}
	return out
}

// TestFoundSeeds replays the schedules in which a focused search found a
// violation that a fix then removed: each must stay free of them.
func TestFoundSeeds(t *testing.T) {
	for _, tc := range []struct {
		seed          uint64
		kinds, faults string
		found         string
		paired        bool // found since a2824cc (see focus.unpaired)
	}{
		{31352193, "once", "late-answer", "a duplicate called during a hold ran: its reads missed the hold's renewals, then found the lease released at the hold's end", false},
		{31354586, "once", "late-answer", "the same, CallTimeout 878ms", false},
		{31356120, "once", "late-answer", "done mark lost: a renewal cut off as the task returned, the mark's write and read-back late, the mark never written again", false},
		{1796172335227442567, "", "", "run during a minimum hold: a stalled task, stepped down, ran on past its lease's TTL (a restore-under armed), and its hold, written only once a task has returned, was never written: the oracle's limit, not the runner's (see linger)", false},
		{5000004462, "", "", "two tasks at once, one token: two Runners on one Lease both read the lapsed record before either wrote; the first took it over, restore-under put it back, and the second's write landed on it (the oracle had waived it as a takeover of a restored body)", false},
		{5000009360, "", "", "the same, token 5", false},
		{5000062437, "", "", "two tasks at once: the operator's break put back the body its watch first read under a live holder, whose record restore-under had replaced with an ended term's (a fault-model artefact, as restore's was: its term is now the engine's latest)", false},
		{3009680, "", "", "token did not increase: an acquisition landed unanswered, restore-under put an earlier body back before its read-back, and the next acquisition of that Lease wrote the same token again (found by a helper's run at base 3000000)", false},
		{6000091991, "", "", "two tasks at once, a false alarm: a token that restore-under let repeat named two records, and the waiver judged by token took the taker for one that had seen the record replaced (now by version)", false},
		{6000069134, "", "", "the same", false},
		{6000156237, "", "", "two tasks at once, no hole: a child's release, applied after its caller's timeout (slow), landed on its own body restore-under had put back under the new holder, and a fresh RunOnce took the released record at once (waived: releasedLate)", false},
		{5000047489, "", "", "two tasks at once: a write of the term after its task returned, answered more than a TTL after the acquisition, landed on a renewal restore-under had put back under the successor of the acquisition's record, and the release after it, counted from that renewal, freed the successor's lease", false},
		{6000727864, "", "", "two tasks at once: a contender that had counted a body restore-under put back under w1 took it over with w1's token and released it; w0, which had read w1's record at that token, took the released record at once while w1 led (a token under another holder is now a restore, waited out)", false},
		{6000711947, "", "", "run during a minimum hold: a hold write answered 1.03 s late (CallTimeout 1.18 s, TTL 3 s), the next sent a renew interval after that answer failed, its read-back slow, and none could land before the TTL ran out (the hold's next write now goes no later than RenewDeadline after the one before was sent)", false},
		{6000171332, "", "", "a duplicate called during a hold ran, no hole: restore-under replaced the record between the holder's acquisition landing and its late answer, and the hold was lost with it (the oracle now counts state faults from the acquisition's landing); also 6000606495, 6000644579, 6000769958, 6000793080, 6000795058", false},
		{8000322575, "", "", "two tasks at once, no hole: a pair's Lease, which had counted its own lost term's body before w1 took it over, took it over again when restore-under put it back under w1, at the same instant (its Runner's task lingered until then), and the waiver ordered the two by the clock, not by the store (now by the store's order)", true},
		{8000200291, "", "", "two tasks at once, no hole: w0 took over w1's body that restore-under put back under w2 (counted before, w2's record never seen), ran its task and released; w1, which never saw w2's record either, took the released record at once while w2 led until its next renewal (waived for w2 alone: releasedTaken)", true},
		{9000539078, "", "", "two tasks at once, a fault-model artefact: restore-under put w1's ended term's held body back under w3's, a renewal of that term sent before its release landed on it late (slow), and restore, taking the term of the latest body written for the current one, put that term's release back under w3: w1 took it at once with w3's token (restore now takes the term the engine started last)", true},
		{9000528938, "", "", "two tasks at once, a fault-model artefact: a RunOnce's new Lease took the broken body restore-under had put back and wrote its own earlier term's token (8) again, as rule 10 allows a Lease that never saw it, and restore, which puts back bodies of the current term, took that earlier term's release for one (by holder and token) and put it back under the live term: w3 took the released record at once (restore now takes only bodies stored since the term's latest acquisition)", true},
		{9000492030, "", "", "token did not increase, no hole: restore-under put w1's earlier body back over its token-9 record in the 20 ms after that acquisition landed, w0 (which had counted the body before) took it over with token 10 at once, and w1's answer, 1.2 s late, started its task after w0's (waived for the pair tookRestored names, by the store's order)", true},
		{9000044101, "", "", "two tasks at once, no hole: restore-under put w0's ended term's body back over a foreign object that had replaced w0's next term, and w3, which had counted the body before, took it over while w0's term led; the waiver, narrowed to the hidden term, named none, as the record under it was not a lease's (it now names the latest record the engine stored)", true},
	} {
		fo, err := focusOf(tc.kinds, tc.faults, "")
		if err != nil {
			t.Fatal(err)
		}
		fo.unpaired = !tc.paired
		sc := newScenario(tc.seed, fo)
		if v, h := explore(t, sc); len(v) > 0 {
			t.Errorf("seed %d (-kinds %s -faults %s), which found %s:\n%s", tc.seed, tc.kinds, tc.faults, tc.found, report(sc, v, indexes(sc.steps, sc.steps))+h.String())
		}
	}
}

// A seed replays exactly: the same history, and every call reaching the
// store in the same order at the same instant (seeds whose schedules mix
// every contender kind with restores, breaks and outages).
func TestSeedReplays(t *testing.T) {
	fo, err := parseFocus()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{5023, 5058, 5101} {
		replay(t, newScenario(seed, fo), 3)
	}
}
