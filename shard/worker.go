package shard

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/runner"
)

// Shard is one shard as its function sees it.
type Shard struct {
	// Index is the shard's number, 0 to Shards-1.
	Index int
	// Epoch is the fencing token of this start of the shard: greater than
	// that of every earlier start of it, on any worker.
	Epoch uint64
}

// EventKind says what happened to a shard on this worker.
type EventKind int

const (
	// Assigned: the shard started here (Config.Run was called).
	Assigned EventKind = iota + 1
	// Revoked: the shard stopped because the assignment moved it, or the
	// context given to Run ended; it is released once its function returned.
	Revoked
	// Lost: the shard stopped because this worker's liveness ended (its
	// lease was lost, the renew deadline passed, or it was unhealthy).
	Lost
	// Ended: the shard's function returned by itself. The shard stays
	// this worker's, and is not started again until it is assigned anew;
	// its later revocation or loss is not reported again.
	Ended
)

var kindNames = map[EventKind]string{Assigned: "assigned", Revoked: "revoked", Lost: "lost", Ended: "ended"}

// String names the kind in words, for logs: "assigned".
func (k EventKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event reports a change of one shard on this worker.
type Event struct {
	// Kind says what happened.
	Kind EventKind
	// Shard is the shard it happened to, with the epoch of its start.
	Shard Shard
	// Err is the function's error, for Ended and for the end of a Revoked
	// or Lost shard; nil otherwise.
	Err error
}

// Config says which group a worker joins and what it runs per shard.
// Store, Group, Shards, Identity and Run are required; a zero duration
// means its default.
type Config struct {
	// Store holds the group's objects (see Store).
	Store Store
	// Group is the prefix of the group's keys, such as "jobs".
	Group string
	// Shards is N: the group shares shards 0 to N-1. It is fixed for a
	// group: a worker whose Shards differs from the group's gets an
	// error from Run. At most MaxShards.
	Shards int
	// MaxPerWorker, if not 0, is the most shards one worker runs at once:
	// with fewer than Shards/MaxPerWorker live workers some shards run
	// nowhere, and with more, some workers run none and wait for a shard
	// to come free. With 1, each shard is a slot of which a worker holds
	// at most one (leasehold run --holders). It is fixed for a group, as
	// Shards is: a worker whose MaxPerWorker differs from the group's
	// gets an error from Run. Every worker of a capped group must be of a
	// version that knows the cap: an earlier one ignores it, and as the
	// group's assigner would plan without it (the workers that know it
	// then stop with that error).
	MaxPerWorker int
	// Identity names this worker: unique in the group, stable across
	// restarts (so that a restarted worker gets its shards back).
	Identity string
	// Run is the work for one shard. Its context is cancelled when the
	// shard is revoked, when this worker's liveness ends, and when the
	// context given to Worker.Run ends; the shard is released only after
	// Run has returned. It must stop acting for the shard when its context
	// is cancelled; downstream systems fence it by Shard.Epoch. A Run
	// that needs time to stop (see DrainTimeout) must return by
	// runner.Expiry of its context, the earliest instant a lease the shard
	// rests on may be someone else's: the worker's liveness lease and,
	// while the worker is the group's assigner, the assigner lease
	// (runner.Joint). runner.RenewalsDone of its context says when to look
	// again.
	Run func(ctx context.Context, s Shard) error

	// TTL is the liveness lease's TTL, the group's (every worker must use
	// the same). Default lease.DefaultTTL.
	TTL time.Duration
	// RenewInterval is how often a worker renews its liveness and reads
	// the assignment, the group's too: a whole number of milliseconds, as
	// the assignment keeps it. Default lease.DefaultRenewInterval.
	RenewInterval time.Duration
	// RenewDeadline: a worker that has not renewed its liveness within it
	// of sending its last successful renewal stops all its shards.
	// Default runner.DefaultRenewDeadline.
	RenewDeadline time.Duration
	// CallTimeout bounds each request to the store. Default TTL/5.
	CallTimeout time.Duration

	// NoAssigner keeps this worker from campaigning to be the group's
	// assigner, which saves the followers' reads of the assigner's lease
	// (about two per renew interval). At least one worker of a group must
	// campaign.
	NoAssigner bool

	// HealthCheck, HealthInterval, HealthTimeout, HealthThreshold,
	// StallTimeout and DrainTimeout are the runner's (see runner.Config),
	// applied to the worker's liveness: an unhealthy or stalled worker
	// stops all its shards and rejoins after a cool-down. The stall
	// watchdog counts runner.Progress calls made with any shard's context.
	// DrainTimeout applies to the assigner lease too: a worker that leaves
	// or is unhealthy keeps both its leases renewed while its shards'
	// functions return, for at most DrainTimeout, so that no successor
	// frees its shards meanwhile.
	HealthCheck     func(ctx context.Context) error
	HealthInterval  time.Duration
	HealthTimeout   time.Duration
	HealthThreshold int
	StallTimeout    time.Duration
	DrainTimeout    time.Duration

	// OnEvent, if set, is called for every Event, on the worker's
	// goroutines; it must return quickly.
	OnEvent func(Event)
	// OnRenew, if set, is called after every renewal attempt of the
	// worker's liveness lease (runner.Config.OnRenew).
	OnRenew func(took time.Duration, err error)
	// OnSettled, if set, is called on the group's assigner each time an
	// assignment settles the group after a change (see Settled), on the
	// assigner's goroutine; it must return quickly.
	OnSettled func(Settled)
	// Logger receives the worker's logs. Default slog.Default().
	Logger *slog.Logger
	// Rand is where the worker's runners (its liveness and its campaign
	// for the assigner) draw their random numbers (runner.Config.Rand),
	// and the random low bits of its terms' tokens: all draw from it, so
	// it must be safe for concurrent use
	// (runner.LockedSource). A simulation seeds it, so that a seed
	// replays the run. Default: math/rand/v2's global source.
	Rand rand.Source

	// expireAfter, if set, replaces the TTL in the assigner's judgement of
	// expiry: only tests set it, to show what judging early breaks.
	expireAfter time.Duration
}

// listsPerRenewal is how many times per renew interval the assigner lists
// the group.
const listsPerRenewal = 3

func (c *Config) listInterval() time.Duration { return c.RenewInterval / listsPerRenewal }

func invalid(field string, value any, reason string) error {
	return &lease.OptionError{Pkg: "shard", Field: field, Value: value, Reason: reason}
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Store == nil:
		return c, invalid("Store", nil, "is required")
	case c.Group == "":
		return c, invalid("Group", `""`, "is required")
	case c.Shards < 1 || c.Shards > MaxShards:
		return c, invalid("Shards", c.Shards, fmt.Sprintf("must be between 1 and %d", MaxShards))
	case c.MaxPerWorker < 0 || c.MaxPerWorker > c.Shards:
		return c, invalid("MaxPerWorker", c.MaxPerWorker, fmt.Sprintf("must be between 0 (no cap) and Shards (%d)", c.Shards))
	case c.Run == nil:
		return c, invalid("Run", nil, "is required")
	case strings.HasSuffix(c.Identity, driver.ProbeSuffix):
		return c, invalid("Identity", c.Identity, "must not end with "+driver.ProbeSuffix+", which names the object a store's probe writes beside a lease")
	}
	opts, err := c.leaseOptions().Validate()
	if err != nil {
		return c, err
	}
	c.TTL, c.RenewInterval, c.CallTimeout = opts.TTL, opts.RenewInterval, opts.CallTimeout
	// The assignment keeps the group's renew interval in whole
	// milliseconds (lease.Options keeps TTL so already): any other would
	// read back as another group's.
	if c.RenewInterval%time.Millisecond != 0 {
		return c, invalid("RenewInterval", c.RenewInterval, "must be a whole number of milliseconds")
	}
	c.RenewDeadline = cmp.Or(c.RenewDeadline, runner.DefaultRenewDeadline(c.TTL))
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c, nil
}

