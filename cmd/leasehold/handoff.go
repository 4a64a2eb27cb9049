package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

// handoffOptions are the flags of leasehold handoff.
type handoffOptions struct {
	reportOptions
	to      string
	timeout time.Duration
}

func handoffFlags(o *handoffOptions) *flagSet {
	f := newFlagSet("handoff")
	f.group("Lease")
	o.defineLease(f)
	f.group("Handoff")
	f.String(&o.to, "to", "", "the `identity` of the instance to hand the lease to (default: any other)")
	f.Duration(&o.timeout, "timeout", 0, "give up when the leader has not handed the lease over by then (default: 3\ntimes the lease's TTL)")
	o.defineOutput(f)
	f.group("Logs")
	o.defineLogs(f)
	return f
}

// handoffReport is what leasehold handoff prints.
type handoffReport struct {
	// From and FromToken are the leader found, To and ToToken the one
	// that leads after it ("" when none did in time).
	From      string `json:"from"`
	FromToken uint64 `json:"from_token"`
	To        string `json:"to,omitempty"`
	ToToken   uint64 `json:"to_token,omitempty"`
	// Took is how long the handoff took, from the request.
	Took string `json:"took"`
}

// cmdHandoff is leasehold handoff: it asks the leader, through the
// candidates' key beside the lease (runner.AnnotationHandoffTo), to hand
// the lease to another instance, and waits until another leads.
func cmdHandoff(ctx context.Context, args []string, env *environment) error {
	o := &handoffOptions{}
	f := handoffFlags(o)
	l, log, err := reporter{"handoff", f, printHandoffHelp, &o.reportOptions}.open(ctx, args, env)
	if err != nil {
		return err
	}
	if o.to != "" {
		if err := lease.ValidateIdentity(o.to); err != nil {
			return usageError("handoff", fmt.Errorf("--to: %w", err))
		}
		if o.to == runner.HandoffToAnyOther {
			return usageError("handoff", errors.New(`--to "*": give an instance's identity, or no --to for any other instance`))
		}
	}
	rec, err := l.Observe(ctx)
	switch {
	case err != nil && !errors.Is(err, lease.ErrNoRecord):
		return exitf(storeExit(err), "handoff: %v", err)
	case !rec.Held():
		return exitf(exitUnavailable, "handoff: nobody leads %s: there is nothing to hand over", lease.RedactURL(o.lease))
	case rec.Annotations.Get(runner.AnnotationPrefer) == "":
		return exitf(exitConfig, "handoff: the leader %s runs without --prefer, so it does not read the candidates' key and would not hear the request: run every instance with --prefer (the same value for all, to hand over only on request)", rec.Holder)
	case o.to == rec.Holder:
		return exitf(exitConfig, "handoff: --to %s is the leader already", o.to)
	}
	timeout := o.timeout
	if timeout == 0 {
		timeout = 3 * rec.TTL
	}
	if !f.set("ttl") && rec.TTL > 0 {
		// The request is written with the leader's TTL, so renewed at
		// its renew interval: with handoff's default TTL it would be
		// renewed every 5 s, and a leader of a shorter TTL, which obeys
		// a request once it has seen it renewed, would not have seen it
		// by the default --timeout of 3 of its TTLs (red team 32).
		o.ttl = rec.TTL
	}
	cands, err := openCandidates(ctx, "handoff", &o.commonOptions)
	if err != nil {
		return err
	}
	to := cmp.Or(o.to, runner.HandoffToAnyOther)
	began := time.Now()
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := runner.New(runner.Config{
		Lease:            cands,
		Logger:           log,
		StopWhenTaskEnds: true,
		Annotate: func(won lease.Term) lease.Annotations {
			return won.Annotations.With(runner.AnnotationHandoffTo, to).With(runner.AnnotationHandoffTerm, strconv.FormatUint(rec.Token, 10))
		},
		// The request stands until the term it is for has ended, not
		// until another leads: a leader handing over to an instance that
		// has gone leaves the lease to the others a TTL later, and they
		// announce themselves on the key the request would hold.
		Task: func(tctx context.Context) error {
			waitForTermEnd(tctx, l, rec)
			return nil
		},
	})
	if err != nil {
		return usageError("handoff", err)
	}
	if err := r.Run(hctx); err != nil {
		return exitf(storeExit(err), "handoff: %v", err)
	}
	after, last := waitForHandoff(hctx, l, rec, o.to)
	out := handoffReport{From: rec.Holder, FromToken: rec.Token, Took: time.Since(began).Round(time.Millisecond).String()}
	if after.Holder == "" {
		// --timeout has passed, maybe before waitForHandoff read
		// anything (the runner returns when it passes): what is said of
		// the lease is what one more read finds, or that it cannot be
		// told, not the record found before the request, which would
		// send an operator after a leader that has gone (red team 32).
		now, err := l.Observe(ctx)
		if err != nil {
			if err := o.print(env.stdout, out, func() {
				fmt.Fprintf(env.stdout, "unknown: the store did not answer; %s (token %d) may have handed the lease over\n", rec.Holder, rec.Token)
			}); err != nil {
				return err
			}
			return exitf(exitUnavailable, "handoff: cannot tell whether %s handed the lease over: reading the lease after --timeout (%v): %v", rec.Holder, timeout, err)
		}
		if handedOver(now, rec, o.to) {
			after = now
		}
		last = now
	}
	if after.Holder == "" {
		if last.Held() && last.Token != rec.Token {
			// Another request, or a better candidate, came first.
			if err := o.print(env.stdout, out, func() {
				fmt.Fprintf(env.stdout, "not handed over to %s: %s (token %d) leads after %s (token %d)\n", o.to, last.Holder, last.Token, rec.Holder, rec.Token)
			}); err != nil {
				return err
			}
			return exitf(exitRefused, "handoff: the lease went from %s to %s, not to %s: another handoff, or an instance run with a greater --prefer, came first", rec.Holder, last.Holder, o.to)
		}
		if err := o.print(env.stdout, out, func() {
			fmt.Fprintf(env.stdout, "not handed over: %s (token %d) still leads after %s\n", rec.Holder, rec.Token, out.Took)
		}); err != nil {
			return err
		}
		return exitf(exitRefused, "handoff: the leader %s did not hand the lease over within %v", rec.Holder, timeout)
	}
	out.To, out.ToToken = after.Holder, after.Token
	return o.print(env.stdout, out, func() { printHandoff(env.stdout, out) })
}

