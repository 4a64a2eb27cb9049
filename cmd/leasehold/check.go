package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/leasehold/leasehold/internal/pricing"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/lease/quorumlease"
	"github.com/leasehold/leasehold/runner"
)

// checkOptions are the flags of leasehold check.
type checkOptions struct {
	reportOptions
}

func checkFlags(o *checkOptions) *flagSet {
	f := newFlagSet("check")
	f.group("Lease")
	o.defineLease(f)
	o.defineOutput(f)
	f.group("Logs")
	o.defineLogs(f)
	return f
}

// Verdicts of a check.
const (
	verdictOK   = "ok"
	verdictFail = "fail"
	verdictSkip = "skip"
)

// checkResult is one check of leasehold check; -o json prints it with these
// keys.
type checkResult struct {
	// Check names it: ttl, credentials, store, conditional writes,
	// permissions, cost.
	Check string `json:"check"`
	// Verdict is ok, fail, or skip (the detail says why it was not made).
	Verdict string `json:"verdict"`
	// Detail says what was found, in a sentence.
	Detail string `json:"detail"`
	// Cost holds the cost check's figures.
	Cost *costFigures `json:"cost,omitempty"`

	code int // the exit status a failure calls for
}

// costFigures are the requests and list price of a leader and of each
// follower, at the TTL checked and the runner's default cadence.
type costFigures struct {
	Service string `json:"service"`
	// LeaderRequest and FollowerRequest name the request a leader renews
	// with and a follower polls with.
	LeaderRequest           string  `json:"leader_request"`
	FollowerRequest         string  `json:"follower_request"`
	LeaderRequestsPerHour   float64 `json:"leader_requests_per_hour"`
	FollowerRequestsPerHour float64 `json:"follower_requests_per_hour"`
	LeaderDollarsPerMonth   float64 `json:"leader_dollars_per_month"`
	FollowerDollarsPerMonth float64 `json:"follower_dollars_per_month"`
}

// checkReport is what leasehold check prints.
type checkReport struct {
	// Lease is the lease's URL, without secrets.
	Lease string `json:"lease"`
	// OK: every check passed or was skipped for a reason that does not
	// make the lease unsafe; the lease can be used as configured.
	OK     bool          `json:"ok"`
	Checks []checkResult `json:"checks"`
}

// cmdCheck is leasehold check.
func cmdCheck(ctx context.Context, args []string, env *environment) error {
	o := &checkOptions{}
	log, err := reporter{"check", checkFlags(o), printCheckHelp, &o.reportOptions}.parse(args, env)
	if err != nil {
		return err
	}
	run := runChecks
	if isQuorum(o.lease) {
		run = runQuorumChecks
	}
	rep, err := run(ctx, o, log)
	if err != nil {
		return err
	}
	if err := o.print(env.stdout, rep, func() { printCheck(env.stdout, rep) }); err != nil {
		return err
	}
	return checkExit(rep)
}

// runChecks makes the checks in order. It returns an error only when
// there is nothing to check: the URL or an option other than the TTL is
// invalid, or a signal stopped it.
func runChecks(ctx context.Context, o *checkOptions, log *slog.Logger) (*checkReport, error) {
	rep := &checkReport{Lease: lease.RedactURL(o.lease)}
	add := func(r checkResult) { rep.Checks = append(rep.Checks, r) }
	open := func(opts lease.Options) (lease.Lease, error) {
		return retryAtStart(ctx, o.startTimeout, log, func() (lease.Lease, error) { return lease.Open(ctx, o.lease, opts) })
	}

	opts := o.leaseOptions()
	timing, timingErr := resolveTiming(o, opts)
	ttl := checkTiming(o, timing, timingErr)
	l, err := open(opts)
	var oe *lease.OptionError
	ttlRefused := errors.As(err, &oe) && oe.Field == "TTL"
	if ttlRefused {
		ttl = failed("ttl", exitConfig, err.Error())
	}
	if ttlRefused || err == nil && ttl.Verdict == verdictFail {
		// The other checks are made at the default TTL, which every store
		// allows, and the call timeout it implies.
		opts.TTL, opts.CallTimeout = lease.DefaultTTL, 0
		l, err = open(opts)
	}
	if !errors.Is(err, lease.ErrInvalid) {
		add(ttl)
	}
	switch {
	case ctx.Err() != nil:
		return nil, interrupted(ctx, "while reaching the store")
	case errors.Is(err, lease.ErrInvalid):
		return nil, exitf(exitConfig, "check: %v", err)
	case err != nil: // DynamoDB's Open describes the table
		add(skipped("credentials", "the lease could not be opened"))
		add(storeFailed(err, o))
		add(skipped("conditional writes", "needs the store"))
		add(skipped("permissions", "needs the store"))
	default:
		add(checkCredentials(ctx, l, o))
		rec, storeResult := checkStore(ctx, l, o, log)
		add(storeResult)
		if storeResult.Verdict == verdictOK {
			conditions := checkConditions(ctx, l, o)
			add(conditions)
			if conditions.Verdict == verdictFail {
				add(skipped("permissions", "read allowed; write not tested: check writes only to a store that enforces conditional writes"))
			} else {
				add(checkPermissions(ctx, l, o, rec))
			}
		} else {
			add(skipped("conditional writes", "needs the store"))
			add(skipped("permissions", "needs the store"))
		}
	}
	if ttl.Verdict == verdictFail {
		add(skipped("cost", "the TTL failed its check"))
	} else {
		add(checkCost(o, timing))
	}
	if ctx.Err() != nil {
		return nil, interrupted(ctx, "while checking the lease")
	}
	rep.OK = true
	for _, r := range rep.Checks {
		rep.OK = rep.OK && r.Verdict != verdictFail
	}
	return rep, nil
}

