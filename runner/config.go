package runner

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Config says what to run while leader and how to keep the lease. Lease and
// Task are required; every other field has a default derived from the
// lease's TTL, stated on the field. A zero duration means the default.
//
// The fields come in groups, in this order: Lease and Task, required; the
// renewal timing and the health watch, for Run and RunOnce;
// StopWhenTaskEnds, for Run only; OnceTimeout, Period, RetryFailed and
// MinHold, for RunOnce only (Run refuses a Config with a Period or a
// MinHold); the callbacks, which run on the runner's goroutines and must
// return quickly, and the logger, for both.
//
// Resolve says what a Config resolves to on a lease: what the runner will
// run with, for programs that show or check it.
type Config struct {
	// Required, for Run and RunOnce.

	// Lease is the lease to campaign for. Its Options give the identity, the
	// TTL and the per-call timeout.
	Lease lease.Lease
	// Task is the work only the leader does. Its context is cancelled when
	// leadership ends for any reason; the lease is released only after Task
	// has returned. Term(ctx) gives it the fencing token, and Progress(ctx)
	// feeds the stall watchdog.
	Task func(ctx context.Context) error

	// Renewal timing, for Run and RunOnce.

	// RenewDeadline is how long the leader keeps acting as leader without
	// a newer successful renewal, counted from when it sent its last
	// successful acquire or renew, or, for a renewal sent late, from when
	// it was due (the previous one's count plus RenewInterval). It must be
	// less than the TTL, and RenewInterval + RenewDeadline must not exceed
	// it: a follower's count of an unchanged version can start up to one
	// renew interval before the holder's last write (a restore can hide
	// that write), and the holder must have stepped down before the count
	// ends. Default: DefaultRenewDeadline, 9/16 of the TTL.
	RenewDeadline time.Duration
	// RenewInterval is how long after its last successful renewal returned the
	// leader sends the next. Failed renewals are retried with exponential
	// backoff until RenewDeadline. A follower of a lease whose renewals show
	// (lease.RenewalsShow) reads the holder's interval in the record, and
	// reads the lease just after each renewal, and FollowerReads-1 times
	// between (see the package doc). Default: the lease's
	// Options.RenewInterval (lease.DefaultRenewInterval, 3/8 of the TTL),
	// which the lease writes into the record; it must not be shorter.
	RenewInterval time.Duration
	// CampaignInterval is how often a follower tries to acquire the lease,
	// plus up to Jitter of itself at random, while it does not know when
	// the holder renews: on a store whose renewals do not show (see
	// lease.RenewalsShow), before it has learned the holder's schedule,
	// and while the holder's renewals do not come. A follower also tries
	// at the moment the holder's record would expire. Default: DefaultCampaignInterval, 1/3
	// of the TTL.
	CampaignInterval time.Duration
	// Jitter is the fraction of CampaignInterval added at random to each
	// wait, so that followers spread out. Between 0 and 1. Default: DefaultJitter, 0.2.
	Jitter float64
	// Rand is where the runner draws every random number it uses: the
	// Jitter of its waits, a follower's own delay after the holder's
	// renewals (see the package doc), and the spread of its renewal
	// retries' backoff. The runner's goroutines draw from it at once, and
	// so do other runners given the same source, so it must be safe for
	// concurrent use (LockedSource makes any source so). A simulation
	// gives a source seeded from its schedule's seed, so that the seed
	// replays the run (see sim's package doc). Default: math/rand/v2's
	// global source, seeded at random by the runtime.
	Rand rand.Source
	// FollowerReads is how many times a follower of a lease whose
	// renewals show (lease.RenewalsShow) reads it per renewal of its
	// holder, once it has learned when the holder renews: just after each
	// renewal, and FollowerReads-1 times between, evenly, so that its
	// reads follow each other within the holder's renew interval and
	// count towards expiry (see lease.Lease.Acquire). A release is seen at
	// the next read, on average half of RenewInterval / FollowerReads
	// after it: more reads make a handover quicker and cost more
	// (Resolved.FollowerReadInterval). At least 2. Default: what the
	// lease's store asks for (lease.FollowerReads: 6 on Azure, whose TTL
	// cannot be shortened below 15s to make handovers quicker), else
	// DefaultFollowerReads, 2.
	FollowerReads int

	// Health watch and step-down, for Run and RunOnce.

	// HealthCheck, if set, is called every HealthInterval while leading.
	// After HealthThreshold failures in a row the leader steps down,
	// releases the lease, and waits CoolDown before campaigning again, so
	// that a sick instance does not take the lease straight back.
	HealthCheck func(ctx context.Context) error
	// HealthInterval is the time between health checks. Default:
	// RenewInterval.
	HealthInterval time.Duration
	// HealthTimeout bounds one health check; a check that has not answered
	// by then has failed. Default: half of HealthInterval.
	HealthTimeout time.Duration
	// HealthThreshold is how many failed checks in a row make the leader
	// unhealthy. Default: DefaultHealthThreshold, 3.
	HealthThreshold int
	// StallTimeout, if set, makes the leader unhealthy when its task has not
	// called Progress for that long (counted from election, then from each
	// call). Default: off.
	StallTimeout time.Duration
	// CoolDown is how long a leader that stepped down as unhealthy waits
	// before campaigning again. Default: the TTL.
	CoolDown time.Duration
	// ReleaseTimeout bounds the release after leadership ends, which is
	// never sent later than a TTL after the term's latest write (the lease
	// may be another's by then: it lapses instead). Default: 3 times the
	// lease's CallTimeout (a write, a read-back and a retry).
	ReleaseTimeout time.Duration
	// DrainTimeout, if set, keeps the lease renewed after a voluntary
	// step-down, while the task finishes: when the context given to Run or
	// RunOnce ends (Stopped) or the leader becomes Unhealthy, the task's
	// context is cancelled at once as always, but the renew loop goes on
	// until the task has returned, for at most DrainTimeout, and the lease
	// is released after that. It is for tasks that need time to stop and
	// must not lose the lease meanwhile, such as a child process given a
	// grace period. Draining never weakens the deadlines: a renewal that
	// finds the lease lost, or no successful renewal within RenewDeadline,
	// still ends the renewals at once (RenewalsDone(ctx) is closed and
	// Expiry(ctx) says until when the task may still act), and those
	// step-downs are never drained. Default: 0, the renewals stop as soon
	// as the task's context is cancelled.
	DrainTimeout time.Duration

	// For Run only.

	// StopWhenTaskEnds makes Run return, with Task's error, once Task has
	// returned by itself and the lease has been released. By default Run
	// campaigns again, as the MSDN sample does, after a jittered
	// CampaignInterval (so that followers get their turn), doubled for each
	// time in a row that Task failed quickly, up to 16 CampaignIntervals:
	// a task that fails at once is not restarted in a tight loop.
	StopWhenTaskEnds bool
	// Prefer and Candidates, together, make leadership go to the contender
	// whose Prefer orders last (ComparePrefer: natural order, so "1.10.0"
	// after "1.9.3"): the build's version, newest first, so that a rolling
	// deploy moves leadership once, to the first new instance; or a rank
	// the operator gives each place ("2" in the zone to lead from, "1"
	// elsewhere). A leader writes its Prefer into its record
	// (AnnotationPrefer). A follower whose Prefer orders after the
	// leader's (a leader without one, or of an earlier version, reads no
	// Candidates: none announces to it) announces itself by holding
	// Candidates, a lease of its own at another key (New refuses the Lease
	// itself, and Run, at start, a lease that reads the Lease's record),
	// opened with the same Identity, with a runner's renewals, and reads
	// the lease every TTL/20 meanwhile; it withdraws when the leader no
	// longer orders before it, and when it fails to reach the lease (a
	// candidate that cannot take it is not handed it). A follower that
	// does not announce itself writes nothing more than before. The
	// leader reads Candidates every RenewInterval (one read more per
	// renewal), and once it has seen a better candidate hold it, renewed
	// between two reads, it hands the lease to that candidate: its task's
	// context ends (HandedOff), the renewals go on while the task returns
	// (DrainTimeout, as for Stopped), and then lease.Handoffer's ReleaseTo
	// names the candidate, which takes the lease at once, while every
	// other contender sees it held (and takes it over a TTL later, as
	// after a crash, if the candidate never comes). Lease must be a
	// lease.Handoffer (every leasehold backend's lease but an Azure
	// InfiniteLease, and a quorum of them). Default: no preference.
	Prefer     string
	Candidates lease.Lease
	// announce is the Prefer a candidacy's runner (on Candidates) writes
	// into its record, though it has no Prefer of its own: every runner
	// writes its Prefer, or this, or none, whatever the record it took
	// over said.
	announce string

	// For RunOnce only: Run refuses a Config with a Period or a MinHold.

	// OnceTimeout bounds RunOnce's campaign, from its call to its
	// election, whether or not the store answers: an instance not elected
	// by then reports NotElected (the lease is held) or Unreachable.
	// Default: the TTL plus three CampaignIntervals, time enough to see a
	// live holder renew and a dead holder's lease lapse.
	OnceTimeout time.Duration
	// Period, if set, makes RunOnce run the task at most once for this
	// period key, whichever instance runs it and however late it fires: the
	// name of the tick a scheduled job was started for (the trigger's
	// scheduled time, in RFC 3339, such as EventBridge's "time"; or
	// PeriodKey's). The lease record, and nothing else, remembers the
	// latest period started: RunOnce writes the key, under the term it was
	// elected with, before the task starts, and an instance whose key is
	// at or before the record's returns AlreadyRan without running the
	// task (a restore of the record to a version from before the key was
	// written, or its delete, loses it: see the package doc's "What it
	// assumes"). That write is
	// a renewal of the term, bound by its renew deadline: when Acquire
	// answered so late that the deadline had passed, the key is not
	// written, the task does not run, and RunOnce returns Unreachable, the
	// lease given back as it was. Keys compare as
	// times when both are RFC 3339 times, as numbers when both are
	// decimal integers, and byte by byte otherwise; lease.ValidatePeriod
	// says which keys can be stored. Run refuses a Config with a Period.
	Period string
	// RetryFailed changes what a period whose task did not succeed counts
	// as. By default a period has run once its task started, whatever
	// became of it (at most once). With RetryFailed, only a task that
	// returned nil by itself marks its period done: before its context
	// ended, or, returning later, having called Completed (its work had
	// finished before it was told to stop); after a task that failed, was
	// stopped, or whose instance crashed (its lease then lapses after the
	// TTL), a later trigger of the same period runs it again (at least
	// once, if triggers keep coming). Either way a later period runs.
	RetryFailed bool
	// MinHold, if set, keeps other instances out of the lease for at least
	// this long after RunOnce's task started, even when it ends sooner:
	// for jobs with no period key, whose duplicates fire within MinHold of
	// each other. Once the task has returned, RunOnce writes at once that
	// the lease is held after a run (Schedule.Hold; with the period
	// done, if it is), then keeps renewing the lease, with the health
	// watch off, and does not return until MinHold has passed since the
	// task started (or ctx ends); then it releases. A duplicate fired
	// meanwhile sees the record renewed and returns NotElected within a
	// renew interval; one without a Period whose reads missed every
	// renewal and that wins the lease released at the hold's end (or as
	// it ends), before the record it first found held could have lapsed
	// by its own count, gives it back and returns NotElected too (one with
	// a Period is told by it). A duplicate cut off from the store for
	// longer than a TTL cannot tell a release from a lapse and may run
	// once the hold is over. An instance that dies during its hold lets
	// the lease lapse after the TTL (a duplicate that takes it over then
	// runs). A write of the hold (or of the done mark) that
	// fails is retried until it lands, or until a TTL after the term's
	// latest write known to have landed, when the lease may be another's;
	// a write whose answer did not come by then may have landed, and is
	// resolved by reading the record: if it landed, the hold goes on from
	// it. Only an outage that long cuts the hold short (rule 13). Run
	// refuses a Config with a MinHold.
	MinHold time.Duration

	// Callbacks and logs, for Run and RunOnce.

	// OnElected, if set, is called when this contender becomes leader,
	// before Task starts.
	OnElected func(lease.Term)
	// OnDemoted, if set, is called when leadership has ended, after Task
	// has returned and the lease was released (or release was not possible).
	OnDemoted func(Demotion)
	// Annotate, if set, is called with each term this contender wins whose
	// renew deadline had not passed when Acquire returned, as Acquire
	// returned it, before OnElected and Task; a term whose deadline has
	// passed once Annotate and OnElected have returned does not start its
	// task, and writes the annotations it took over, not Annotate's. Its
	// Annotations are
	// those of the record it took over, as the previous holder left them.
	// It returns the annotations that the term's renewals and its release
	// write (lease.Term.Annotate), so that a layer above the runner can
	// read what the previous holder said of itself and say the same of
	// this term. When they differ from the record's, the first renewal is
	// made at once, so that the record says so from then on (one write
	// more per term). It must keep the keys of other namespaces as they
	// are, and return quickly.
	Annotate func(won lease.Term) lease.Annotations
	// OnLeaderChanged, if set, is called with the identity of the leader
	// whenever the one this contender observes changes, including itself.
	OnLeaderChanged func(identity string)
	// OnRenew, if set, is called after every renewal attempt (each call
	// to the lease's Renew, retries included) with how long it took and
	// its error, nil when it succeeded: the hook for renewal latency and
	// failure metrics.
	OnRenew func(took time.Duration, err error)

	// Logger receives the runner's structured logs. Default: slog.Default(),
	// with the contender's identity attached. Its writes may block (a
	// stderr pipe nobody reads): a step-down ends the term first and logs
	// after, so a blocked write delays only the log.
	Logger *slog.Logger
}