// openCandidates opens the lease of the candidates beside o's lease: its
// key and runner.CandidatesSuffix, in the same store, with the same parameters
// (candidatesURL); what prefixes its errors.
func openCandidates(ctx context.Context, what string, o *commonOptions) (lease.Lease, error) {
	cu, err := candidatesURL(o.lease)
	if err != nil {
		return nil, exitf(exitConfig, "%s: the candidates' lease beside --lease %s: %v", what, lease.RedactURL(o.lease), err)
	}
	l, err := lease.Open(ctx, cu, o.leaseOptions())
	if err != nil {
		return nil, exitf(exitConfig, "%s: the candidates' lease %s: %v", what, lease.RedactURL(cu), err)
	}
	return l, nil
}

// candidatesURL is leaseURL with runner.CandidatesSuffix after its key:
// its path (s3://BUCKET/KEY, dynamodb://TABLE/NAME, gs://BUCKET/OBJECT),
// or its host (mem://NAME); for a quorum (quorum:URL,...), the quorum of
// its members' candidates' keys, each in its member's store.
func candidatesURL(leaseURL string) (string, error) {
	u, err := url.Parse(leaseURL)
	switch {
	case err != nil:
		return "", err
	case u.Scheme == quorumlease.Scheme:
		members, err := quorumlease.MemberURLs(u)
		if err != nil {
			return "", err
		}
		for i, m := range members {
			if members[i], err = candidatesURL(m); err != nil {
				return "", fmt.Errorf("member %d: %w", i+1, err)
			}
		}
		return quorumlease.Scheme + ":" + strings.Join(members, ","), nil
	case u.Opaque != "":
		return "", fmt.Errorf("a %s: URL names no key", u.Scheme)
	case keyInPath(u):
		u.Path += runner.CandidatesSuffix
		if u.RawPath != "" {
			u.RawPath += runner.CandidatesSuffix
		}
	case u.Host != "":
		u.Host += runner.CandidatesSuffix
	default:
		return "", errors.New("it names no key")
	}
	return u.String(), nil
}