// isQuorum reports whether leaseURL is a quorum lease's, whatever the case
// of its scheme, as lease.Open opens it: told by the prefix "quorum:"
// alone, "QUORUM:..." was checked as a lease of an unknown store, its
// members' conditional writes never probed, and taken by --shards for a
// shard group's store (red team 17).
func isQuorum(leaseURL string) bool {
	n := len(quorumlease.Scheme) + 1
	return len(leaseURL) >= n && strings.EqualFold(leaseURL[:n], quorumlease.Scheme+":")
}

// runQuorumChecks checks each member of a quorum lease as runChecks checks
// a lease, each check named after its member, and then the quorum's cost:
// the members' added up, n times a lease's.
func runQuorumChecks(ctx context.Context, o *checkOptions, log *slog.Logger) (*checkReport, error) {
	u, err := url.Parse(o.lease)
	if err != nil {
		return nil, exitf(exitConfig, "check: %v", err)
	}
	members, err := quorumlease.MemberURLs(u)
	if err != nil {
		return nil, exitf(exitConfig, "check: %v", err)
	}
	rep := &checkReport{Lease: lease.RedactURL(o.lease), OK: true}
	sum := &costFigures{}
	var services []string
	for i, m := range members {
		mo := *o
		mo.lease = m
		mr, err := runChecks(ctx, &mo, log)
		var ee *exitError
		switch {
		case errors.As(err, &ee) && ee.err != nil:
			// The exit line is the exitError's own message: name the
			// member in it (red team 17).
			return nil, exitf(ee.code, "check: member %d (%s): %s", i+1, lease.RedactURL(m), strings.TrimPrefix(ee.err.Error(), "check: "))
		case err != nil:
			return nil, fmt.Errorf("member %d (%s): %w", i+1, lease.RedactURL(m), err)
		}
		for _, c := range mr.Checks {
			if c.Check == "cost" {
				if c.Cost == nil {
					sum = nil
				} else if sum != nil {
					services = append(services, c.Cost.Service)
					sum.add(c.Cost)
				}
			}
			c.Check = fmt.Sprintf("member %d %s", i+1, c.Check)
			rep.Checks = append(rep.Checks, c)
			rep.OK = rep.OK && c.Verdict != verdictFail
		}
	}
	cost := skipped("cost", "no prices for every member")
	if sum != nil {
		sum.Service = strings.Join(services, " + ")
		cost = passed("cost", fmt.Sprintf("%d members, each a lease: the leader %v requests/h (%s/month), each follower %v requests/h (%s/month), the members' added up", len(members), sum.LeaderRequestsPerHour, pricing.Dollars(sum.LeaderDollarsPerMonth), sum.FollowerRequestsPerHour, pricing.Dollars(sum.FollowerDollarsPerMonth)))
		cost.Cost = sum
	}
	rep.Checks = append(rep.Checks, cost)
	return rep, nil
}

