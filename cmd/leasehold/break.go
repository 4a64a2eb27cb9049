package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/leasehold/leasehold/internal/watch"
	"github.com/leasehold/leasehold/lease"
)

// breakOptions are the flags of leasehold break.
type breakOptions struct {
	reportOptions
	force bool
}

func breakFlags(o *breakOptions) *flagSet {
	f := newFlagSet("break")
	f.group("Lease")
	o.defineLease(f)
	f.group("Break")
	f.Bool(&o.force, "force", "break the lease although its holder is alive: it loses the lease at its next\nrenewal and stops")
	o.defineOutput(f)
	f.group("Logs")
	o.defineLogs(f)
	return f
}

// breakReport is what leasehold break prints: the lease as it was found
// (the keys of leasehold status -o json), then what was done.
type breakReport struct {
	statusReport
	// Broken reports whether this command broke the lease.
	Broken bool `json:"broken"`
	// NextToken is the token the next contender's acquisition gets.
	NextToken uint64 `json:"next_token,omitempty"`
	// Verdict says what was done and why, and what follows.
	Verdict string `json:"verdict"`
}

// breakAttempts bounds the tries of --force against a holder that renews
// between the read and the break.
const breakAttempts = 3

// cmdBreak is leasehold break: it judges, as status does, whether the
// lease's holder is alive, and breaks the lease of a holder that is gone,
// or with --force of any holder.
func cmdBreak(ctx context.Context, args []string, env *environment) error {
	o := &breakOptions{}
	l, log, err := reporter{"break", breakFlags(o), printBreakHelp, &o.reportOptions}.open(ctx, args, env)
	if err != nil {
		return err
	}
	b, ok := l.(lease.Breaker)
	if !ok {
		return exitf(exitConfig, "break: the backend of %s cannot break leases", lease.RedactURL(o.lease))
	}
	// On a compare-and-swap store, a holder is gone when the Lease's own
	// count says a contender would take its record over (watchLease); --force
	// needs no verdict. A store that judges expiry itself says at once
	// whether its lease is live.
	watchFor := watch.ToBreak(l)
	if o.force {
		watchFor = func(lease.Record) time.Duration { return 0 }
	}
	rep, rec, err := watchLease(ctx, l, &o.commonOptions, log, watchFor)
	if err != nil {
		return err
	}
	out := breakReport{statusReport: rep}
	var refusal error
	switch {
	case rep.State == "none" || rep.State == "released":
		out.Verdict = "nothing to break: " + rep.Meaning
	case rep.UnknownHolder && !o.force:
		out.Verdict = fmt.Sprintf("not broken: the store's own lease on it is live, held by a holder no leasehold record names (another tool or a person, or a contender that has not yet written its name); %s. "+
			"--force breaks that lease: the next contender then takes the lease at once", remaining(rec))
		refusal = exitf(exitRefused, "break: refused: the lease is held by an unknown holder (no leasehold record names it); --force breaks it anyway")
	case rep.State == "held" && !o.force:
		out.Verdict = "not broken: " + liveHolder(rep, l.Judge())
		refusal = exitf(exitRefused, "break: refused: the holder %s is alive (--force breaks it anyway)", rep.Holder)
		if !rep.Changed && l.Judge() == lease.JudgedByContender {
			refusal = exitf(exitRefused, "break: refused: the holder %s may be alive: its record was not seen unchanged for its TTL in an unbroken run of reads (run break again; --force breaks it anyway)", rep.Holder)
		}
	default: // lapsed, or held and --force
		out, refusal, err = breakLease(ctx, b, l, o, log, rep, rec)
		if err != nil {
			return err
		}
	}
	if err := o.print(env.stdout, out, func() { printBreak(env.stdout, out) }); err != nil {
		return err
	}
	return refusal
}

