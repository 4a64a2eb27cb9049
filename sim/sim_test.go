package sim_test

import (
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/runner"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "replay the schedule of this seed (0: explore)")
	stepsFlag = flag.String("steps", "", "with -seed: keep only these steps (a shrunk trace), e.g. 0,3,5")
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
}

func parseFocus() (focus, error) {
	f := focus{keep: []bool{true, false}}
	for i := range kindNames {
		f.kinds = append(f.kinds, kind(i))
	}
	for i := range faultNames {
		f.faults = append(f.faults, fault(i))
	}
	if *kindsFlag != "" {
		f.kinds = nil
		for _, n := range strings.Split(*kindsFlag, ",") {
			i := slices.Index(kindNames[:], n)
			if i < 0 {
				return f, fmt.Errorf("-kinds: %q is not one of %v", n, kindNames)
			}
			f.kinds = append(f.kinds, kind(i))
		}
	}
	switch *faultsFlag {
	case "":
	case "none":
		f.faults = nil
	default:
		f.faults = nil
		for _, n := range strings.Split(*faultsFlag, ",") {
			i := slices.Index(faultNames[:], n)
			if i < 0 {
				return f, fmt.Errorf("-faults: %q is not one of %v", n, faultNames)
			}
			f.faults = append(f.faults, fault(i))
		}
	}
	switch *storeFlag {
	case "":
	case "keep":
		f.keep = []bool{true}
	case "nokeep":
		f.keep = []bool{false}
	default:
		return f, fmt.Errorf("-store: %q is not keep or nokeep", *storeFlag)
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
	failReads  fault = iota // the next N reads of Who fail
	failWrites              // the next N writes of Who fail
	loseAnswer              // the next N writes of Who are applied, their answers lost
	slowCalls               // the next N calls of Who take D, past CallTimeout (and are applied then)
	hang                    // every call of Who hangs for D (longer than the TTL)
	restore                 // an earlier body of the current term is put back (same bytes, same version)
	foreign                 // a foreign object replaces the record; a person restores the last body D later
	deleteRec               // the record is deleted
	sick                    // Who's health checks fail for D
	stall                   // Who's tasks make no progress for D
	taskEnd                 // Who's running tasks return
	nFaults
)

var faultNames = [...]string{"fail-reads", "fail-writes", "lose-answer", "slow", "hang", "restore", "foreign", "delete", "sick", "stall", "task-returns"}

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

// scenario is one schedule: the store's shape, the contenders and the
// faults, all drawn from one seed.
type scenario struct {
	seed       uint64
	keep       bool // the store keeps a record held without its holder (lease.Keeper)
	contenders []contender
	steps      []step
}

func newScenario(seed uint64, fo focus) scenario {
	rng := rand.New(rand.NewPCG(seed, 0x1ea5e401d))
	sc := scenario{seed: seed, keep: fo.keep[rng.IntN(len(fo.keep))]}
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
			At:   time.Duration(rng.Int64N(int64(horizon - 2*ttl))).Truncate(time.Millisecond),
			F:    fo.faults[rng.IntN(len(fo.faults))],
			Who:  rng.IntN(len(sc.contenders)),
			N:    1 + rng.IntN(3),
			Seed: rng.Uint64(),
		}
		switch s.F {
		case slowCalls:
			s.D = ttl/5 + time.Duration(rng.Int64N(int64(ttl/2)))
		case hang:
			s.D = ttl + time.Duration(rng.Int64N(int64(ttl)))
		default:
			s.D = time.Duration(rng.Int64N(int64(2 * ttl)))
		}
		s.D = s.D.Truncate(time.Millisecond)
		sc.steps = append(sc.steps, s)
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
	calls    []call // RunOnce invocations
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
		if f.At >= from && f.At <= to && slices.Contains(kinds, f.F) && (who < 0 || f.Who == who || f.F == restore || f.F == foreign || f.F == deleteRec) {
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
		// process that saw the record before).
		deletedUnseen := func(since time.Duration) bool {
			return h.faultIn(max(since, e.opened), e.at, -1, deleteRec) || h.faultIn(since, e.at, -1, deleteRec) && e.opened > since
		}
		for _, r := range running {
			if deletedUnseen(r.at) {
				continue
			}
			out = append(out, fmt.Sprintf("two tasks at once: %s (token %d) started at +%v while %s (token %d, since +%v) ran", e.who, e.token, e.at, r.who, r.token, r.at))
		}
		if e.token <= maxToken && !deletedUnseen(maxAt) {
			out = append(out, fmt.Sprintf("token did not increase: %s started with token %d at +%v after token %d", e.who, e.token, e.at, maxToken))
		}
		if e.token > maxToken {
			maxToken, maxAt = e.token, e.at
		}
		for _, p := range starts {
			// State faults (delete, restore, foreign) lose what the record
			// remembered: the period and the hold are not promised after them.
			stateLost := h.faultIn(p.at, e.at, -1, restore, foreign, deleteRec)
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
			case ended && pe.ok && pe.at <= e.at && !h.faultIn(pe.at-ttl, pe.at+ttl, whoIndex(p.who), hang, slowCalls):
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
			// within a renew interval and a call.
			if p.minHold > 0 && c.at >= p.at && c.at < p.at+p.minHold-lease.DefaultRenewInterval(ttl)-ttl/5 && p.task != c.ran &&
				!h.faultIn(p.at, p.at+p.minHold, -1, restore, foreign, deleteRec) && !h.holdCut(p, whoIndex(p.who)) &&
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

// holdCut reports whether the hold of start p could not be kept through
// no fault of the runner: its holder was cut off from the store (hung) while
// it held the lease, or its term ended as lost or past its deadline.
func (h *history) holdCut(p event, who int) bool {
	return h.outcomes[p.task].cut || h.faultIn(p.at, p.at+p.minHold, who, hang, slowCalls)
}

// sim runs one schedule in the calling synctest bubble and returns its
// history.
func run(t *testing.T, sc scenario) *history {
	st := newStore()
	h := &history{t0: time.Now(), outcomes: map[int]outcome{}, st: st}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)

	ctls := make([]*ctl, len(sc.contenders))
	for i := range ctls {
		ctls[i] = &ctl{returns: map[int]chan struct{}{}}
	}
	open := func(c contender) lease.Lease {
		l, err := driver.NewCAS(&conn{s: st, id: c.id}, lease.Options{Identity: c.id, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
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
			tick := time.NewTicker(ttl / 20)
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
	config := func(i int, l lease.Lease, t func(context.Context) error) runner.Config {
		c, k := sc.contenders[i], ctls[i]
		cfg := runner.Config{Lease: l, Task: t, Logger: logger, StallTimeout: c.stall,
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

	var wg sync.WaitGroup
	for i, c := range sc.contenders {
		rng := rand.New(rand.NewPCG(sc.seed, uint64(i)))
		switch c.kind {
		case runKind, childKind, pairKind:
			l := open(c)
			n := 1
			if c.kind == pairKind {
				n = 2
			}
			for range n {
				work := time.Duration(1+rng.IntN(20)) * ttl / 2
				r, err := runner.New(config(i, l, task(i, work, "", false, 0, 0, 0, nil)))
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() { _ = r.Run(ctx) })
			}
		case onceKind:
			shared := open(c)
			for k := range int(horizon / period) {
				for range 1 + rng.IntN(2) {
					at := time.Duration(k)*period + time.Duration(rng.Int64N(int64(period)))
					work := time.Duration(rng.Int64N(int64(2 * ttl))).Truncate(time.Millisecond)
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
						cfg := config(i, l, nil)
						if c.period {
							cfg.Period, cl.period = strconv.Itoa(k), strconv.Itoa(k)
						}
						cfg.RetryFailed, cfg.MinHold = c.retry, c.minHold
						cfg.Task = task(i, work, cfg.Period, c.retry, c.minHold, cl.at, opened, &cl.ran)
						r, err := runner.New(cfg)
						if err != nil {
							t.Error(err)
							return
						}
						once, err := r.RunOnce(ctx)
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
			apply(ctx, st, s, sc, ctls[s.Who], &wg)
			h.fault(s)
		}
	})
	sleepCtx(ctx, horizon)
	cancel()
	wg.Wait()
	st.slow.Wait()
	return h
}

// ctl is how steps reach one contender's health check and tasks.
type ctl struct {
	sick, stalled atomic.Bool
	mu            sync.Mutex
	returns       map[int]chan struct{} // running tasks: close to make them return
}

// apply applies step s; faults that last (sick, stall, foreign) are undone
// by a goroutine of wg after s.D.
func apply(ctx context.Context, st *store, s step, sc scenario, k *ctl, wg *sync.WaitGroup) {
	id := sc.contenders[s.Who].id
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
		cur, r, err := st.current()
		if err != nil {
			return
		}
		if bodies := st.termBodies(r, cur); len(bodies) > 0 {
			st.put(bodies[s.Seed%uint64(len(bodies))])
		}
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
		for id, back := range k.returns {
			close(back)
			delete(k.returns, id)
		}
		k.mu.Unlock()
	}
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

// shrink drops steps from a failing schedule while it still fails (each
// candidate is tried three times: the runners' jitter is not seeded).
func shrink(t *testing.T, sc scenario) scenario {
	for i := 0; i < len(sc.steps); {
		cand := sc
		cand.steps = slices.Delete(slices.Clone(sc.steps), i, i+1)
		failed := false
		for range 3 {
			if v, _ := explore(t, cand); len(v) > 0 {
				failed = true
				break
			}
		}
		if failed {
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
	fmt.Fprintf(&b, "  store keeps held records (Keeper): %t\n", sc.keep)
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
		if v, h := explore(t, sc); len(v) > 0 {
			t.Fatal(report(sc, v, indexes(newScenario(*seedFlag, fo).steps, sc.steps)) + h.String())
		}
		return
	}
	n := defaultSchedules
	if s := os.Getenv("LEASEHOLD_SIM_SCHEDULES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("LEASEHOLD_SIM_SCHEDULES=%q: want a positive number of schedules", s)
		}
	}
	if testing.Short() {
		n = min(n, 500)
	}
	base := uint64(time.Now().UnixNano())
	if s := os.Getenv("LEASEHOLD_SIM_BASE"); s != "" {
		base, _ = strconv.ParseUint(s, 10, 64)
	}
	var next atomic.Uint64
	var mu sync.Mutex
	first := map[string]found{} // per class of violation: the first schedule that showed it
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
					for _, msg := range v {
						class, _, _ := strings.Cut(msg, ":")
						if _, ok := first[class]; !ok {
							first[class] = found{sc: sc, after: time.Since(began), schedules: i, seen: report(sc, v, nil) + h.String()}
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
	classes := slices.Sorted(maps.Keys(first))
	for _, class := range classes {
		f := first[class]
		t.Logf("found %q: seed %d, after %v (%d schedules)", class, f.sc.seed, f.after.Round(time.Millisecond), f.schedules)
	}
	for _, class := range classes {
		sc := first[class].sc
		full := sc
		sc = shrink(t, sc)
		v, _ := explore(t, sc)
		if len(v) == 0 {
			v, _ = explore(t, full)
			sc = full
		}
		t.Error(report(sc, v, indexes(full.steps, sc.steps)) + "  as first seen:\n" + first[class].seen)
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