// add adds a member's figures to a quorum's.
func (c *costFigures) add(m *costFigures) {
	join := func(a, b string) string {
		if a == "" {
			return b
		}
		return a + ", " + b
	}
	c.LeaderRequest, c.FollowerRequest = join(c.LeaderRequest, m.LeaderRequest), join(c.FollowerRequest, m.FollowerRequest)
	c.LeaderRequestsPerHour = rounded(c.LeaderRequestsPerHour + m.LeaderRequestsPerHour)
	c.FollowerRequestsPerHour = rounded(c.FollowerRequestsPerHour + m.FollowerRequestsPerHour)
	c.LeaderDollarsPerMonth = pricing.Round(c.LeaderDollarsPerMonth + m.LeaderDollarsPerMonth)
	c.FollowerDollarsPerMonth = pricing.Round(c.FollowerDollarsPerMonth + m.FollowerDollarsPerMonth)
}

func passed(check, detail string) checkResult {
	return checkResult{Check: check, Verdict: verdictOK, Detail: detail}
}

func skipped(check, reason string) checkResult {
	return checkResult{Check: check, Verdict: verdictSkip, Detail: reason}
}

func failed(check string, code int, detail string) checkResult {
	return checkResult{Check: check, Verdict: verdictFail, Detail: detail, code: code}
}

// minNetworkTTL is the shortest TTL check passes on a store across a
// network: each call to the store may take a fifth of the TTL (the call
// timeout), 200ms at this TTL, and a leader renews every 3/8 of it.
const minNetworkTTL = time.Second

// checkTiming reports the runner's timing at the TTL, as leasehold run
// resolves it with no timing flags, or its refusal of the call timeout, or
// a TTL too short for a store across a network (all but memory), whose
// calls would time out and read as a store that cannot be reached.
func checkTiming(o *checkOptions, timing runner.Resolved, err error) checkResult {
	desc, _ := storeOf(o.lease)
	switch {
	case err != nil:
		return failed("ttl", exitConfig, fmt.Sprintf("leasehold run would refuse these options: %s%v", optionFlag(err), err))
	case o.ttl < minNetworkTTL && desc.Scheme != memlease.Scheme:
		return failed("ttl", exitConfig, fmt.Sprintf("--ttl %v is too short for a store across a network: a leader would renew every %v, and each call to the store would time out after %v; give --ttl %v or more", o.ttl, timing.RenewInterval, timing.LeaseOptions.CallTimeout, minNetworkTTL))
	}
	return passed("ttl", fmt.Sprintf("%v is a TTL the store allows: a leader renews every %v and gives up after %v without a renewal", o.ttl, timing.RenewInterval, timing.RenewDeadline))
}

// bounded runs f with ctx bounded by --start-timeout.
func bounded[T any](ctx context.Context, o *checkOptions, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, o.startTimeout)
	defer cancel()
	return f(ctx)
}

// resolveTiming is the runner's timing, at its defaults, for the lease
// with options opts: as often as its store asks, a follower reads it
// (driver.Store.FollowerReads).
func resolveTiming(o *checkOptions, opts lease.Options) (runner.Resolved, error) {
	desc, _ := storeOf(o.lease)
	return runner.Config{FollowerReads: desc.FollowerReads}.Resolve(opts)
}

// storeOf returns what the lease's backend says of its store
// (driver.Store), by the scheme it registered for the lease URL's.
func storeOf(leaseURL string) (driver.Store, bool) {
	u, err := url.Parse(leaseURL)
	if err != nil {
		return driver.Store{}, false
	}
	return driver.LookupStore(u.Scheme)
}

// checkCredentials asks the lease where its credentials come from.
func checkCredentials(ctx context.Context, l lease.Lease, o *checkOptions) checkResult {
	desc, _ := storeOf(o.lease)
	none := skipped("credentials", fmt.Sprintf("the %s backend has no credentials to check", desc.Name))
	cs, ok := l.(driver.CredentialSource)
	if !ok {
		return none
	}
	source, err := bounded(ctx, o, cs.Credentials)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return none
	case err != nil:
		return failed("credentials", storeExit(err), err.Error())
	}
	return passed("credentials", source)
}

