//go:build unix

package main

import (
	"context"
	"encoding/json"
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

// TestRedTeam17QuorumSchemeAnyCase: URL schemes are case-insensitive, and
// lease.Open opens "QUORUM:..." as the quorum it is; check and --shards
// told a quorum by the prefix "quorum:" alone. So check of "QUORUM:s3://a/k,..."
// checked the quorum as one lease of an unknown store ("the backend does
// not describe its store"): no member's conditional writes probed (rule
// 9), no credentials checked, no cost, and it passed; and run --shards
// gave a shard-store error for the refusal that names the quorum (red
// team 17).
func TestRedTeam17QuorumSchemeAnyCase(t *testing.T) {
	for _, scheme := range []string{"QUORUM", "Quorum"} {
		q := scheme + ":mem://" + memName("ua") + ",mem://" + memName("ub") + ",mem://" + memName("uc")
		env, stdout, stderr := testEnv(nil)
		if code := mainWith(context.Background(), nil, []string{"check", "--lease", q, "--ttl", "2s", "-o", "json"}, env); code != 0 {
			t.Fatalf("check %s: exit %d\n%s", q, code, stderr)
		}
		var rep checkReport
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, c := range rep.Checks {
			names[c.Check] = true
		}
		for _, want := range []string{"member 1 conditional writes", "member 2 permissions", "member 3 store"} {
			if !names[want] {
				t.Errorf("check %s: no %q among %v: the quorum was not checked member by member", q, want, names)
			}
		}
		code, errs := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", q, "--ttl", "2s", "--start-timeout", "1s", "--", "true")
		if code != exitConfig || !strings.Contains(errs, "is a quorum: --shards works on one store's URL") {
			t.Errorf("run --shards on %s: exit %d, want %d and the refusal that names the quorum\n%s", q, code, exitConfig, errs)
		}
	}
}
