//go:build unix

package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

func TestParseRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		check func(t *testing.T, o *runOptions)
	}{
		{
			name: "defaults",
			args: []string{"--lease", "mem://a", "--", "worker", "-v"},
			check: func(t *testing.T, o *runOptions) {
				if o.ttl != 15*time.Second || o.grace != 10*time.Second || o.killMargin != 468750*time.Microsecond || o.startTimeout != 10*time.Second {
					t.Errorf("ttl %v grace %v kill margin %v start timeout %v, want 15s 10s 468.75ms 10s", o.ttl, o.grace, o.killMargin, o.startTimeout)
				}
				if o.identity != "host-42" || strings.Join(o.command, " ") != "worker -v" {
					t.Errorf("identity %q command %q, want host-42 and worker -v", o.identity, o.command)
				}
			},
		},
		{
			name: "every flag from the environment",
			env: map[string]string{
				"LEASEHOLD_LEASE": "mem://b", "LEASEHOLD_IDENTITY": "w1", "LEASEHOLD_TTL": "30s",
				"LEASEHOLD_RENEW_DEADLINE": "18s", "LEASEHOLD_ONCE": "true", "LEASEHOLD_GRACE": "1m",
				"LEASEHOLD_HEALTH_CMD": "true", "LEASEHOLD_HEALTH_THRESHOLD": "5",
				"LEASEHOLD_STALL_TIMEOUT": "2m", "LEASEHOLD_PROGRESS_ON_STDOUT": "1",
				"LEASEHOLD_LISTEN": ":9090", "LEASEHOLD_LOG_FORMAT": "json",
			},
			args: []string{"worker"},
			check: func(t *testing.T, o *runOptions) {
				if o.lease != "mem://b" || o.identity != "w1" || o.ttl != 30*time.Second || o.renewDeadline != 18*time.Second ||
					!o.once || o.grace != time.Minute || o.healthCmd != "true" || o.healthThreshold != 5 ||
					o.stallTimeout != 2*time.Minute || !o.progressOnStdout || o.listen != ":9090" || o.logFormat != "json" {
					t.Errorf("options from the environment: %+v", o)
				}
				if o.killMargin != 375*time.Millisecond {
					t.Errorf("kill margin %v, want half of TTL - renew interval - renew deadline (375ms)", o.killMargin)
				}
			},
		},
		{
			name: "a flag beats its variable",
			env:  map[string]string{"LEASEHOLD_LEASE": "mem://env", "LEASEHOLD_GRACE": "1s"},
			args: []string{"--lease=mem://flag", "--grace", "2s", "--", "worker"},
			check: func(t *testing.T, o *runOptions) {
				if o.lease != "mem://flag" || o.grace != 2*time.Second || o.ttl != 15*time.Second {
					t.Errorf("lease %q grace %v ttl %v, want the flags' and the default TTL", o.lease, o.grace, o.ttl)
				}
			},
		},
		{
			name: "command without --",
			args: []string{"-lease", "mem://a", "sh", "-c", "exit 0"},
			check: func(t *testing.T, o *runOptions) {
				if strings.Join(o.command, "|") != "sh|-c|exit 0" {
					t.Errorf("command %q", o.command)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := testEnv(tc.env)
			o, err := parseRun(tc.args, env)
			if err != nil {
				t.Fatalf("parseRun: %v", err)
			}
			tc.check(t, o)
		})
	}
}

func TestParseRunRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no lease", nil, []string{"--", "worker"}, "--lease (or LEASEHOLD_LEASE) is required"},
		{"no command", nil, []string{"--lease", "mem://a"}, "no command given"},
		{"no command after --", nil, []string{"--lease", "mem://a", "--"}, "no command given"},
		{"malformed duration", nil, []string{"--lease", "mem://a", "--ttl", "15", "--", "w"}, `invalid value "15" for flag --ttl: not a duration (Go syntax`},
		{"negative duration", nil, []string{"--lease", "mem://a", "--grace", "-1s", "--", "w"}, "must not be negative"},
		{"malformed variable", map[string]string{"LEASEHOLD_GRACE": "soon"}, []string{"--lease", "mem://a", "--", "w"}, `LEASEHOLD_GRACE="soon": not a duration`},
		{"malformed bool variable", map[string]string{"LEASEHOLD_ONCE": "yes please"}, []string{"--lease", "mem://a", "--", "w"}, `LEASEHOLD_ONCE="yes please"`},
		{"unknown flag", nil, []string{"--lease", "mem://a", "--frobnicate", "--", "w"}, "unknown flag --frobnicate"},
		{"once and rerun", nil, []string{"--lease", "mem://a", "--once", "--rerun", "--", "w"}, "--once and --rerun exclude each other"},
		{"period without once", nil, []string{"--lease", "mem://a", "--period", "1", "--", "w"}, "--period, --every, --retry-failed and --min-hold need --once"},
		{"min-hold without once", map[string]string{"LEASEHOLD_MIN_HOLD": "1m"}, []string{"--lease", "mem://a", "--", "w"}, "need --once"},
		{"period and every", nil, []string{"--lease", "mem://a", "--once", "--period", "1", "--every", "1h", "--", "w"}, "--period and --every exclude each other"},
		{"every-offset without every", nil, []string{"--lease", "mem://a", "--once", "--period", "1", "--every-offset", "30m", "--", "w"}, "--every-offset needs --every"},
		{"retry-failed without a period", nil, []string{"--lease", "mem://a", "--once", "--retry-failed", "--", "w"}, "--retry-failed needs --period or --every"},
		{"period key with a space", nil, []string{"--lease", "mem://a", "--once", "--period", "10:00 daily", "--", "w"}, `--period "10:00 daily" may hold only ASCII letters, digits and -._:+/@`},
		{"period key too long", nil, []string{"--lease", "mem://a", "--once", "--period", strings.Repeat("9", 65), "--", "w"}, "is 65 bytes long; at most 64"},
		{"min-hold below a millisecond", nil, []string{"--lease", "mem://a", "--once", "--min-hold", "1500us", "--", "w"}, "--min-hold (1.5ms) must be a whole number of milliseconds"},
		{"stall without progress", nil, []string{"--lease", "mem://a", "--stall-timeout", "1m", "--", "w"}, "--stall-timeout needs a progress signal"},
		{"progress without stall", nil, []string{"--lease", "mem://a", "--progress-on-stdout", "--", "w"}, "need --stall-timeout"},
		{"health tuning without a check", nil, []string{"--lease", "mem://a", "--health-interval", "1s", "--", "w"}, "need --health-cmd or --health-url"},
		{"health URL not http", nil, []string{"--lease", "mem://a", "--health-url", "localhost:8080/x", "--", "w"}, "want an http:// or https:// URL"},
		{"kill margin too large", nil, []string{"--lease", "mem://a", "--kill-margin", "15s", "--", "w"}, "--kill-margin (15s) must be less than --ttl (15s)"},
		{"bad identity", nil, []string{"--lease", "mem://a", "--identity", "caf\u00e9", "--", "w"}, "--identity: lease: Identity"},
		{"no shards", nil, []string{"--lease", "mem://a", "--shards", "0", "--", "w"}, "--shards (0) must be between 1 and 100000"},
		{"too many shards", map[string]string{"LEASEHOLD_SHARDS": "100001"}, []string{"--lease", "mem://a", "--", "w"}, "--shards (100001) must be between 1 and 100000"},
		{"shards and once", nil, []string{"--lease", "mem://a", "--shards", "4", "--once", "--", "w"}, "--once does not apply with --shards"},
		{"shards and rerun", nil, []string{"--lease", "mem://a", "--shards", "4", "--rerun", "--", "w"}, "--rerun does not apply with --shards"},
		{"shards and campaign interval", nil, []string{"--lease", "mem://a", "--shards", "4", "--campaign-interval", "1s", "--", "w"}, "--campaign-interval does not apply with --shards"},
		{"shards and cool-down", nil, []string{"--lease", "mem://a", "--shards", "4", "--cool-down", "1s", "--", "w"}, "--cool-down does not apply with --shards"},
		{"no holders", nil, []string{"--lease", "mem://a", "--holders", "0", "--", "w"}, "--holders (0) must be between 1 and 100000"},
		{"negative holders", map[string]string{"LEASEHOLD_HOLDERS": "-2"}, []string{"--lease", "mem://a", "--", "w"}, "--holders (-2) must be between 1 and 100000"},
		{"holders and shards", nil, []string{"--lease", "mem://a", "--holders", "2", "--shards", "4", "--", "w"}, "--holders (2) and --shards (4) exclude each other"},
		{"holders and once", nil, []string{"--lease", "mem://a", "--holders", "2", "--once", "--", "w"}, "--once does not apply with --holders: a group's commands run until stopped, each slot's on one instance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := testEnv(tc.env)
			_, err := parseRun(tc.args, env)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseRun: %v, want exit %d and an error containing %q", err, exitUsage, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("the error spans lines: %q", err)
			}
		})
	}
}

// flagRef is a flag or its environment variable, as error messages name them.
var flagRef = regexp.MustCompile(`--[a-z][a-z-]*|LEASEHOLD_[A-Z_]+`)