func (c *Config) leaseOptions() lease.Options {
	return lease.Options{Identity: c.Identity, TTL: c.TTL, RenewInterval: c.RenewInterval, CallTimeout: c.CallTimeout}
}

// Worker is one member of a group: it keeps its liveness, campaigns to be
// the group's assigner, and runs Config.Run for every shard the assignment
// gives it.
type Worker struct {
	cfg Config

	mu      sync.Mutex
	owned   map[int]uint64 // running shards and their epochs
	stopped context.Context
	stop    context.CancelCauseFunc
	failed  error // the first error given to fatal
	// genSeen is the highest Gen this process has read in an assignment
	// or written as the assigner: no assigner term of it writes one at or
	// below it (see assigner.load).
	genSeen highest
	// termSeen is the greatest token of a term of this worker that this
	// process found named in the group's records (see laterTerm): every
	// later term of the process begins above it, even if no record names
	// it any longer when that term begins (see termFloor).
	termSeen highest
	// assigner is the assigner lease, opened once and campaigned with in
	// every liveness term, so that the engine's count of its tokens (rule
	// 10: no contender writes a token at or below the highest it has
	// seen) spans this process's terms (see campaign).
	assigner lease.Lease
	// assigning is the group's assigner as this worker knows it (see
	// Assigner), under mu.
	assigning AssignerInfo
}

// AssignerInfo is the group's assigner as one worker knows it
// (Worker.Assigner).
type AssignerInfo struct {
	// Self is true while this worker is the group's assigner: from its
	// election to the assigner lease until that term ends or steps down
	// (as its worker leaves, say), when it stops assigning. Token is that
	// term's fencing token, 0 when Self is false.
	Self  bool
	Token uint64
	// Identity is the holder of the assigner lease as this worker's
	// campaign last saw it: this worker while Self, "" before it first
	// read the lease, after its own term as assigner ended, and always
	// with Config.NoAssigner.
	Identity string
}

// Assigner returns the group's assigner as this worker knows it. Self is
// set as the assigner term begins and cleared as its context ends, when
// it steps down (at the latest at its renew deadline), before its lease
// is released or can be judged expired: the assigner lease has one
// holder, so a group's workers show one assigner at most, but for the
// moments these take.
func (w *Worker) Assigner() AssignerInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.assigning
}

// seeAssigner notes identity as the assigner lease's holder, as this
// worker's campaign observed it.
func (w *Worker) seeAssigner(identity string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.assigning.Self {
		w.assigning.Identity = identity
	}
}

