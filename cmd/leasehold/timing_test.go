//go:build unix

package main

import (
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestHelpSaysTheRunnersDefaults: every share of the TTL that help prints
// is the runner's own (runner.Config.Resolve), read back from the text.
func TestHelpSaysTheRunnersDefaults(t *testing.T) {
	const ttl = 48 * time.Second
	res, err := runner.Config{}.Resolve(lease.Options{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	help := func(args ...string) string {
		env, stdout, _ := testEnv(nil)
		mainWith(context.Background(), nil, args, env)
		return stdout.String()
	}
	run, status, check, brk := help("run", "--help"), help("status", "--help"), help("check", "--help"), help("break", "--help")
	for _, tc := range []struct {
		name, text, pattern string
		want                time.Duration
	}{
		{"run --renew-interval", run, `--renew-interval duration\n.*\n.*default (\d+)/(\d+) of TTL`, res.RenewInterval},
		{"run --renew-deadline", run, `--renew-deadline duration\n.*\n.*default (\d+)/(\d+) of TTL`, res.RenewDeadline},
		{"run --campaign-interval", run, `--campaign-interval duration\n.*\n.*default (\d+)/(\d+) of TTL`, res.CampaignInterval},
		{"status", status, `every (\d+)/(\d+) of the TTL or so`, res.RenewInterval},
		{"check's renewals", check, `renew every (\d+)/(\d+) of\s+the TTL`, res.RenewInterval},
		{"break", brk, `within (\d+)/(\d+) of its TTL at the defaults`, res.RenewInterval},
	} {
		m := regexp.MustCompile(tc.pattern).FindStringSubmatch(tc.text)
		if m == nil {
			t.Errorf("%s: the help has no %q", tc.name, tc.pattern)
			continue
		}
		num, _ := strconv.Atoi(m[1])
		den, _ := strconv.Atoi(m[2])
		if got := ttl * time.Duration(num) / time.Duration(den); got != tc.want {
			t.Errorf("%s: the help says %s/%s, which is %v at TTL %v; the runner's is %v", tc.name, m[1], m[2], got, ttl, tc.want)
		}
	}
}

// TestRunUsesTheRunnersTiming: what leasehold run derives from the
// runner's timing (the default kill margin, --once's timeout) is what the runner resolves the run's
// configuration to, whatever timing flags are given.
func TestRunUsesTheRunnersTiming(t *testing.T) {
	for _, flags := range [][]string{
		nil,
		{"--ttl", "30s"},
		{"--ttl", "20s", "--renew-interval", "4s", "--renew-deadline", "12s", "--campaign-interval", "2s"},
		{"--ttl", "3s", "--once", "--start-timeout", "1s"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			env, _, _ := testEnv(nil)
			o, err := parseRun(append(append([]string{"--lease", "mem://" + memName("timing")}, flags...), "--", "w"), env)
			if err != nil {
				t.Fatal(err)
			}
			l, err := memlease.Default.Open(strings.TrimPrefix(o.lease, "mem://"), o.leaseOptions())
			if err != nil {
				t.Fatal(err)
			}
			s := newSession(o, env, nil, slog.New(slog.DiscardHandler), func(error) {})
			cfg := s.config(l)
			res, err := cfg.Resolve(l.Options())
			if err != nil {
				t.Fatal(err)
			}
			cfg.OnceTimeout = 0
			byDefault, err := cfg.Resolve(l.Options())
			if err != nil {
				t.Fatal(err)
			}
			if want := max(res.Margin()/2, time.Millisecond); o.killMargin != want {
				t.Errorf("kill margin %v, want half the runner's Margin (%v): %v", o.killMargin, res.Margin(), want)
			}
			if want := byDefault.OnceTimeout + o.startTimeout; res.OnceTimeout != want {
				t.Errorf("OnceTimeout %v, want the runner's default plus --start-timeout: %v", res.OnceTimeout, want)
			}
			if o.timing.RenewInterval != res.RenewInterval || o.timing.CampaignInterval != res.CampaignInterval || o.timing.LeaseOptions.TTL != res.LeaseOptions.TTL {
				t.Errorf("leasehold run resolved %+v, the runner %+v", o.timing, res)
			}
		})
	}
}
