//go:build unix

package main

import (
	"errors"
	"strings"
	"testing"
	"time"
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
				if o.ttl != 15*time.Second || o.grace != 10*time.Second || o.killMargin != 2500*time.Millisecond || o.startTimeout != 10*time.Second {
					t.Errorf("ttl %v grace %v kill margin %v start timeout %v, want 15s 10s 2.5s 10s", o.ttl, o.grace, o.killMargin, o.startTimeout)
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
				"LEASEHOLD_RENEW_DEADLINE": "20s", "LEASEHOLD_ONCE": "true", "LEASEHOLD_GRACE": "1m",
				"LEASEHOLD_HEALTH_CMD": "true", "LEASEHOLD_HEALTH_THRESHOLD": "5",
				"LEASEHOLD_STALL_TIMEOUT": "2m", "LEASEHOLD_PROGRESS_ON_STDOUT": "1",
				"LEASEHOLD_LISTEN": ":9090", "LEASEHOLD_LOG_FORMAT": "json",
			},
			args: []string{"worker"},
			check: func(t *testing.T, o *runOptions) {
				if o.lease != "mem://b" || o.identity != "w1" || o.ttl != 30*time.Second || o.renewDeadline != 20*time.Second ||
					!o.once || o.grace != time.Minute || o.healthCmd != "true" || o.healthThreshold != 5 ||
					o.stallTimeout != 2*time.Minute || !o.progressOnStdout || o.listen != ":9090" || o.logFormat != "json" {
					t.Errorf("options from the environment: %+v", o)
				}
				if o.killMargin != 5*time.Second {
					t.Errorf("kill margin %v, want half of TTL - renew deadline (5s)", o.killMargin)
				}
			},
		},
		{
			name: "a flag beats its variable, an empty variable is unset",
			env:  map[string]string{"LEASEHOLD_LEASE": "mem://env", "LEASEHOLD_TTL": "", "LEASEHOLD_GRACE": "1s"},
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
		{"kill margin too large", nil, []string{"--lease", "mem://a", "--kill-margin", "15s", "--", "w"}, "--kill-margin (15s) must be positive and less than --ttl (15s)"},
		{"bad identity", nil, []string{"--lease", "mem://a", "--identity", "caf\u00e9", "--", "w"}, "--identity: lease: Identity"},
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