// assignUntilDone notes that this worker is the group's assigner in the
// assigner term of actx, the assigner lease's task context, until actx
// ends.
func (w *Worker) assignUntilDone(actx context.Context) {
	t, _ := runner.Term(actx)
	w.mu.Lock()
	w.assigning = AssignerInfo{Self: true, Token: t.Token, Identity: w.cfg.Identity}
	w.mu.Unlock()
	context.AfterFunc(actx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.assigning.Self && w.assigning.Token == t.Token {
			w.assigning = AssignerInfo{}
		}
	})
}

// New validates cfg and returns a Worker. Invalid settings are reported as
// errors wrapping lease.ErrInvalid that name the field and its value.
func New(cfg Config) (*Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Worker{cfg: cfg, owned: map[int]uint64{}}, nil
}

// Run joins the group and runs shards until ctx ends; then it stops every
// shard, says it left, releases its liveness and returns nil. It returns an
// error when the worker cannot take part without a person's help: its
// Shards, MaxPerWorker, TTL or RenewInterval differ from the group's, a lease or the
// assignment cannot be used (see lease.Retryable), or the store's leases'
// renewals do not change their records' versions (lease.RenewalsShow is
// false): the assigner, which judges liveness by rule 2 on the versions it
// lists, would judge every live worker expired (lease.ErrUnsafeStore).
// Call it once per Worker.
func (w *Worker) Run(ctx context.Context) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w.mu.Lock()
	w.stopped, w.stop = ctx, stop
	w.mu.Unlock()
	w.sayRestarting(ctx)
	liveness, err := w.openLease(memberKey(w.cfg.Group, w.cfg.Identity))
	if err == nil && !w.cfg.NoAssigner {
		w.assigner, err = w.openLease(assignerKey(w.cfg.Group))
	}
	var wait func()
	if err == nil {
		wait, err = w.startRunner(ctx, memberKey(w.cfg.Group, w.cfg.Identity), liveness, w.serve, runner.Config{
			HealthCheck: w.cfg.HealthCheck, HealthInterval: w.cfg.HealthInterval, HealthTimeout: w.cfg.HealthTimeout,
			HealthThreshold: w.cfg.HealthThreshold, StallTimeout: w.cfg.StallTimeout, DrainTimeout: w.cfg.DrainTimeout,
			OnRenew: w.cfg.OnRenew, Annotate: w.nameTerm,
		})
	}
	if err != nil {
		w.fatal(err)
	} else {
		wait()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed
}

// openLease opens the lease key of the group. It refuses a store whose
// leases' renewals do not show (see Run).
func (w *Worker) openLease(key string) (lease.Lease, error) {
	l, err := w.cfg.Store.Lease(key, w.cfg.leaseOptions())
	if err != nil {
		return nil, err
	}
	if !lease.RenewalsShow(l) {
		return nil, fmt.Errorf("shard: %w: the store %T: the renewals of its lease %s do not change the record's version (lease.RenewalsShow is false), and the assigner judges liveness by rule 2 on listed versions", lease.ErrUnsafeStore, w.cfg.Store, key)
	}
	return l, nil
}

// startRunner starts a runner of lease l, the group's key (see openLease),
// with task, until ctx ends, and returns a function that waits for it to
// return.
func (w *Worker) startRunner(ctx context.Context, key string, l lease.Lease, task func(context.Context) error, rc runner.Config) (wait func(), err error) {
	rc.Lease, rc.Task, rc.Logger = l, task, w.cfg.Logger.With("lease", key)
	rc.RenewDeadline, rc.RenewInterval, rc.Rand = w.cfg.RenewDeadline, w.cfg.RenewInterval, w.cfg.Rand
	r, err := runner.New(rc)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil {
			w.fatal(err)
		}
	}()
	return func() { <-done }, nil
}

// sayRestarting, when this worker's liveness lease is held under its own
// identity (a term of an earlier process, which crashed or was restarted),
// marks that term's acknowledgement Restarting, so that the assigner keeps
// its shards for this process while it waits for the lease to lapse. One
// attempt: if it fails, the shards move as after any crash.
func (w *Worker) sayRestarting(ctx context.Context) {
	l, err := w.cfg.Store.Lease(memberKey(w.cfg.Group, w.cfg.Identity), w.cfg.leaseOptions())
	if err != nil {
		return
	}
	rec, err := l.Observe(ctx)
	if err != nil || !rec.Held() || rec.Holder != w.cfg.Identity {
		return
	}
	key := ackKey(w.cfg.Group, w.cfg.Identity)
	data, v, err := w.get(ctx, key, "")
	if err != nil {
		return
	}
	k, err := decodeAck(data)
	if err != nil || !k.ofLease(rec.Token) {
		return
	}
	k.Restarting = true
	if _, err := w.put(ctx, key, k.encode(), v); err == nil {
		w.cfg.Logger.Info("shard: restarting: this worker's earlier term still holds its liveness; its shards wait for this process", "token", rec.Token)
	}
}

// random32 draws 32 random bits from Config.Rand, or from math/rand/v2's
// global source when it is nil.
func (w *Worker) random32() uint32 {
	if w.cfg.Rand != nil {
		return uint32(w.cfg.Rand.Uint64() >> 32)
	}
	return rand.Uint32()
}

// highest is the greatest of the numbers noted, from any goroutine.
type highest struct {
	mu sync.Mutex
	n  uint64
}

func (h *highest) note(n uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n = max(h.n, n)
}