// checkStore reads the lease: the bucket, table or container is there and
// the credentials may read it.
func checkStore(ctx context.Context, l lease.Lease, o *checkOptions, log *slog.Logger) (lease.Record, checkResult) {
	// A lease never acquired is an answer, not a failure to retry
	// (lease.ErrNoRecord is retryable for a contender waiting for a record).
	never := false
	rec, err := retryAtStart(ctx, o.startTimeout, log, func() (lease.Record, error) {
		rec, err := l.Observe(ctx)
		if errors.Is(err, lease.ErrNoRecord) {
			never = true
			return lease.Record{}, nil
		}
		return rec, err
	})
	var state string
	switch {
	case err == nil && never:
		state = "never acquired"
	case err != nil:
		return rec, storeFailed(err, o)
	case rec.Held():
		state = fmt.Sprintf("held by %s (token %d)", rec.Holder, rec.Token)
	default:
		state = fmt.Sprintf("released by %s (token %d)", rec.Holder, rec.Token)
	}
	if desc, _ := storeOf(o.lease); desc.Holds != "" {
		return rec, passed("store", desc.Holds+"; the lease can be read: "+state)
	}
	return rec, passed("store", "the lease can be read: "+state)
}

// storeFailed is the store check's failure after err.
func storeFailed(err error, o *checkOptions) checkResult {
	if lease.Retryable(err) {
		return failed("store", exitUnavailable, fmt.Sprintf("cannot reach the store within --start-timeout (%v): %v", o.startTimeout, err))
	}
	return failed("store", exitConfig, err.Error())
}

// checkConditions has the lease verify that its store enforces
// conditional writes, where its backend has a check (driver.Verifier). A
// probe the store refused to the credentials is no verdict on the store:
// it fails as permission denied, naming the grants the probe needs.
func checkConditions(ctx context.Context, l lease.Lease, o *checkOptions) checkResult {
	desc, known := storeOf(o.lease)
	v, ok := l.(driver.Verifier)
	switch {
	case !known:
		return skipped("conditional writes", "the backend does not describe its store")
	case !ok:
		return skipped("conditional writes", desc.Conditions)
	}
	_, err := bounded(ctx, o, func(ctx context.Context) (struct{}, error) { return struct{}{}, v.Verify(ctx) })
	switch {
	case errors.Is(err, lease.ErrPermission):
		return failed("conditional writes", storeExit(err), fmt.Sprintf("not checked: permission denied: the store refused the probe, which needs %s: %v", desc.ProbeGrants(), err))
	case err != nil:
		return failed("conditional writes", storeExit(err), err.Error())
	case desc.Probe == "":
		return passed("conditional writes", desc.Conditions)
	}
	return passed("conditional writes", "the store refused the writes it must refuse, of "+desc.Probe)
}

// checkPermissions checks that the credentials may write the lease, by
// acquiring and releasing it, only when it is free.
func checkPermissions(ctx context.Context, l lease.Lease, o *checkOptions, rec lease.Record) checkResult {
	if rec.Held() {
		return skipped("permissions", fmt.Sprintf("read allowed; write not tested: the lease is held by %s (token %d), and check never writes over a live record", rec.Holder, rec.Token))
	}
	t, err := bounded(ctx, o, l.Acquire)
	var held *lease.HeldError
	switch {
	case errors.As(err, &held):
		return skipped("permissions", fmt.Sprintf("read allowed; write not tested: %s acquired the lease meanwhile (token %d)", held.Record.Holder, held.Record.Token))
	case err != nil:
		return failed("permissions", storeExit(err), "read allowed; acquiring the free lease failed: "+err.Error())
	}
	if _, err := bounded(ctx, o, func(ctx context.Context) (struct{}, error) { return struct{}{}, l.Release(ctx, t) }); err != nil {
		return failed("permissions", storeExit(err), fmt.Sprintf("read allowed; acquired the lease as %s (token %d), but releasing it failed (it lapses after %v): %v", o.identity, t.Token, l.Options().TTL, err))
	}
	return passed("permissions", fmt.Sprintf("read and write allowed: acquired the free lease as %s (token %d) and released it at once (harmless: tokens only go up)", o.identity, t.Token))
}