// breakLease breaks the lease that rec, as rep describes it, shows. With
// --force it reads again and retries when the holder renewed in between;
// without, a renewal means the holder is alive after all, and it refuses.
// It returns the report, and refusal (exit 75) when it did not break a
// live holder's lease; err is a failure, with no report.
func breakLease(ctx context.Context, b lease.Breaker, l lease.Lease, o *breakOptions, log *slog.Logger, rep statusReport, rec lease.Record) (out breakReport, refusal, err error) {
	for attempt := 1; ; attempt++ {
		got, err := b.Break(ctx, rec)
		var held *lease.HeldError
		switch {
		case err == nil && (got.Holder == rec.Holder && got.Token == rec.Token || watch.UnknownHolder(rec)):
			// An unknown holder's lease, broken (or given up meanwhile:
			// Azure does not tell) under the version judged.
			return breakReport{statusReport: rep, Broken: true, NextToken: got.Token + 1, Verdict: brokenVerdict(rep, rec, l.Judge(), o.force)}, nil, nil
		case err == nil: // freed, and maybe taken and freed again, by others meanwhile
			return breakReport{statusReport: rep, NextToken: got.Token + 1,
				Verdict: fmt.Sprintf("nothing to break: the lease was released meanwhile (by %s, token %d)", got.Holder, got.Token)}, nil, nil
		case !errors.As(err, &held):
			return breakReport{}, nil, exitf(storeExit(err), "break: %v", err)
		case !o.force:
			return breakReport{statusReport: rep, Verdict: fmt.Sprintf("not broken: the lease changed while it was being broken (now %s, token %d): its holder is alive", held.Record.Holder, held.Record.Token)},
				exitf(exitRefused, "break: refused: the lease changed while it was being broken: its holder is alive (--force breaks it anyway)"), nil
		case attempt == breakAttempts:
			return breakReport{}, nil, exitf(exitUnavailable, "break: the lease changed under each of %d attempts to break it (now held by %s, token %d)", breakAttempts, held.Record.Holder, held.Record.Token)
		}
		log.Info("the lease changed while it was being broken; reading it again", "holder", held.Record.Holder, "token", held.Record.Token)
		if rec, err = readLease(ctx, l, o.lease, o.startTimeout, log); err != nil {
			return breakReport{}, nil, err
		}
		if !rec.Held() {
			return breakReport{statusReport: rep, NextToken: rec.Token + 1, Verdict: "nothing to break: the lease was released meanwhile"}, nil, nil
		}
	}
}

// liveHolder says why the holder rep describes counts as alive.
func liveHolder(rep statusReport, judge lease.Judge) string {
	if judge == lease.JudgedByStore {
		return fmt.Sprintf("%s holds the store's own lease on it, which is live: the store ends a dead holder's lease within its TTL by itself; only an infinite Azure lease (infinite_lease=true) never ends. If the holder is gone for good, --force breaks it", rep.Holder)
	}
	return rep.Meaning + ". --force breaks it anyway"
}

// brokenVerdict says what breaking rec meant, and what follows for its
// holder.
func brokenVerdict(rep statusReport, rec lease.Record, judge lease.Judge, force bool) string {
	next := fmt.Sprintf("the next contender takes the lease at once, with token %d", rec.Token+1)
	switch {
	case rep.State == "lapsed":
		return fmt.Sprintf("broken: %s (token %d) had not renewed it for its TTL (%s): it is gone; %s", rec.Holder, rec.Token, rep.TTL, next)
	case force && judge == lease.JudgedByStore && rec.Holder == "":
		return "broken (--force): the store's lease on it had no holder named (another tool, or a person, took it); " + next
	}
	return fmt.Sprintf("broken (--force): %s (token %d) may still be alive. It loses the lease at its next renewal "+
		"(within its renew interval, %s of its TTL at the defaults) and stops: leasehold run kills its command at once. "+
		"Until then it may still act as leader: the systems it writes to must refuse token %d once they have seen a greater one; %s",
		rec.Holder, rec.Token, shares.renewInterval, rec.Token, next)
}

func printBreak(w io.Writer, r breakReport) {
	printStatus(w, r.statusReport)
	row := func(k, v string) { fmt.Fprintf(w, "%-14s %s\n", k, v) }
	row("broken", fmt.Sprint(r.Broken))
	if r.NextToken > 0 {
		row("next token", fmt.Sprint(r.NextToken))
	}
	row("verdict", r.Verdict)
}