func (h *highest) get() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// fatal ends Run with err, unless an earlier error ended it.
func (w *Worker) fatal(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed == nil {
		w.failed = err
	}
	w.stop(err)
}

// Owned returns the shards running on this worker, by index.
func (w *Worker) Owned() []Shard {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Shard, 0, len(w.owned))
	for s, e := range w.owned {
		out = append(out, Shard{s, e})
	}
	slices.SortFunc(out, func(a, b Shard) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

// emit logs e and reports it to Config.OnEvent.
func (w *Worker) emit(e Event) {
	level := slog.LevelInfo
	if e.Kind == Lost || e.Err != nil {
		level = slog.LevelWarn
	}
	attrs := []any{"shard", e.Shard.Index, "epoch", e.Shard.Epoch}
	if e.Err != nil {
		attrs = append(attrs, "err", e.Err)
	}
	w.cfg.Logger.Log(context.Background(), level, "shard: "+e.Kind.String(), attrs...)
	if w.cfg.OnEvent != nil {
		w.cfg.OnEvent(e)
	}
}

// session is one liveness term of this worker.
type session struct {
	w       *Worker
	me      term
	lease   uint64    // the liveness lease's token (ack.Lease)
	after   string    // ack.After
	highest uint64    // the latest Gen applied; older ones are restores
	fence   bool      // the assignment applied last is a fence
	version string    // the assignment's version as last read
	expect  time.Time // its Expect
	readAt  time.Time // when the latest read of it was sent
	named   bool      // an assignment applied named this term
	acked   uint64    // the latest Gen acknowledged
	ackVer  string    // the acknowledgement's version, "" when unknown
	last    ack       // the latest acknowledgement written
	running map[int]*run
	end     context.CancelFunc // ends the term (see apply)
	// wake is signalled when the assigner this worker observes changes
	// (see campaign); left is closed once the term has left (see leave).
	wake chan struct{}
	left chan struct{}
	// join adds an assigner term of this liveness term to the leases its
	// shards rest on (runner.Joint): see campaign.
	join func(context.Context)
}

// run is one start of one shard.
type run struct {
	shard  Shard
	cancel context.CancelFunc
	done   chan struct{}
	err    error
	ended  bool // the function returned by itself (Ended), set before done closes
}

// serve is the liveness lease's task: one term of membership. It says
// hello, campaigns to be the assigner (see campaign), then reads the
// assignment every renew interval and applies what changed, until the
// term ends.
func (w *Worker) serve(ctx context.Context) error {
	lt, _ := runner.Term(ctx)
	if err := checkTokenFits("liveness", lt.Token); err != nil {
		w.fatal(err)
		return err
	}
	floor, err := w.termFloor(ctx)
	if err != nil {
		return nil // the term ended first
	}
	floor = max(floor, w.termSeen.get())
	me := term{w.cfg.Identity, termToken(lt.Token, floor, termRandom(lt.Annotations))}
	ctx, join := runner.Joint(ctx)
	ctx, end := context.WithCancel(ctx)
	s := &session{w: w, me: me, lease: lt.Token, after: lt.Annotations.Get(afterAnnotation), end: end, running: map[int]*run{}, wake: make(chan struct{}, 1), left: make(chan struct{}), join: join}
	waitAssigner := func() {}
	defer func() {
		end()
		waitAssigner()
	}()
	defer s.leave(ctx)
	if s.ack(ctx, ack{Token: me.Token}) != nil {
		return nil
	}
	if !w.cfg.NoAssigner {
		wait, err := s.campaign(ctx, end)
		if err != nil {
			w.fatal(err)
			return err
		}
		waitAssigner = wait
	}
	if err := s.hurry(ctx, func() bool { return s.named }); err != nil {
		w.fatal(err)
		return err
	}
	for polls := 1; ; polls++ {
		if err := s.poll(ctx); err != nil {
			w.fatal(err)
			return err
		}
		if polls%ackCheckEvery == 0 {
			s.checkAck(ctx)
		}
		next := time.Now().Add(w.cfg.RenewInterval)
		for ctx.Err() == nil {
			at, expected := s.expectedRead(next)
			if !expected {
				at = next
			}
			if s.sleep(ctx, time.Until(at)) {
				// A new assigner: read its fence, and the assignment after
				// it, soon after they are written.
				base := s.highest >> 32
				if err := s.hurry(ctx, func() bool { return s.highest>>32 > base && !s.fence }); err != nil {
					w.fatal(err)
					return err
				}
				break
			}
			if !expected {
				break
			}
			if err := s.poll(ctx); err != nil {
				w.fatal(err)
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// termFloor returns the highest term of this worker that its
// acknowledgement and the assignment name, 0 if none, reading both until
// it can or ctx ends: a new term's token goes above it (see termToken),
// even when the worker's liveness record was deleted and its lease's
// tokens began again at 1.
func (w *Worker) termFloor(ctx context.Context) (uint64, error) {
	for {
		floor, err := w.namedTerms(ctx)
		if err == nil || ctx.Err() != nil {
			return floor, err
		}
		ctxtime.Sleep(ctx, w.cfg.RenewInterval/8)
	}
}

// namedTerms is one attempt of termFloor. Objects that are not what they
// should be name nothing, and so do objects the store cannot return
// (lease.ErrCorrupt: a DynamoDB head item restored after a later write
// deleted its parts), which no read will ever return: waiting for them
// would keep every new term from saying hello and campaigning, and so
// keep any assigner from writing the fence that replaces them. Should
// one have named a greater term of this worker, an assignment that names
// it again ends this term (laterNamed), as after any loss of these
// records; the assigner and poll say what is wrong with them.
func (w *Worker) namedTerms(ctx context.Context) (uint64, error) {
	var floor uint64
	data, _, err := w.get(ctx, ackKey(w.cfg.Group, w.cfg.Identity), "")
	if err != nil && !namesNothing(err) {
		return 0, err
	}
	if k, err := decodeAck(data); err == nil {
		floor = k.Token
	}
	data, _, err = w.get(ctx, assignmentKey(w.cfg.Group), "")
	if err != nil && !namesNothing(err) {
		return 0, err
	}
	if a, err := decodeAssignment(data); err == nil {
		for _, m := range a.Members {
			if m.ID == w.cfg.Identity {
				floor = max(floor, m.Token)
			}
		}
	}
	return floor, nil
}

// namesNothing reports whether a read that failed with err shows an
// object that names no term: none stored, or one that cannot be read.
func namesNothing(err error) bool {
	return errors.Is(err, lease.ErrNoRecord) || errors.Is(err, lease.ErrCorrupt)
}

// liveAnnotation is the liveness lease's annotation that names the
// liveness term that holds it (liveName of its token), written with the
// term's first renewal, made at once, and with every write after it (see
// Worker.nameTerm); afterAnnotation names the term whose record it took
// over (ack.After).
const (
	liveAnnotation  = "shard/live"
	afterAnnotation = "shard/after"
)

// liveName is how a liveness record names the term with token: the
// token's 32 random bits (termToken), drawn when the liveness lease is
// won, before the term's token is made, so that its first renewal names
// it.
func liveName(token uint64) string { return fmt.Sprintf("%08x", uint32(token)) }

// nameTerm is the liveness runner's Config.Annotate: it draws the random
// bits of the term that won the lease and names the term by them
// (liveAnnotation), and names the term whose record it took over
// (afterAnnotation), unless an operator broke that record
// (lease.AnnotationBroken: its holder may run until its next renewal
// finds the lease lost, and its shards for as long as they take to stop,
// so it is judged as any term that did not leave).
func (w *Worker) nameTerm(won lease.Term) lease.Annotations {
	after := won.Annotations.Get(liveAnnotation)
	if _, ok := parseLiveName(after); !ok || won.Annotations.Get(lease.AnnotationBroken) != "" {
		after = "" // and a name no term writes (a tool's, too long to carry) is none
	}
	return won.Annotations.With(afterAnnotation, after).With(liveAnnotation, liveName(uint64(w.random32())))
}

// parseLiveName returns the random bits that name, as liveName writes
// it, names; ok is false for anything else.
func parseLiveName(name string) (uint32, bool) {
	n, err := strconv.ParseUint(name, 16, 32)
	return uint32(n), err == nil && name == liveName(n)
}

// termRandom returns the random bits nameTerm drew for the term whose
// record's annotations are a.
func termRandom(a lease.Annotations) uint32 {
	n, _ := parseLiveName(a.Get(liveAnnotation)) // nameTerm wrote it
	return n
}

// termAnnotation is the assigner lease's annotation that names the
// liveness term (token and identity) of the worker whose assigner term
// wrote the record: see campaign.
const termAnnotation = "shard/term"

func (t term) annotation() string { return strconv.FormatUint(t.Token, 10) + " " + t.ID }

// gensAnnotation is the assigner lease's annotation that says the high
// half of the Gens of the term that wrote the record: each term writes it
// (and sees a renewal carrying it succeed) before it writes its first
// Gen, above the high half the record it took over named, so that the
// high halves of assigner terms' Gens increase from term to term even
// when the lease's token went back (its record deleted, or restored as an
// earlier holder wrote it) and every other record of the later Gens was
// lost (sim seed 4196: the assignment deleted, the acknowledgements
// restored, the workers that applied them gone).
const gensAnnotation = "shard/gens"

// gensOf returns the high half of the Gens of won, a term of the assigner
// lease this worker won: above the one the record it took over names
// (gensAnnotation), above the high half of every Gen this process has
// read or written (seen), and at least its token. A value that is not a
// number names none (the record's other annotations still count). The
// result may exceed maxToken, which only records put there reach (2^31
// assigner terms are not run): such a term writes nothing (assign).
func gensOf(won lease.Term, seen uint64) uint64 {
	high := won.Token
	if prev := annotatedGens(won.Annotations); prev > 0 {
		high = max(high, prev+1)
	}
	if seen > 0 {
		high = max(high, seen>>32+1)
	}
	return high
}

// annotatedGens returns the high half of the Gens the assigner lease's
// record a names (gensAnnotation), 0 for none.
func annotatedGens(a lease.Annotations) uint64 {
	n, err := strconv.ParseUint(a.Get(gensAnnotation), 10, 63)
	if err != nil {
		return 0
	}
	return n
}

// parseTermAnnotation reads what term.annotation wrote; ok is false for
// anything else.
func parseTermAnnotation(v string) (t term, ok bool) {
	tok, id, found := strings.Cut(v, " ")
	n, err := strconv.ParseUint(tok, 10, 64)
	if !found || err != nil || n == 0 || id == "" {
		return term{}, false
	}
	return term{id, n}, true
}

// campaign starts this term's campaign to be the group's assigner, and
// returns a function that waits for it to end once ctx has. The
// assigner's term is bound to this liveness term: it runs within it, and
// when it ends for any reason (its lease lost, its renew deadline passed,
// a later assigner wrote the assignment), it ends this liveness term with
// it (end), whose every shard stops, before its lease is released. Every
// renewal of the assigner lease and its release write this liveness term
// in the record's annotation (termAnnotation). From its start, this
// term's shards rest on the assigner lease too (s.join: runner.Expiry of
// a shard's context is the earlier of the two leases'), and it drains as
// the liveness does (DrainTimeout), renewed until the shards returned. So
// a worker that wins the assigner lease, and finds a term named there,
// knows that term has stopped every shard and will start none: the term
// that wrote the annotation held the lease before it, and had ended by
// the time the lease could be won (the lease contract), its liveness
// term with it, and released the lease only after its shards returned,
// or let it lapse after their expiry. Unless an operator broke the
// record (lease.AnnotationBroken: leasehold break --force): its holder
// runs until its next renewal finds the lease lost, and its shards for
// as long as they take to stop, so that term is one the new assigner
// judges as any other (its Left acknowledgement, or its liveness's
// expiry). The new assigner frees that term's
// shards at once (assigner.ended) instead of counting a TTL of its own
// towards its liveness's expiry.
//
// Every term campaigns with the one Lease of the assigner's key that Run
// opened (Worker.assigner), so that its count of the lease's tokens goes
// on from the terms before: a record deleted meanwhile is waited out, and
// taken with a token above every one this process saw, not with token 1
// (rule 10). A term's runner has returned before the next term's starts,
// so the Lease has one contender at a time.
//
// Every campaigning worker follows the assigner's lease, so it reads it
// runner.DefaultFollowerReads times per renewal on every store, not the
// more a store may ask for a lease's handover (six on Azure): a group's
// cost stays the workers' formula everywhere. When the assigner it
// observes changes, it reads the assignment at a new term's pace until it
// has applied the new assigner's first assignment after its fence
// (serve).
func (s *session) campaign(ctx context.Context, end context.CancelFunc) (wait func(), err error) {
	w := s.w
	var ended term           // named by the record the latest term won took over
	var gens uint64          // the high half of the latest term's Gens (gensAnnotation)
	var landed chan struct{} // closed once a renewal of that term, which writes gens, succeeded
	leader := ""
	return w.startRunner(ctx, assignerKey(w.cfg.Group), w.assigner, func(actx context.Context) error {
		s.join(actx)
		context.AfterFunc(actx, end)
		w.assignUntilDone(actx)
		err := w.assign(actx, ended, gens, landed)
		end()
		<-s.left
		return err
	}, runner.Config{
		FollowerReads: runner.DefaultFollowerReads,
		DrainTimeout:  w.cfg.DrainTimeout,
		Annotate: func(won lease.Term) lease.Annotations {
			ended, _ = parseTermAnnotation(won.Annotations.Get(termAnnotation))
			if ended == s.me || won.Annotations.Get(lease.AnnotationBroken) != "" {
				// A broken record's holder may run until its next
				// renewal: its term is judged as any worker's.
				ended = term{}
			}
			gens, landed = gensOf(won, w.genSeen.get()), make(chan struct{})
			return won.Annotations.With(termAnnotation, s.me.annotation()).With(gensAnnotation, strconv.FormatUint(gens, 10))
		},
		OnRenew: func(_ time.Duration, err error) {
			// Called by the term's one renewing goroutine, after Annotate.
			select {
			case <-landed:
			default:
				if err == nil {
					close(landed)
				}
			}
		},
		OnLeaderChanged: func(id string) {
			w.seeAssigner(id)
			if leader != "" {
				select {
				case s.wake <- struct{}{}:
				default:
				}
			}
			leader = id
		},
	})
}

// sleep waits for d, until ctx ends, or until the assigner observed
// changes: then it returns true.
func (s *session) sleep(ctx context.Context, d time.Duration) (woken bool) {
	// A wake already signalled wins over a timer already due (d ≤ 0: a
	// read took until the next was due), which a select would otherwise
	// pick between at random.
	select {
	case <-s.wake:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.wake:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// newTermReads is how many times per renew interval a worker reads the
// assignment while it hurries, for at most newTermWait renew intervals.
const (
	newTermReads = 8
	newTermWait  = 2
)

// hurry reads the assignment newTermReads times per renew interval until
// done, for at most newTermWait renew intervals: a new term until an
// assignment names it, since the assigner gives a joining or restarted
// worker its shards within a listing interval of its hello, so it starts
// them without waiting a renew interval for its next read; and every
// campaigning worker when the assigner changes, so that it acknowledges
// the new assigner's fence, and starts what the assignment after it
// gives, soon after they are written. About 16 reads at most, once per
// term or per change of assigner.
func (s *session) hurry(ctx context.Context, done func() bool) error {
	r := s.w.cfg.RenewInterval
	until := time.Now().Add(newTermWait * r)
	for !done() && time.Now().Before(until) && ctx.Err() == nil {
		if err := s.poll(ctx); err != nil {
			return err
		}
		ctxtime.Sleep(ctx, r/newTermReads)
	}
	return nil
}

// expectedReads is how many reads a worker makes after an assignment's
// Expect, a tenth of a renew interval apart, until it finds a new one.
const expectedReads = 3

// expectedRead returns when to read the assignment before next, because
// the assignment read last expects the next one (assignment.Expect): a
// tenth of a renew interval after Expect, then a tenth apart, up to
// expectedReads times, until the version read changes. ok is false when no
// such read falls after now and before next.
func (s *session) expectedRead(next time.Time) (time.Time, bool) {
	if s.expect.IsZero() {
		return time.Time{}, false
	}
	step := s.w.cfg.RenewInterval / 10
	now := time.Now()
	for i := range expectedReads {
		at := s.expect.Add(time.Duration(i+1) * step)
		if at.After(now) && at.Before(next) && !at.Before(s.readAt.Add(step/2)) {
			return at, true
		}
	}
	return time.Time{}, false
}

// poll reads the assignment if it changed and applies it if it is newer
// than every one applied. It returns an error only when the worker must
// stop.
func (s *session) poll(ctx context.Context) error {
	cfg := &s.w.cfg
	s.readAt = time.Now()
	data, v, err := s.w.get(ctx, assignmentKey(cfg.Group), s.version)
	if err != nil || data == nil {
		return nil
	}
	a, err := decodeAssignment(data)
	if err != nil {
		cfg.Logger.Error("shard: the assignment object is not one", "err", err)
		return nil
	}
	if err := a.checkGroup(cfg.Shards, cfg.MaxPerWorker, cfg.TTL, cfg.RenewInterval); err != nil {
		return err
	}
	s.version, s.expect = v, a.Expect
	s.w.genSeen.note(a.Gen)
	switch seen := s.w.genSeen.get(); {
	case a.Gen > s.highest:
		s.apply(ctx, a)
	case a.Fence && s.last.Seen < seen:
		// A fence below a Gen this term applied: a restore of an earlier
		// one, or a new assigner that could read no Gen as high (see
		// assigner.outrun). Say what this process has seen, so that it
		// writes its fence above it instead of waiting for this term.
		_ = s.ack(ctx, s.last)
	}
	return nil
}

// apply stops the shards a no longer gives this term, acknowledges when
// a asks (it took shards, or it is a fence), and then, unless a is a
// fence, starts the shards it gives.
func (s *session) apply(ctx context.Context, a *assignment) {
	if later, ok := s.laterNamed(a); ok {
		s.laterTerm("the assignment", later)
		return
	}
	i := a.memberOf(s.me)
	s.named = s.named || i >= 0
	want := map[int]uint64{}
	for sh, sl := range a.Slots {
		if i >= 0 && sl.Owner == i && !sl.Releasing {
			want[sh] = sl.Epoch
		}
	}
	var stopped []*run
	for sh, r := range s.running {
		if _, ok := want[sh]; !ok {
			r.cancel()
			stopped = append(stopped, r)
			delete(s.running, sh)
		}
	}
	s.wait(stopped, Revoked)
	if a.Fence || i >= 0 && a.Members[i].ReleaseGen > s.acked {
		if s.ack(ctx, ack{Token: s.me.Token, Applied: a.Gen}) != nil {
			return
		}
		s.acked = a.Gen
	}
	s.highest, s.fence = a.Gen, a.Fence
	if a.Fence {
		return
	}
	for sh, epoch := range want {
		if _, ok := s.running[sh]; !ok {
			s.start(ctx, Shard{sh, epoch})
		}
	}
}

// laterNamed returns a term of this worker with a greater token than this
// one's that a names. A term's token is greater than those of every term
// its worker's records named when it began (termToken), so such a term
// began earlier, and only the loss of those records (deleted, restored)
// can have put this one below it; while it stays below, the assigner,
// which takes the greater token for the later term, keeps that term, and
// its shards, for a worker that no longer runs it.
func (s *session) laterNamed(a *assignment) (uint64, bool) {
	for _, m := range a.Members {
		if m.ID == s.me.ID && m.Token > s.me.Token {
			return m.Token, true
		}
	}
	return 0, false
}

// laterAcked reports whether data, this worker's acknowledgement as
// stored, names a term of it with a greater token than this one's, and if
// so ends this term (laterTerm). Only a restore can put one there: a term
// that began earlier, whose records were lost before this one began (see
// laterNamed), its acknowledgement brought back, or written again as left
// by an assigner that read it (bury). The assigner takes the greater
// token for the worker's latest term, so it would wait for that term's
// acknowledgements for as long as this one renews the liveness record
// they share, and merge this one's into it as an earlier term's: a new
// assigner's fence, which names no such term, would never be
// acknowledged, and nothing would run anywhere again.
func (s *session) laterAcked(data []byte) bool {
	k, err := decodeAck(data)
	if err != nil || k.Token <= s.me.Token {
		return false
	}
	s.laterTerm("this worker's acknowledgement", k.Token)
	return true
}

// laterTerm ends this term because where (the assignment, or this
// worker's acknowledgement) names a term of this worker with a greater
// token, later, so that the next term begins above it: a term token is
// greater than those of every term its worker's records named when it
// began (termToken), so only their loss can have put this one below it.
func (s *session) laterTerm(where string, later uint64) {
	s.w.cfg.Logger.Warn("shard: "+where+" names a later term of this worker than this one, whose token began again below it (its liveness record deleted, and the records that named that term with it, then brought back); ending this term, so that the next begins above it", "token", s.me.Token, "named", later)
	s.w.termSeen.note(later)
	s.end()
}

// errLaterTerm: this worker's acknowledgement as stored names a term of it
// with a greater token than the one writing (see laterAcked).
var errLaterTerm = errors.New("shard: this worker's acknowledgement names a later term of it; the term ends")

// start runs the shard's function.
func (s *session) start(ctx context.Context, sh Shard) {
	w := s.w
	rctx, cancel := context.WithCancel(ctx)
	r := &run{shard: sh, cancel: cancel, done: make(chan struct{})}
	s.running[sh.Index] = r
	w.mu.Lock()
	w.owned[sh.Index] = sh.Epoch
	w.mu.Unlock()
	w.emit(Event{Kind: Assigned, Shard: sh})
	go func() {
		r.err = w.cfg.Run(rctx, sh)
		r.ended = rctx.Err() == nil
		w.mu.Lock()
		delete(w.owned, sh.Index)
		w.mu.Unlock()
		close(r.done)
		if r.ended {
			w.emit(Event{Kind: Ended, Shard: sh, Err: r.err})
		}
	}()
}

// wait waits for the stopped shards' functions to return, and reports
// each that had not ended by itself as kind.
func (s *session) wait(stopped []*run, kind EventKind) {
	for _, r := range stopped {
		<-r.done
		if !r.ended {
			s.w.emit(Event{Kind: kind, Shard: r.shard, Err: r.err})
		}
	}
}

// leave ends the term: it stops every shard, waits for them, and says the
// term left, so that the assigner frees its shards at once.
func (s *session) leave(ctx context.Context) {
	kind := Lost
	if s.w.stopped.Err() != nil {
		kind = Revoked
	}
	var stopped []*run
	for _, r := range s.running {
		r.cancel()
		stopped = append(stopped, r)
	}
	s.wait(stopped, kind)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*s.w.cfg.CallTimeout)
	defer cancel()
	if err := s.ack(actx, ack{Token: s.me.Token, Applied: s.highest, Left: true}); errors.Is(err, errLaterTerm) {
		s.w.cfg.Logger.Warn("shard: not saying this worker left over the acknowledgement of a later term of it; its shards move once the next term says hello or its liveness has expired")
	} else if err != nil {
		s.w.cfg.Logger.Warn("shard: could not say this worker left; its shards move once its liveness has expired", "err", err)
	}
	close(s.left)
}

// ack writes k as this term's acknowledgement, until it is stored or ctx
// ends. A write whose outcome is unknown is read back. A write refused
// because the version it named was stale (the first of a term names none)
// is tried again at once on the version read back; other failures after a
// pause.
func (s *session) ack(ctx context.Context, k ack) error {
	cfg := &s.w.cfg
	key := ackKey(cfg.Group, cfg.Identity)
	k.Lease, k.Seen, k.After = s.lease, s.w.genSeen.get(), s.after
	data := k.encode()
	for retried := false; ; retried = true {
		v, err := s.w.put(ctx, key, data, s.ackVer)
		if err == nil {
			s.ackVer, s.last = v, k
			return nil
		}
		got, gv, rerr := s.w.get(ctx, key, "")
		switch {
		case rerr == nil && bytes.Equal(got, data):
			s.ackVer, s.last = gv, k
			return nil
		case rerr == nil && s.laterAcked(got):
			return errLaterTerm
		case rerr == nil:
			s.ackVer = gv
		case errors.Is(rerr, lease.ErrNoRecord):
			s.ackVer = ""
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if retried || !errors.Is(err, driver.ErrConflict) || rerr != nil {
			ctxtime.Sleep(ctx, cfg.RenewInterval/8)
		}
	}
}

// ackCheckEvery is how many assignment reads a worker makes per read of its
// own acknowledgement (see checkAck).
const ackCheckEvery = 4

// checkAck reads this term's acknowledgement, asking for it only if it
// changed, and if it did, makes one attempt to write the latest again over
// what it found: a restore can put an earlier one back (a hello of an
// earlier term, say) before the assigner read the latest, and the assigner
// waits for what it never saw. A failed attempt is left to the next check,
// so that the worker's reads of the assignment go on.
func (s *session) checkAck(ctx context.Context) {
	key := ackKey(s.w.cfg.Group, s.w.cfg.Identity)
	data, v, err := s.w.get(ctx, key, s.ackVer)
	if err == nil && v == s.ackVer || err != nil && !errors.Is(err, lease.ErrNoRecord) || s.laterAcked(data) {
		return
	}
	if k, err := decodeAck(data); err == nil && k.Token == s.me.Token && k.Left {
		// An assigner judged this term dead (bury) and may have given
		// its shards to others: it ends, and the next term begins.
		s.w.cfg.Logger.Error("shard: this worker's acknowledgement says its term left, as an assigner that judged it dead wrote it; ending the term", "token", s.me.Token)
		s.end()
		return
	}
	s.w.cfg.Logger.Warn("shard: this worker's acknowledgement was replaced (a restore?); writing it again", "token", s.me.Token)
	if nv, err := s.w.put(ctx, key, s.last.encode(), v); err == nil {
		s.ackVer = nv
	}
}