// checkCost prices a leader's renewals and a follower's reads at the
// runner's timing for the TTL (timing), on the lease's store (its
// description's prices, and whether its renewals show): a renewal every
// RenewInterval (with the request that shows it, on a store whose
// description has one), and a read every FollowerReadInterval (at the
// description's FollowerReads, resolved in timing).
func checkCost(o *checkOptions, timing runner.Resolved) checkResult {
	desc, ok := storeOf(o.lease)
	svc, priced := pricing.Lookup(desc.Price.Service)
	if !ok || !priced {
		return skipped("cost", "no prices for this backend")
	}
	renew, poll := desc.Price.Renew, desc.Price.Poll
	renewals := perHour(timing.RenewInterval)
	followerEvery := timing.FollowerReadInterval(desc.RenewalsShow())
	leader := map[string]float64{renew: renewals}
	c := &costFigures{
		Service:                 svc.String(),
		LeaderRequestsPerHour:   renewals,
		FollowerRequestsPerHour: perHour(followerEvery),
		LeaderRequest:           renew,
		FollowerRequest:         poll,
	}
	leaderText := rate(timing.RenewInterval, renew)
	if show := desc.Price.Show; show != "" {
		leader[show] = renewals
		c.LeaderRequestsPerHour += renewals
		c.LeaderRequest += " + " + show
		leaderText = rate(timing.RenewInterval, renew+" + "+show)
	}
	followerText := rate(followerEvery, poll)
	c.LeaderDollarsPerMonth = pricing.Round(svc.Monthly(leader))
	c.FollowerDollarsPerMonth = pricing.Round(svc.Monthly(map[string]float64{poll: c.FollowerRequestsPerHour}))
	c.LeaderRequestsPerHour, c.FollowerRequestsPerHour = rounded(c.LeaderRequestsPerHour), rounded(c.FollowerRequestsPerHour)
	r := passed("cost", fmt.Sprintf("at TTL %v: the leader %s (%s/month), each follower %s (%s/month), at %s list prices",
		o.ttl, leaderText, pricing.Dollars(c.LeaderDollarsPerMonth), followerText, pricing.Dollars(c.FollowerDollarsPerMonth), svc))
	if svc == pricing.Memory {
		r.Detail = fmt.Sprintf("at TTL %v: the leader %s, each follower %s, in this process: free", o.ttl, leaderText, followerText)
	}
	r.Cost = c
	return r
}

// perHour is how many times an hour something done every d is done.
func perHour(d time.Duration) float64 { return float64(time.Hour) / float64(d) }

// rate says how often requests, made every d, are made: "640 PUT/h", or,
// less often than once an hour, "1 PUT every 375h0m0s"; requests naming
// two ("PUT lease/renew + PUT metadata"), each is made so often.
func rate(d time.Duration, requests string) string {
	n := perHour(d)
	if n < 1 {
		return fmt.Sprintf("1 %s every %v", strings.ReplaceAll(requests, " + ", " + 1 "), d)
	}
	each := fmt.Sprintf("%.0f ", math.Round(n))
	return each + strings.ReplaceAll(requests, " + ", " + "+each) + "/h"
}

// rounded is x to three significant digits, or to a whole number when it
// has more digits before the point: 0.00267 requests an hour, 1384.
func rounded(x float64) float64 {
	if x == 0 || math.Abs(x) >= 100 {
		return math.Round(x)
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*scale) / scale
}

// checkExit is the exit after the report: nil when every check passed,
// else the status the failures call for (78 before 69: a person must act)
// and one line naming the first failure and why.
func checkExit(rep *checkReport) error {
	var fails []checkResult
	code := exitOK
	for _, r := range rep.Checks {
		if r.Verdict == verdictFail {
			fails = append(fails, r)
			if code != exitConfig {
				code = r.code
			}
		}
	}
	if len(fails) == 0 {
		return nil
	}
	more := ""
	if len(fails) > 1 {
		more = fmt.Sprintf(" (and %d more failed checks)", len(fails)-1)
	}
	if code == exitUnavailable {
		return exitf(code, "check: the store could not be reached, so the lease was not checked: %s: %s%s", fails[0].Check, fails[0].Detail, more)
	}
	return exitf(code, "check: the lease cannot be used safely: %s: %s%s", fails[0].Check, fails[0].Detail, more)
}

func printCheck(w io.Writer, rep *checkReport) {
	width := len("conditional writes") // a quorum's checks are named after their member
	for _, r := range rep.Checks {
		width = max(width, len(r.Check))
	}
	fmt.Fprintf(w, "%-*s %s\n", width+1, "lease", rep.Lease)
	for _, r := range rep.Checks {
		fmt.Fprintf(w, "%-*s %-4s  %s\n", width+1, r.Check, r.Verdict, oneLine(strings.TrimSpace(r.Detail)))
	}
}