// TestParseRunNamesTheFlagGiven: every bad input is reported as the flag
// (or variable) the user gave, never as one derived from it: the first flag
// the error names is the one in the row, and every flag it names was given,
// unless the row says which it names beside them.
func TestParseRunNamesTheFlagGiven(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		flag string // the flag the error must name first
	}{
		{"renew deadline equal to the TTL", nil, []string{"--ttl", "15s", "--renew-deadline", "15s"}, "--renew-deadline"},
		{"renew deadline above the default TTL", nil, []string{"--renew-deadline", "20s"}, "--renew-deadline"},
		{"renew interval and deadline above the TTL", nil, []string{"--renew-deadline", "10s"}, "--renew-deadline"},
		{"renew interval and deadline above the TTL, both given", nil, []string{"--renew-deadline", "9s", "--renew-interval", "7s"}, "--renew-interval"},
		{"renew deadline above the TTL, from the environment", map[string]string{"LEASEHOLD_RENEW_DEADLINE": "20s"}, []string{"--ttl", "15s"}, "--renew-deadline"},
		{"renew deadline below the default renew interval", nil, []string{"--ttl", "15s", "--renew-deadline", "5s"}, "--renew-deadline"},
		{"renew deadline at the default call timeout", nil, []string{"--ttl", "15s", "--renew-deadline", "3s", "--renew-interval", "1s"}, "--renew-deadline"},
		{"renew interval at the renew deadline given", nil, []string{"--renew-deadline", "6s", "--renew-interval", "6s"}, "--renew-interval"},
		{"renew interval above the default renew deadline", nil, []string{"--ttl", "15s", "--renew-interval", "10s"}, "--renew-interval"},
		{"call timeout at the TTL", nil, []string{"--ttl", "15s", "--call-timeout", "15s"}, "--call-timeout"},
		{"call timeout above the default renew deadline", nil, []string{"--ttl", "15s", "--call-timeout", "12s"}, "--call-timeout"},
		{"health timeout above the health interval", nil, []string{"--health-cmd", "true", "--health-interval", "1s", "--health-timeout", "2s"}, "--health-timeout"},
		{"health timeout above the default health interval", nil, []string{"--health-cmd", "true", "--health-timeout", "10s"}, "--health-timeout"},
		{"kill margin at the TTL", nil, []string{"--ttl", "3s", "--kill-margin", "3s"}, "--kill-margin"},
		{"kill margin above the default TTL", nil, []string{"--kill-margin", "1m"}, "--kill-margin"},
		{"TTL zero", nil, []string{"--ttl", "0s"}, "--ttl"},
		{"TTL below a millisecond's precision", nil, []string{"--ttl", "1500us"}, "--ttl"},
		{"TTL not a duration", nil, []string{"--ttl", "15"}, "--ttl"},
		{"start timeout zero", nil, []string{"--start-timeout", "0s"}, "--start-timeout"},
		{"negative grace", nil, []string{"--grace", "-1s"}, "--grace"},
		{"malformed variable", map[string]string{"LEASEHOLD_GRACE": "soon"}, nil, "LEASEHOLD_GRACE"},
		{"health threshold zero", nil, []string{"--health-threshold", "0", "--health-cmd", "true"}, "--health-threshold"},
		{"health URL not http", nil, []string{"--health-url", "localhost:8080/x"}, "--health-url"},
		{"min hold below a millisecond", nil, []string{"--once", "--min-hold", "1500us"}, "--min-hold"},
		{"period key with a space", nil, []string{"--once", "--period", "10:00 daily"}, "--period"},
		{"every-offset without every", nil, []string{"--once", "--period", "1", "--every-offset", "30m"}, "--every-offset"},
		{"retry-failed without a period", nil, []string{"--once", "--retry-failed"}, "--retry-failed"},
		{"stall timeout without progress", nil, []string{"--stall-timeout", "1m"}, "--stall-timeout"},
		{"identity not ASCII", nil, []string{"--identity", "caf\u00e9"}, "--identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _ := testEnv(tc.env)
			args := append(append([]string{"--lease", "mem://a"}, tc.args...), "--", "w")
			_, err := parseRun(args, env)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage {
				t.Fatalf("parseRun(%q): %v, want a usage error (exit %d) naming %s", tc.args, err, exitUsage, tc.flag)
			}
			named := flagRef.FindAllString(err.Error(), -1)
			if len(named) == 0 || named[0] != tc.flag {
				t.Fatalf("parseRun(%q): %q names %q first, want %s", tc.args, err, named, tc.flag)
			}
		})
	}
}

