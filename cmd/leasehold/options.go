package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// errHelp is returned by the parsers after they printed the help that
// --help asked for.
var errHelp = errors.New("help shown")

// commonOptions are the flags of every subcommand.
type commonOptions struct {
	lease        string
	identity     string
	ttl          time.Duration
	callTimeout  time.Duration
	startTimeout time.Duration
	logFormat    string
	logLevel     string
}

func (o *commonOptions) defineLease(f *flagSet) {
	f.String(&o.lease, "lease", "", "the lease, as a `URL`: s3://BUCKET/KEY, dynamodb://TABLE/NAME,\nazblob://CONTAINER/BLOB, gs://BUCKET/OBJECT, mem://NAME (see leasehold help)")
	f.String(&o.identity, "identity", "", "this instance's `name` in the lease record and the logs; unique among\nthe instances")
	f.Duration(&o.ttl, "ttl", lease.DefaultTTL, "how long the lease lasts without renewal: a crashed leader is replaced\nafter this long")
	f.Duration(&o.callTimeout, "call-timeout", 0, "bound on each request to the store")
	f.Duration(&o.startTimeout, "start-timeout", 10*time.Second, "how long to retry reaching the store at start before giving up (exit 69)")
}

func (o *commonOptions) defineLogs(f *flagSet) {
	f.String(&o.logFormat, "log-format", "text", "`format` of the logs on stderr: text or json")
	f.String(&o.logLevel, "log-level", "info", "least severe `level` logged: debug, info, warn or error")
}

// commonDefaults are the computed defaults usage shows.
var commonDefaults = map[string]string{
	"identity":     "ecs-TASKID, the Azure replica or instance name, else HOSTNAME-PID",
	"call-timeout": shares.callTimeout + " of TTL",
}

// finish validates the common flags and fills in the identity.
func (o *commonOptions) finish(env *environment) error {
	if o.lease == "" {
		if _, inCommand := env.lookupEnv(envPrefix + "TOKEN"); inCommand {
			// LEASEHOLD_LEASE, if set, names the lease of the run that
			// started this command (see givenToCommand): say so, rather
			// than ask for a variable that is there (red team 16).
			return errors.New("--lease is required: LEASEHOLD_LEASE is not read inside a command leasehold runs (LEASEHOLD_TOKEN is set), where it names that run's lease")
		}
		return errors.New("--lease (or LEASEHOLD_LEASE) is required")
	}
	if o.identity == "" {
		o.identity = env.identity
	}
	if err := lease.ValidateIdentity(o.identity); err != nil {
		return fmt.Errorf("--identity: %v", err)
	}
	if o.ttl == 0 {
		return errors.New("--ttl must be positive")
	}
	if o.startTimeout == 0 {
		return errors.New("--start-timeout must be positive")
	}
	return nil
}

func (o *commonOptions) leaseOptions() lease.Options {
	return lease.Options{Identity: o.identity, TTL: o.ttl, CallTimeout: o.callTimeout}
}

// leaseOptions are the lease's options for leasehold run: the common ones,
// and the renew interval, which the lease writes into its records for
// followers.
func (o *runOptions) leaseOptions() lease.Options {
	opts := o.commonOptions.leaseOptions()
	opts.RenewInterval = o.renewInterval
	return opts
}

// runOptions are the flags and arguments of leasehold run.
type runOptions struct {
	commonOptions
	renewDeadline, renewInterval, campaignInterval time.Duration

	once, rerun bool
	grace       time.Duration
	killMargin  time.Duration

	period         string
	every, everyAt time.Duration
	retryFailed    bool
	minHold        time.Duration

	healthCmd, healthURL          string
	healthInterval, healthTimeout time.Duration
	healthThreshold               int
	stallTimeout                  time.Duration
	progressFile                  string
	progressOnStdout              bool
	coolDown                      time.Duration

	listen string

	// shards is --shards: N, the group's shard count, or 0 for one lease;
	// with --holders, the group's slots (set by validate).
	shards int
	// holders is --holders: N, the most instances that run the command at
	// once, each holding one of N slots: a group of N shards of which each
	// instance owns at most one (shard.Config.MaxPerWorker 1).
	holders int
	// prefer is --prefer: this instance's preference (runner.Config.Prefer).
	prefer string

	command []string

	// timing is the runner's configuration for the flags, as it resolves
	// it (set by validate): every default leasehold run shows or relies on
	// is read from it.
	timing runner.Resolved
}

