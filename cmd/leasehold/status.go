package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/leasehold/leasehold/internal/watch"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

// statusOptions are the flags of leasehold status.
type statusOptions struct {
	reportOptions
	watch   time.Duration
	shards  int
	holders int
	// holdersSet is whether --holders was given (cmdStatus).
	holdersSet bool
}

// group is the group the flags ask about: --shards N or --holders N.
func (o *statusOptions) group() groupSpec {
	if o.holdersSet {
		return groupSpec{n: o.holders, holders: true}
	}
	return groupSpec{n: o.shards}
}

func statusFlags(o *statusOptions) *flagSet {
	f := newFlagSet("status")
	f.group("Lease")
	o.defineLease(f)
	f.Int(&o.shards, "shards", 0, "--lease is the prefix of a group of `N` shards (leasehold run --shards):\nshow its members, their shards and epochs, and whether it is balanced")
	f.Int(&o.holders, "holders", 0, "--lease is the prefix of a group of `N` slots (leasehold run --holders):\nshow its members, the slots they hold and their epochs, and who waits")
	o.defineOutput(f)
	f.Duration(&o.watch, "watch", 0, "watch the lease this long, reading it twice per renew interval of its holder,\nto see whether its holder renews it (with --shards: read it twice, this long\napart, to see whether each member renews its liveness; 0: read it once)")
	f.group("Logs")
	o.defineLogs(f)
	return f
}

// statusReport is what leasehold status prints; -o json prints it as JSON
// with these keys.
type statusReport struct {
	// Lease is the lease's URL.
	Lease string `json:"lease"`
	// State is "none" (never acquired), "released" (free: the next
	// contender takes it at once), "held", or "lapsed" (held, but seen
	// unchanged for at least its TTL: the holder has stopped renewing and
	// any contender that has watched it as long may take it over).
	State string `json:"state"`
	// Holder, Token, TTL and Released are the record's, as last read.
	// UnknownHolder is set when the store holds the lease for someone no
	// leasehold record names (an Azure lease another tool or a person
	// took, or a contender between its acquire and its write): Holder is
	// then empty, Token 0, and TTL the longest the lease may still last
	// (none for an infinite Azure lease).
	Holder        string `json:"holder,omitempty"`
	UnknownHolder bool   `json:"unknown_holder,omitempty"`
	Token         uint64 `json:"token"`
	TTL           string `json:"ttl,omitempty"`
	TTLMs         int64  `json:"ttl_ms,omitempty"`
	Released      bool   `json:"released"`
	// Period and PeriodDone are the latest scheduled period the record
	// names (leasehold run --once --period or --every), if any.
	Period     string `json:"period,omitempty"`
	PeriodDone bool   `json:"period_done,omitempty"`
	// Prefer is the holder's --prefer, if any; Successor the instance it
	// handed the lease to (leasehold handoff, or a preferred candidate),
	// which takes it at once, while every other waits for it as held.
	Prefer    string `json:"prefer,omitempty"`
	Successor string `json:"successor,omitempty"`
	// Version is the store's version of the record (an ETag); it changes
	// with every write, renewals included.
	Version string `json:"version,omitempty"`
	// Watch is how long the record was to be watched (--watch; for break,
	// the holder's TTL): a watch ends early at the first change it sees.
	Watch string `json:"watch"`
	// Changed reports whether the record changed during the watch: the
	// holder renewed it (or the lease changed hands).
	Changed bool `json:"changed"`
	// UnchangedFor is how long this command saw the record unchanged:
	// the whole watch if it did not change, 0 if it did or was read once.
	UnchangedFor   string `json:"unchanged_for"`
	UnchangedForMs int64  `json:"unchanged_for_ms"`
	// Meaning says the same in a sentence.
	Meaning string `json:"meaning"`
	// Members are a quorum lease's members (quorum: URLs), as the last
	// read found each.
	Members []memberReport `json:"members,omitempty"`
}

// memberReport is one member of a quorum lease as status read it.
type memberReport struct {
	// Member names it: "member 2 (s3://jobs-euw1/nightly)".
	Member string `json:"member"`
	// State is "none" (never written), "released", "held", "foreign"
	// (the member's object is not a lease record: Error says what was
	// found), or "unreachable" (the read failed: Error says why).
	State  string `json:"state"`
	Holder string `json:"holder,omitempty"`
	// Token is the member's own counter; QuorumToken the quorum's token
	// its record carries.
	Token       uint64 `json:"token,omitempty"`
	QuorumToken uint64 `json:"quorum_token,omitempty"`
	Error       string `json:"error,omitempty"`
}