// globalSource is Config.Rand's default: math/rand/v2's global source.
type globalSource struct{}

func (globalSource) Uint64() uint64 { return rand.Uint64() }

// LockedSource returns src made safe for concurrent use, as Config.Rand
// must be: each draw takes a lock of its own. For a seeded source, such as
// rand.NewPCG(seed, stream), that several goroutines draw from.
func LockedSource(src rand.Source) rand.Source { return &lockedSource{src: src} }

type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}

// DefaultRenewInterval is Config.RenewInterval's default for a TTL:
// lease.DefaultRenewInterval, 3/8 of it.
func DefaultRenewInterval(ttl time.Duration) time.Duration { return lease.DefaultRenewInterval(ttl) }

// readStep is the longest a follower leaves between two reads of a record
// whose holder renews every gap, when it reads reads times per renewal:
// gap×2/(2×reads-1), halfway between gap/reads and gap/(reads-1), so that
// reads spread evenly over one renewal, give or take a delay's change and
// the reads' latency, come reads times per renewal, each within gap of the
// one before (2/3 of it for 2 reads).
func readStep(gap time.Duration, reads int) time.Duration {
	return gap * 2 / time.Duration(2*reads-1)
}

// DefaultRenewDeadline is Config.RenewDeadline's default for a TTL: 9/16 of
// it, so that with the default RenewInterval (3/8) the two leave 1/16 of
// the TTL for clock-rate drift and latency, even when a restore hid the
// holder's latest write, and 3/16 for retrying a renewal.
func DefaultRenewDeadline(ttl time.Duration) time.Duration { return ttl * 9 / 16 }