func runFlags(o *runOptions) *flagSet {
	f := newFlagSet("run")
	f.group("Lease")
	o.defineLease(f)
	f.Duration(&o.renewDeadline, "renew-deadline", 0, "the leader stops the command when no renewal has succeeded for this long")
	f.Duration(&o.renewInterval, "renew-interval", 0, "time between renewals")
	f.Duration(&o.campaignInterval, "campaign-interval", 0, "time between a follower's attempts to take the lease")

	f.group("The command")
	f.Int(&o.shards, "shards", 0, "share `N` shards among the instances (a group at the --lease prefix):\nrun one command per shard this instance owns (see Sharded runs above)")
	f.Int(&o.holders, "holders", 0, "let at most `N` instances run the command at once, each holding one of N\nslots (a group at the --lease prefix; see N holders above)")
	f.Bool(&o.once, "once", "try once: run the command if elected, else exit 75 (for cron and serverless jobs)")
	f.Bool(&o.rerun, "rerun", "when the command exits by itself, release the lease and campaign again\ninstead of exiting with its status (after a wait that grows while it keeps failing)")
	f.Duration(&o.grace, "grace", 10*time.Second, "on a voluntary step-down, how long the command has between SIGTERM and\nSIGKILL; the lease is kept renewed meanwhile")
	f.Duration(&o.killMargin, "kill-margin", 0, "the command is killed at the latest this long before the lease could be\ntaken over")
	f.String(&o.prefer, "prefer", "", "lead in preference to instances whose `value` orders before this one (natural\norder: give the build's version); the leader hands the lease to such an\ninstance (see Preferred leaders above)")

	f.group("Scheduled jobs (with --once)")
	f.String(&o.period, "period", "", "run the command at most once for this period `key`, the tick the job fires\nfor (e.g. its scheduled time in RFC 3339); exit 76 if it already ran")
	f.Duration(&o.every, "every", 0, "derive the period key from the clock: the time of the nearest tick of this\nschedule period (ticks at multiples of it since 1970-01-01 UTC)")
	f.Duration(&o.everyAt, "every-offset", 0, "with --every: ticks are this far after the multiples (--every 1h\n--every-offset 30m for a job at half past each hour)")
	f.Bool(&o.retryFailed, "retry-failed", "with --period or --every: a period whose command failed or whose instance\ncrashed may run again on a later trigger (default: at most once)")
	f.Duration(&o.minHold, "min-hold", 0, "keep other instances out for at least this long after the command\nstarted, even when it exits sooner")

	f.group("Health")
	f.String(&o.healthCmd, "health-cmd", "", "`command` run with sh -c while leading; exit status 0 is healthy")
	f.String(&o.healthURL, "health-url", "", "`URL` fetched with GET while leading; a 2xx answer is healthy")
	f.Duration(&o.healthInterval, "health-interval", 0, "time between health checks")
	f.Duration(&o.healthTimeout, "health-timeout", 0, "a health check that takes longer has failed")
	f.Int(&o.healthThreshold, "health-threshold", runner.DefaultHealthThreshold, "failed checks in a row that make the leader step down")
	f.Duration(&o.stallTimeout, "stall-timeout", 0, "step down when the command shows no progress for this long (needs\n--progress-file or --progress-on-stdout)")
	f.String(&o.progressFile, "progress-file", "", "`path` whose modification time the command updates (touch) to show\nprogress; passed to it as LEASEHOLD_PROGRESS_FILE")
	f.Bool(&o.progressOnStdout, "progress-on-stdout", "every line the command writes to stdout shows progress")
	f.Duration(&o.coolDown, "cool-down", 0, "after stepping down as unhealthy, wait this long before campaigning again")

	f.group("Logs and metrics")
	o.defineLogs(f)
	f.String(&o.listen, "listen", "", "serve /healthz, /leader and /metrics on this `address` (e.g. :9090)")
	return f
}