// membersOf reports the members of a quorum lease, nil for any other.
func membersOf(l lease.Lease) []memberReport {
	q, ok := l.(interface{ Members() []quorumlease.Member })
	if !ok {
		return nil
	}
	var out []memberReport
	for _, m := range q.Members() {
		r := memberReport{Member: m.Name, Holder: m.Record.Holder, Token: m.Record.Token, QuorumToken: m.QuorumToken}
		switch {
		case errors.Is(m.Err, lease.ErrNoRecord):
			r.State = "none"
		case errors.Is(m.Err, lease.ErrCorrupt):
			// Read, and not a lease record (someone else's object, or a
			// torn write): not a network fault to chase (red team 17).
			r.State, r.Error = "foreign", m.Err.Error()
		case m.Err != nil:
			r.State, r.Error = "unreachable", m.Err.Error()
		case m.Record.Held():
			r.State = "held"
		default:
			r.State = "released"
		}
		out = append(out, r)
	}
	return out
}

// cmdStatus is leasehold status.
func cmdStatus(ctx context.Context, args []string, env *environment) error {
	o := &statusOptions{}
	r := reporter{"status", statusFlags(o), printStatusHelp, &o.reportOptions}
	log, err := r.parse(args, env)
	if err != nil {
		return err
	}
	o.holdersSet = o.holders != 0 || r.flags.set("holders")
	shards := o.shards != 0 || r.flags.set("shards")
	switch {
	case o.holdersSet && shards:
		return usageError("status", fmt.Errorf("--holders (%d) and --shards (%d) exclude each other", o.holders, o.shards))
	case o.holdersSet || shards:
		if err := checkShards(o.group().flag(), o.group().n); err != nil {
			return usageError("status", err)
		}
		return cmdGroupStatus(ctx, o, log, env)
	}
	l, err := openLease(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	if err != nil {
		return err
	}
	rep, _, err := watchLease(ctx, l, &o.commonOptions, log, func(lease.Record) time.Duration { return o.watch })
	if err != nil {
		return err
	}
	rep.Members = membersOf(l)
	return o.print(env.stdout, rep, func() { printStatus(env.stdout, rep) })
}

// watchLease reads the lease and, for watchFor(first read) after that read
// returned (0: not at all), watches it (watch.Lease): reads it again at a
// follower's pace until the watch is over or a read returns another
// version. It says what it saw, with the Lease's own verdict on a
// compare-and-swap store (lease.Watcher): the count Acquire takes a lease
// over by, which a failed or late read or a restore restarts, so that break
// frees a lease only when a contender could take it. It is the one
// judgement of whether a holder is alive, for status and break, and the
// simulation's operator. It returns the last record read.
func watchLease(ctx context.Context, l lease.Lease, o *commonOptions, log *slog.Logger, watchFor func(lease.Record) time.Duration) (statusReport, lease.Record, error) {
	read := func(ctx context.Context) (lease.Record, error) {
		return readLease(ctx, l, o.lease, o.startTimeout, log)
	}
	w, err := watch.Lease(ctx, l, read, watchFor)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return statusReport{}, lease.Record{}, interrupted(ctx, "while watching the lease")
	}
	if err != nil {
		return statusReport{}, lease.Record{}, err
	}
	return describe(o.lease, w), w.Last, nil
}