// keyInPath reports whether a lease URL names its key in its path
// (s3://BUCKET/KEY), not its host (mem://NAME).
func keyInPath(u *url.URL) bool { return u.Path != "" && u.Path != "/" }

// namesCandidates reports whether leaseURL's key, or a quorum member's,
// ends in runner.CandidatesSuffix: it is another lease's candidates' key.
func namesCandidates(leaseURL string) bool {
	u, err := url.Parse(leaseURL)
	if err != nil {
		return false // refused where it is opened, with the parse error
	}
	if u.Scheme == quorumlease.Scheme {
		members, err := quorumlease.MemberURLs(u)
		return err == nil && slices.ContainsFunc(members, namesCandidates)
	}
	key := u.Host
	if keyInPath(u) {
		key = u.Path
	}
	return strings.HasSuffix(key, runner.CandidatesSuffix)
}

// waitForHandoff reads l every TTL/20 until another contender than from's
// holder (to, if not "") holds it, found, or ctx ends (found is then the
// zero Record); last is the last record it read.
func waitForHandoff(ctx context.Context, l lease.Lease, from lease.Record, to string) (found, last lease.Record) {
	poll(ctx, l, from.TTL/20, func(rec lease.Record) bool {
		last = rec
		if handedOver(rec, from, to) {
			found = rec
			return true
		}
		return false
	})
	return found, last
}

// handedOver reports whether rec is held by another contender than from's
// holder (to, if not "").
func handedOver(rec, from lease.Record, to string) bool {
	return rec.Held() && rec.Token != from.Token && rec.Holder != from.Holder && (to == "" || rec.Holder == to)
}

// waitForTermEnd reads l every TTL/20 until from's term has ended (its
// holder handed it off, released it, or another took it), or ctx ends.
func waitForTermEnd(ctx context.Context, l lease.Lease, from lease.Record) {
	poll(ctx, l, from.TTL/20, func(rec lease.Record) bool {
		return !rec.Held() || rec.Token != from.Token || rec.Successor() != ""
	})
}

// poll reads l every step until done says so of a record it read, or ctx
// ends.
func poll(ctx context.Context, l lease.Lease, step time.Duration, done func(lease.Record) bool) {
	for {
		if rec, err := l.Observe(ctx); err == nil && done(rec) {
			return
		}
		if ctxtime.Sleep(ctx, step); ctx.Err() != nil {
			return
		}
	}
}

func printHandoff(w io.Writer, out handoffReport) {
	fmt.Fprintf(w, "handed over: %s (token %d) -> %s (token %d) in %s\n", out.From, out.FromToken, out.To, out.ToToken, out.Took)
}

func printHandoffHelp(w io.Writer, f *flagSet) {
	fmt.Fprint(w, `Usage: leasehold handoff --lease URL [--to IDENTITY] [-o json]

Asks the leader to hand the lease over, for maintenance of its host or to
move leadership on purpose, and waits until another instance leads. The
leader must run with --prefer (it reads the candidates' key beside the
lease, KEY.candidates, where this command writes the request; give every
instance the same value to hand over only on request). Once it has seen
the request renewed, the leader stops its command as for a voluntary
step-down (SIGTERM, --grace) and then hands the lease to the instance
named by --to, which takes it at once while every other instance sees it
held (if that instance has gone, another takes the lease a TTL later, as
after a crash); without --to it releases the lease and waits --cool-down
before it campaigns again, so another instance takes it. The old leader
does not ask for the lease back by its --prefer for --cool-down; an
instance whose --prefer orders after the one named still takes it, as
preference always does. The request is for the leader found: it stands
until that leader's term has ended, and no later leader obeys it.

Fields:
  from, from token   the leader found, and its token
  to, to token       the instance that leads after it, and its token
  took               from the request to the new leader's election

Exit status: 0 when another instance leads; 75 the leader did not hand the
lease over within --timeout; 69 nobody leads, the store is unreachable
within --start-timeout, or it did not answer the read after --timeout (the
lease may have moved); 78 the leader runs without --prefer, --to names the
leader, or an unusable lease URL; 64 bad flags.
`)
	f.usage(w, commonDefaults)
}