// runDefaults are the computed defaults of leasehold run's usage.
var runDefaults = map[string]string{
	"renew-deadline":    shares.renewDeadline + " of TTL",
	"renew-interval":    shares.renewInterval + " of TTL",
	"campaign-interval": shares.campaignInterval + " of TTL",
	"kill-margin":       "half of TTL - renew interval - renew deadline",
	"health-interval":   "the renew interval",
	"health-timeout":    "half the health interval",
	"cool-down":         "TTL",
}

// parseRun parses leasehold run's flags, environment and command.
func parseRun(args []string, env *environment) (*runOptions, error) {
	o := &runOptions{}
	f := runFlags(o)
	rest, err := f.parse(args, env.lookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		printRunHelp(env.stdout, f)
		return nil, errHelp
	}
	if err != nil {
		return nil, usageError("run", err)
	}
	o.command = rest
	if err := o.finish(env); err != nil {
		return nil, usageError("run", err)
	}
	if err := o.validate(f); err != nil {
		return nil, usageError("run", err)
	}
	return o, nil
}

// runnerConfig is the runner's configuration for the flags, but for what
// only a running session has: the lease, the task, the health check, the
// callbacks and the logger (session.config adds them).
func (o *runOptions) runnerConfig() runner.Config {
	return runner.Config{
		RenewDeadline:    o.renewDeadline,
		RenewInterval:    o.renewInterval,
		CampaignInterval: o.campaignInterval,
		HealthInterval:   o.healthInterval,
		HealthTimeout:    o.healthTimeout,
		HealthThreshold:  o.healthThreshold,
		StallTimeout:     o.stallTimeout,
		CoolDown:         o.coolDown,
		// Renew through the grace period and the kill, and a TTL more as a
		// backstop for a command that does not die.
		DrainTimeout:     o.grace + o.ttl,
		StopWhenTaskEnds: !o.rerun,
		Period:           o.period,
		RetryFailed:      o.retryFailed,
		MinHold:          o.minHold,
	}
}

// maxVariable bounds an environment variable leasehold gives a command,
// "NAME=value" and its NUL: Linux refuses a longer one to exec (E2BIG,
// "argument list too long", MAX_ARG_STRLEN: 32 pages of 4 KiB).
const maxVariable = 128 << 10

