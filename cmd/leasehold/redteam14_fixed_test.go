//go:build unix

package main

// Red team 14's findings in the CLI, fixed: each test failed before its fix.

import (
	"context"
	"strings"
	"testing"
)

// TestRedTeam14HugeTTLBlamesAFlagNotGiven (rule 8, and the runner's
// "messages that name the field and the values"): a --ttl above about
// 853,000h overflows the defaults derived from it (3/8, 9/16 of the TTL
// in nanoseconds), and run, status and check refuse it by blaming
// --renew-interval, which was not given, with a negative value: "--renew-
// interval (-265511h56m49.213693952s) must be at least 1ms and less than
// --ttl (1000000h0m0s)". (Just below, check's ttl verdict compares a
// renew interval of 300000h with a renew deadline of 129744h.)
func TestRedTeam14HugeTTLBlamesAFlagNotGiven(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--once", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--", "true"},
		{"status", "--lease", "mem://rt14-huge", "--ttl", "1000000h"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--start-timeout", "1ms"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "800000h", "--start-timeout", "1ms"},
	} {
		env, stdout, stderr := testEnv(nil)
		code := mainWith(context.Background(), nil, args, env)
		msg := stdout.String() + stderr.String()
		if code == 0 || strings.Contains(msg, "renew-interval") || strings.Contains(msg, "(-") {
			t.Errorf("leasehold %s: exit %d; the refusal blames a flag not given, or a negative value:\n%s", strings.Join(args, " "), code, msg)
		}
	}
}