// TestParsedTimingSuitsTheRunner: whatever timing flags leasehold run
// accepts, the runner accepts too, so that no error about a derived value
// (named as the runner's field, not as a flag) can reach the user after
// the flags were parsed.
func TestParsedTimingSuitsTheRunner(t *testing.T) {
	ds := func(s ...string) []string { return s }
	accepted := 0
	for _, ttl := range ds("3s", "15s") {
		for _, rd := range ds("", "1s", "2s", "5s", "10s", "14s") {
			for _, ri := range ds("", "500ms", "2s", "6s") {
				for _, ct := range ds("", "600ms", "3s", "9s") {
					for _, ht := range ds("", "1s", "4s") {
						args := []string{"--lease", "mem://" + memName("timing"), "--ttl", ttl}
						for _, f := range [][2]string{{"--renew-deadline", rd}, {"--renew-interval", ri}, {"--call-timeout", ct}, {"--health-timeout", ht}} {
							if f[1] != "" {
								args = append(args, f[0], f[1])
							}
						}
						if ht != "" {
							args = append(args, "--health-cmd", "true")
						}
						env, _, _ := testEnv(nil)
						o, err := parseRun(append(args, "--", "w"), env)
						if err != nil {
							continue
						}
						accepted++
						l, err := memlease.Default.Open(strings.TrimPrefix(o.lease, "mem://"), o.leaseOptions())
						if err != nil {
							t.Fatalf("%q: parseRun accepted it, lease.Open refused it: %v", args, err)
						}
						s := newSession(o, env, nil, slog.New(slog.DiscardHandler), func(error) {})
						if _, err := runner.New(s.config(l)); err != nil {
							t.Errorf("%q: parseRun accepted it, runner.New refused it: %v", args, err)
						}
					}
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("parseRun accepted none of the combinations")
	}
	t.Logf("%d combinations accepted, each by the runner too", accepted)
}

// TestOpenNamesTheFlagGiven: an option the backend refuses when the lease
// is opened is reported as the flag that set it.
func TestOpenNamesTheFlagGiven(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		flag string
	}{
		{"status: TTL below a millisecond's precision", []string{"status", "--lease", "mem://a", "--ttl", "1500us"}, "--ttl"},
		{"status: call timeout above the TTL", []string{"status", "--lease", "mem://a", "--call-timeout", "20s"}, "--call-timeout"},
		{"break: call timeout above the TTL", []string{"break", "--lease", "mem://a", "--ttl", "5s", "--call-timeout", "6s"}, "--call-timeout"},
		{"status: a TTL Cloud Storage refuses", []string{"status", "--lease", "gs://bucket/object", "--ttl", "2s"}, "--ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := leasehold(t, t.Context(), tc.args...)
			lines := errorLines(stderr)
			if code != exitConfig || len(lines) != 1 {
				t.Fatalf("exit %d, error lines %q; want %d and one line naming %s", code, lines, exitConfig, tc.flag)
			}
			if named := flagRef.FindAllString(lines[0], -1); len(named) == 0 || named[0] != tc.flag {
				t.Fatalf("%q names %q first, want %s", lines[0], named, tc.flag)
			}
		})
	}
}

// TestEmptyPeriodIsRefused: leasehold run --once --period "$TICK" with TICK
// unset ran the command with no period at all, so that two triggers of one
// tick both ran it. An empty period, on the command line or in
// LEASEHOLD_PERIOD, is refused before anything runs, naming both; with
// --retry-failed too, whose message blamed a --period missing.
func TestEmptyPeriodIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{`--period ""`, nil, []string{"--period", ""}},
		{`--period "" --retry-failed`, nil, []string{"--period", "", "--retry-failed"}},
		{`LEASEHOLD_PERIOD=""`, map[string]string{"LEASEHOLD_PERIOD": ""}, nil},
		{`LEASEHOLD_PERIOD="" --retry-failed`, map[string]string{"LEASEHOLD_PERIOD": ""}, []string{"--retry-failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := filepath.Join(t.TempDir(), "ran")
			env, _, stderr := testEnv(tc.env)
			args := append([]string{"run", "--once", "--lease", "mem://" + memName("empty-period")}, tc.args...)
			code := mainWith(t.Context(), nil, append(args, "--", "touch", ran), env)
			_, err := os.Stat(ran)
			if code != exitUsage || err == nil || !strings.Contains(stderr.String(), "leave --period out, and LEASEHOLD_PERIOD unset") || strings.Contains(stderr.String(), "needs --period") {
				t.Fatalf("leasehold run --once %q with %q: exit %d, the command ran: %t; want exit %d, refused naming --period and LEASEHOLD_PERIOD; stderr:\n%s",
					tc.args, tc.env, code, err == nil, exitUsage, stderr)
			}
		})
	}
}