func (o *runOptions) validate(f *flagSet) error {
	switch {
	case len(o.command) == 0:
		return errors.New("no command given: leasehold run --lease URL [flags] -- COMMAND [ARGS...]")
	case o.once && o.rerun:
		return errors.New("--once and --rerun exclude each other")
	case !o.once && (o.period != "" || o.every != 0 || o.retryFailed || o.minHold != 0):
		return errors.New("--period, --every, --retry-failed and --min-hold need --once")
	case o.period != "" && o.every != 0:
		return errors.New("--period and --every exclude each other: give the key, or the schedule to derive it from")
	case f.set("every-offset") && o.every == 0:
		return errors.New("--every-offset needs --every")
	case o.retryFailed && o.period == "" && o.every == 0:
		return errors.New("--retry-failed needs --period or --every")
	case o.stallTimeout > 0 && o.progressFile == "" && !o.progressOnStdout:
		return errors.New("--stall-timeout needs a progress signal: --progress-file PATH or --progress-on-stdout")
	case o.stallTimeout == 0 && (o.progressFile != "" || o.progressOnStdout):
		return errors.New("--progress-file and --progress-on-stdout need --stall-timeout")
	case len("LEASEHOLD_LEASE=")+len(o.lease) >= maxVariable:
		// Refused before the campaign: a command that cannot be started
		// was found only once its lease was won (red team 17: a quorum
		// of thousands of members, written to every one of them).
		return fmt.Errorf("--lease is %d bytes long: the command is given it in LEASEHOLD_LEASE, and a variable of %d bytes or more cannot be given to a command (Linux's MAX_ARG_STRLEN); name fewer quorum members, or shorter URLs", len(o.lease), maxVariable)
	case namesCandidates(o.lease):
		return fmt.Errorf("--lease %q names a candidates' key (its key ends in %s): leasehold run --prefer on the lease named without it announces instances there; run on the lease's own key", lease.RedactURL(o.lease), runner.CandidatesSuffix)
	case o.prefer != "" && (o.once || o.shards != 0 || o.holders != 0):
		return fmt.Errorf("--prefer %q is for run without --once, --shards or --holders: only one leader's lease is handed over", o.prefer)
	case (o.holders != 0 || f.set("holders")) && (o.shards != 0 || f.set("shards")):
		return fmt.Errorf("--holders (%d) and --shards (%d) exclude each other: --holders N is a group of N slots, each instance holding at most one", o.holders, o.shards)
	case o.holders != 0 || f.set("holders"):
		if err := o.validateShards(f, "holders", o.holders); err != nil {
			return err
		}
		o.shards = o.holders
	case o.shards != 0 || f.set("shards"):
		if err := o.validateShards(f, "shards", o.shards); err != nil {
			return err
		}
	}
	switch {
	case o.healthThreshold < 1:
		return fmt.Errorf("--health-threshold (%d) must be at least 1", o.healthThreshold)
	case f.set("health-interval") || f.set("health-timeout") || f.set("health-threshold"):
		if o.healthCmd == "" && o.healthURL == "" {
			return errors.New("--health-interval, --health-timeout and --health-threshold need --health-cmd or --health-url")
		}
	}
	if o.healthURL != "" {
		u, err := url.Parse(o.healthURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--health-url %q: want an http:// or https:// URL", o.healthURL)
		}
	}
	if o.every != 0 {
		// The only reading of the wall clock leasehold makes: as early
		// as it can, so that a slow start does not move the tick.
		o.period = runner.PeriodKey(time.Now(), o.every, o.everyAt)
	}
	if o.period != "" {
		if err := lease.ValidatePeriod(o.period); err != nil {
			var oe *lease.OptionError
			errors.As(err, &oe)
			return fmt.Errorf("--period %s %s", oe.Value, oe.Reason)
		}
	}
	if err := o.validateTiming(); err != nil {
		return err
	}
	if o.killMargin == 0 {
		o.killMargin = max(o.timing.Margin()/2, time.Millisecond)
	}
	return nil
}

// validateShards refuses a --shards or --holders (flag) of n out of range,
// and the flags that have no meaning for a group: a group's commands run
// until stopped.
func (o *runOptions) validateShards(f *flagSet, flag string, n int) error {
	if err := checkShards(flag, n); err != nil {
		return err
	}
	for _, name := range []string{"once", "rerun", "campaign-interval", "cool-down"} {
		if f.set(name) {
			return fmt.Errorf("--%s does not apply with --%s: a group's commands run until stopped, each %s's on one instance", name, flag, unit(flag))
		}
	}
	return nil
}

// checkShards refuses a --shards or --holders (flag) of n out of range.
func checkShards(flag string, n int) error {
	if n < 1 || n > shard.MaxShards {
		return fmt.Errorf("--%s (%d) must be between 1 and %d", flag, n, shard.MaxShards)
	}
	return nil
}

// unit is what the group of --shards or --holders (flag) shares: "shard"
// or "slot".
func unit(flag string) string {
	if flag == "holders" {
		return "slot"
	}
	return "shard"
}

// groupFlag is the flag that made the run a group: "holders" or "shards".
func (o *runOptions) groupFlag() string {
	if o.holders > 0 {
		return "holders"
	}
	return "shards"
}

// perWorker is the group's shard.Config.MaxPerWorker: 1 with --holders (a
// slot each), none with --shards.
func (o *runOptions) perWorker() int {
	if o.holders > 0 {
		return 1
	}
	return 0
}

