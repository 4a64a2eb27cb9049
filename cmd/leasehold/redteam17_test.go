//go:build unix

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam17QuorumURLPasswordsRedacted: a quorum URL is a URL of URLs,
// "quorum:" and its members' joined by commas, and lease.RedactURL, which
// every message that quotes a lease URL goes through, saw only the outer,
// opaque URL: a member's password (s3://user:pw@bucket/key, refused by the
// backend, but quoted first) went out whole in leasehold run's first log
// line, in check's and status's "lease" row (red team 17).
func TestRedTeam17QuorumURLPasswordsRedacted(t *testing.T) {
	const secret = "hunter2"
	for _, u := range []string{
		"quorum:s3://AKIA:" + secret + "@b/k,s3://b2/k,s3://b3/k",
		"quorum:mem://a,mem://b,s3://AKIA:" + secret + "@b/k",
		"quorum:mem://a?x=1,s3://AKIA:" + secret + "@b/k,mem://c",
	} {
		if got := lease.RedactURL(u); strings.Contains(got, secret) {
			t.Errorf("RedactURL(%q) = %q: the member's password is in it", u, got)
		}
	}

	// run: the first log line quotes the lease before any member is opened.
	q := "quorum:s3://AKIA:" + secret + "@b/k,s3://b2/k,s3://b3/k"
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true"); code != exitConfig || strings.Contains(stderr, secret) {
		t.Errorf("run on a quorum whose member carries a password: exit %d (want %d), and its stderr must not show the password:\n%s", code, exitConfig, stderr)
	}
	// status and check: the lease row (mem ignores user info, so they run).
	mq := "quorum:mem://op:" + secret + "@" + memName("ra") + ",mem://" + memName("rb") + ",mem://" + memName("rc")
	for _, args := range [][]string{{"status", "--lease", mq}, {"status", "--lease", mq, "-o", "json"}, {"check", "--lease", mq, "--ttl", "2s"}} {
		env, stdout, stderr := testEnv(nil)
		mainWith(context.Background(), nil, args, env)
		if out := stdout.String() + stderr.String(); strings.Contains(out, secret) || !strings.Contains(out, "mem://op:xxxxx@") {
			t.Errorf("leasehold %s: want the member's password shown as xxxxx, never itself:\n%s", strings.Join(args, " "), out)
		}
	}
}