// DefaultCampaignInterval is Config.CampaignInterval's default for a TTL: a
// third of it.
func DefaultCampaignInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// Defaults that do not depend on the TTL.
const (
	// DefaultJitter is Config.Jitter's default.
	DefaultJitter = 0.2
	// DefaultHealthThreshold is Config.HealthThreshold's default.
	DefaultHealthThreshold = 3
	// DefaultFollowerReads is Config.FollowerReads's default on a lease
	// whose store does not ask for more (lease.FollowerReads): one read
	// just after each renewal and one between.
	DefaultFollowerReads = 2
)

func invalid(field string, value any, reason string) error {
	return &lease.OptionError{Pkg: "runner", Field: field, Value: value, Reason: reason}
}

// Resolved is a Config as the runner runs it: every zero field set to its
// default, and the options of the lease it was resolved for. Config.Resolve
// makes it; New runs on nothing else, so a program that shows or checks
// the runner's timing (leasehold's run, check and help) reads it here
// rather than computing it again.
type Resolved struct {
	Config
	// LeaseOptions are the lease's options, their defaults filled in
	// (lease.Options.WithDefaults): the TTL and CallTimeout the runner's
	// defaults are derived from.
	LeaseOptions lease.Options
}

// Resolve validates c's settings for a lease with options opts
// (c.Lease.Options(), or the options a lease is about to be opened with)
// and returns c with every default filled in, as stated on each field. An
// invalid setting is reported as an error wrapping lease.ErrInvalid that
// names the field and its value; the Resolved returned with it still has
// every default filled in, so that a caller can tell a setting it gave
// from one derived. Lease, if set, is asked only for FollowerReads'
// default (lease.FollowerReads); a program resolving for a lease not yet
// opened sets FollowerReads to its store's (driver.Store.FollowerReads).
// New requires Lease and Task; Resolve does not.
func (c Config) Resolve(opts lease.Options) (Resolved, error) {
	opts = opts.WithDefaults()
	ttl := opts.TTL
	c.RenewDeadline = cmp.Or(c.RenewDeadline, DefaultRenewDeadline(ttl))
	c.RenewInterval = cmp.Or(c.RenewInterval, opts.RenewInterval)
	c.CampaignInterval = cmp.Or(c.CampaignInterval, DefaultCampaignInterval(ttl))
	c.HealthInterval = cmp.Or(c.HealthInterval, c.RenewInterval)
	c.HealthTimeout = cmp.Or(c.HealthTimeout, c.HealthInterval/2)
	c.CoolDown = cmp.Or(c.CoolDown, ttl)
	c.OnceTimeout = cmp.Or(c.OnceTimeout, ttl+3*c.CampaignInterval)
	c.ReleaseTimeout = cmp.Or(c.ReleaseTimeout, 3*opts.CallTimeout)
	c.Jitter = cmp.Or(c.Jitter, DefaultJitter)
	c.HealthThreshold = cmp.Or(c.HealthThreshold, DefaultHealthThreshold)
	if c.FollowerReads == 0 && c.Lease != nil {
		c.FollowerReads = lease.FollowerReads(c.Lease)
	}
	c.FollowerReads = cmp.Or(c.FollowerReads, DefaultFollowerReads)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Rand == nil {
		c.Rand = globalSource{}
	}

	res := Resolved{Config: c, LeaseOptions: opts}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{
		{"RenewDeadline", c.RenewDeadline}, {"RenewInterval", c.RenewInterval},
		{"CampaignInterval", c.CampaignInterval}, {"HealthInterval", c.HealthInterval},
		{"HealthTimeout", c.HealthTimeout}, {"StallTimeout", c.StallTimeout},
		{"CoolDown", c.CoolDown}, {"ReleaseTimeout", c.ReleaseTimeout},
		{"DrainTimeout", c.DrainTimeout}, {"OnceTimeout", c.OnceTimeout},
		{"MinHold", c.MinHold},
	} {
		if d.value < 0 {
			return res, invalid(d.name, d.value, "must not be negative")
		}
	}
	switch {
	case c.RenewDeadline >= ttl:
		return res, invalid("RenewDeadline", c.RenewDeadline, "must be less than TTL ("+ttl.String()+")")
	case c.RenewInterval >= c.RenewDeadline:
		return res, invalid("RenewInterval", c.RenewInterval, "must be less than RenewDeadline ("+c.RenewDeadline.String()+")")
	case c.RenewInterval+c.RenewDeadline > ttl:
		return res, invalid("RenewInterval", c.RenewInterval, "plus RenewDeadline ("+c.RenewDeadline.String()+") must not exceed TTL ("+ttl.String()+")")
	case c.RenewInterval < opts.RenewInterval:
		return res, invalid("RenewInterval", c.RenewInterval, "must not be shorter than the lease's Options.RenewInterval ("+opts.RenewInterval.String()+"), which its records tell followers")
	case opts.CallTimeout >= c.RenewDeadline:
		return res, invalid("CallTimeout", opts.CallTimeout, "of the lease must be less than RenewDeadline ("+c.RenewDeadline.String()+")")
	case c.HealthTimeout > c.HealthInterval:
		return res, invalid("HealthTimeout", c.HealthTimeout, "must not exceed HealthInterval ("+c.HealthInterval.String()+")")
	case c.Jitter < 0 || c.Jitter > 1:
		return res, invalid("Jitter", c.Jitter, "must be between 0 and 1")
	case c.HealthThreshold < 0:
		return res, invalid("HealthThreshold", c.HealthThreshold, "must not be negative")
	case c.FollowerReads < 2:
		return res, invalid("FollowerReads", c.FollowerReads, "must be at least 2, so that a follower's reads follow each other within the holder's renew interval")
	case c.MinHold%time.Millisecond != 0:
		return res, invalid("MinHold", c.MinHold, "must be a whole number of milliseconds")
	}
	if c.Period != "" {
		var oe *lease.OptionError
		if err := lease.ValidatePeriod(c.Period); errors.As(err, &oe) {
			return res, invalid("Period", c.Period, oe.Reason)
		}
	}
	return res, nil
}

// Margin is how long a leader that stopped renewing has between its
// step-down (RenewDeadline after its last successful renewal was sent)
// and Expiry (the TTL less a RenewInterval after it), the earliest its
// lease may be someone else's: TTL - RenewInterval - RenewDeadline, the
// time a task that cannot stop at once has to stop.
func (r Resolved) Margin() time.Duration {
	return r.LeaseOptions.TTL - r.RenewInterval - r.RenewDeadline
}

// FollowerReadInterval is the mean time between a follower's reads of a
// lease whose holder is alive: where every renewal of the holder changes
// the record's version (renewalsShow, as lease.RenewalsShow reports: every
// compare-and-swap store, and Azure), once it has learned the holder's
// schedule, RenewInterval / FollowerReads; elsewhere,
// CampaignInterval plus its mean jitter (half of Jitter of it). It is what
// a follower costs in requests.
func (r Resolved) FollowerReadInterval(renewalsShow bool) time.Duration {
	if !renewalsShow {
		return r.CampaignInterval + time.Duration(r.Jitter/2*float64(r.CampaignInterval))
	}
	return r.RenewInterval / time.Duration(r.FollowerReads)
}