// validateTiming resolves the runner's timing for the flags (o.timing),
// as the lease and the runner will, and words a refusal as the flags the
// user gave: a value derived from --ttl that conflicts with a given flag
// is blamed on that flag. (A zero duration means the default, as
// everywhere.)
func (o *runOptions) validateTiming() error {
	ttl := o.ttl
	opts, err := o.leaseOptions().Validate()
	if err != nil {
		var oe *lease.OptionError
		errors.As(err, &oe)
		return fmt.Errorf("%s (%v) %s", cmp.Or(optionFlags[oe.Field], oe.Field), oe.Value, strings.ReplaceAll(oe.Reason, "TTL (", "--ttl ("))
	}
	if o.killMargin != 0 && o.killMargin >= ttl {
		return fmt.Errorf("--kill-margin (%v) must be less than --ttl (%v)", o.killMargin, ttl)
	}
	o.timing, err = o.runnerConfig().Resolve(opts)
	if err == nil {
		return nil
	}
	rd, ri, ct, hi := o.timing.RenewDeadline, o.timing.RenewInterval, opts.CallTimeout, o.timing.HealthInterval
	deadline := fmt.Sprintf("the renew deadline (%v, %s of --ttl)", rd, shares.renewDeadline)
	if o.renewDeadline != 0 {
		deadline = fmt.Sprintf("--renew-deadline (%v)", rd)
	}
	switch {
	case rd >= ttl:
		return fmt.Errorf("--renew-deadline (%v) must be less than --ttl (%v)", rd, ttl)
	case ri >= rd && o.renewInterval != 0:
		return fmt.Errorf("--renew-interval (%v) must be less than %s", ri, deadline)
	case ri >= rd:
		return fmt.Errorf("--renew-deadline (%v) must be more than the renew interval (%v, %s of --ttl): give a shorter --renew-interval too", rd, ri, shares.renewInterval)
	case ri+rd > ttl && o.renewInterval != 0 && o.renewDeadline != 0:
		return fmt.Errorf("--renew-interval (%v) plus --renew-deadline (%v) must not exceed --ttl (%v)", ri, rd, ttl)
	case ri+rd > ttl && o.renewInterval != 0:
		return fmt.Errorf("--renew-interval (%v) plus %s must not exceed --ttl (%v): give a shorter --renew-deadline too", ri, deadline, ttl)
	case ri+rd > ttl:
		return fmt.Errorf("--renew-deadline (%v) plus the renew interval (%v, %s of --ttl) must not exceed --ttl (%v): give a shorter --renew-interval too", rd, ri, shares.renewInterval, ttl)
	case ct >= rd && o.callTimeout != 0:
		return fmt.Errorf("--call-timeout (%v) must be less than %s", ct, deadline)
	case ct >= rd:
		return fmt.Errorf("--renew-deadline (%v) must be more than the call timeout (%v, %s of --ttl): give a shorter --call-timeout too", rd, ct, shares.callTimeout)
	case o.timing.HealthTimeout > hi && o.healthInterval != 0:
		return fmt.Errorf("--health-timeout (%v) must not exceed --health-interval (%v)", o.healthTimeout, hi)
	case o.timing.HealthTimeout > hi:
		return fmt.Errorf("--health-timeout (%v) must not exceed the health interval (%v, the renew interval)", o.healthTimeout, hi)
	}
	if oe := (*lease.OptionError)(nil); errors.As(err, &oe) && oe.Field == "MinHold" {
		return fmt.Errorf("--min-hold (%v) %s", oe.Value, oe.Reason)
	}
	return fmt.Errorf("leasehold run's flags: %v", err)
}

// usageError is a bad flag, variable or argument: one line, exit 64.
func usageError(cmd string, err error) error {
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "flag provided but not defined: -", "unknown flag --")
	msg = strings.ReplaceAll(msg, "for flag -", "for flag --")
	return exitf(exitUsage, "%s: %s (see leasehold %s --help)", cmd, msg, cmd)
}