// describe reports on a lease as the watch w saw it.
func describe(leaseURL string, w watch.Watch) statusReport {
	first, last, unchanged := w.First, w.Last, w.Unchanged()
	sched := runner.ScheduleOf(last.Annotations)
	rep := statusReport{
		PeriodDone: sched.Done,
		Lease:      lease.RedactURL(leaseURL),
		Holder:     last.Holder,
		Token:      last.Token,
		Released:   last.Released,
		Period:     sched.Period,
		Prefer:     last.Annotations.Get(runner.AnnotationPrefer),
		Successor:  last.Successor(),
		Version:    last.Version,
		Watch:      w.For.String(),
		Changed:    w.Changed(),
	}
	if last.TTL > 0 {
		rep.TTL, rep.TTLMs = last.TTL.String(), last.TTL.Milliseconds()
	}
	rep.UnchangedFor, rep.UnchangedForMs = unchanged.String(), unchanged.Milliseconds()
	switch {
	case watch.UnknownHolder(last):
		rep.State, rep.UnknownHolder = "held", true
		rep.Meaning = "held by an unknown holder: the store's own lease on it names no leasehold instance (another tool or a person took it, or a contender has not yet written its name); " + remaining(last)
	case last.Holder == "" && last.Token == 0:
		rep.State = "none"
		rep.Meaning = "never acquired: the first contender takes it at once"
	case last.Released && w.Native:
		rep.State = "released"
		rep.Meaning = fmt.Sprintf("free (released by %s, or its lease lapsed): the next contender takes it at once, with token %d", last.Holder, last.Token+1)
	case last.Released:
		rep.State = "released"
		rep.Meaning = fmt.Sprintf("released by %s: the next contender takes it at once, with token %d", last.Holder, last.Token+1)
	case rep.Changed && last.Token < first.Token:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("went back during the watch (token %d to %d: restored from a backup?), now names %s: the holder of token %d may still be alive", first.Token, last.Token, last.Holder, first.Token)
	case rep.Successor != "" && w.Lapsed():
		rep.State = "lapsed"
		rep.Meaning = fmt.Sprintf("handed by %s to %s, which has not taken it in its TTL (%v), watched in reads that followed each other within its renew interval: a contender that watched it as long may take it over", last.Holder, rep.Successor, last.TTL)
	case rep.Successor != "":
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("handed by %s to %s, which takes it at once with token %d; every other instance waits for it as held (a TTL, %v, if %s does not come)", last.Holder, rep.Successor, last.Token+1, last.TTL, rep.Successor)
	case rep.Changed && first.Token != last.Token:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("changed hands during the watch (token %d to %d): now held by %s", first.Token, last.Token, last.Holder)
	case rep.Changed:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("held by %s, who renewed it during the watch: the leader is alive", last.Holder)
	case w.Native:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("held by %s: the store's own lease on it is live (it judges expiry itself)", last.Holder)
	case w.For == 0:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("held by %s (read once: use --watch %v to see whether it is renewed)", last.Holder, last.TTL)
	case w.Lapsed():
		rep.State = "lapsed"
		rep.Meaning = fmt.Sprintf("held by %s, but not renewed for at least its TTL (%v), in reads that followed each other within its renew interval: the holder is gone, and a contender that watched it as long may take it over", last.Holder, last.TTL)
	case unchanged >= last.TTL:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("held by %s, unchanged during the %v watch, but not in an unbroken run of reads for its TTL (%v): a read failed, or came later than its renew interval after the one before, and a renewal could have been hidden in the gap (by a restore); watch again to tell", last.Holder, w.For, last.TTL)
	default:
		rep.State = "held"
		rep.Meaning = fmt.Sprintf("held by %s, not renewed during the %v watch, which is shorter than its renew interval may be: watch for the TTL (%v) to tell", last.Holder, w.For, last.TTL)
	}
	return rep
}

// remaining says how long an unknown holder's lease may last.
func remaining(rec lease.Record) string {
	if rec.TTL == 0 {
		return "it is infinite and never lapses"
	}
	return fmt.Sprintf("it lapses at most %v after its holder's last renewal, unless renewed (the store does not say how much is left)", rec.TTL)
}

func printStatus(w io.Writer, r statusReport) {
	row := func(k, v string) { fmt.Fprintf(w, "%-14s %s\n", k, v) }
	row("lease", r.Lease)
	row("state", r.State)
	switch {
	case r.UnknownHolder:
		row("holder", "unknown (no leasehold record names it)")
		ttl := "infinite"
		if r.TTL != "" {
			ttl = "at most " + r.TTL + " left"
		}
		row("ttl", ttl)
		row("version", r.Version)
	case r.State != "none":
		row("holder", r.Holder)
		row("token", fmt.Sprint(r.Token))
		row("ttl", r.TTL)
		row("released", fmt.Sprint(r.Released))
		if r.Period != "" {
			state := "started"
			if r.PeriodDone {
				state = "done"
			}
			row("period", r.Period+" ("+state+")")
		}
		if r.Prefer != "" {
			row("prefer", r.Prefer)
		}
		if r.Successor != "" {
			row("successor", r.Successor)
		}
		row("version", r.Version)
	}
	if r.Watch != "0s" {
		row("changed", fmt.Sprintf("%t (watched %s)", r.Changed, r.Watch))
		row("unchanged for", r.UnchangedFor)
	}
	row("meaning", strings.TrimSpace(r.Meaning))
	for _, m := range r.Members {
		var what string
		switch m.State {
		case "held":
			what = fmt.Sprintf("held by %s (its token %d, quorum token %d)", m.Holder, m.Token, m.QuorumToken)
		case "released":
			what = fmt.Sprintf("released by %s (its token %d, quorum token %d)", m.Holder, m.Token, m.QuorumToken)
		case "none":
			what = "never written"
		case "foreign":
			what = "foreign: " + m.Error
		default:
			what = "unreachable: " + m.Error
		}
		row(m.Member, what)
	}
}
