//go:build linux

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// handoffJSON runs leasehold handoff -o json with args on the e2e setup
// and returns its exit status, its report and its stderr.
func (e *e2e) handoffJSON(limit time.Duration, args ...string) (int, handoffReport, string) {
	e.t.Helper()
	p := e.start("leasehold handoff", append([]string{"handoff", "-o", "json"}, args...)...)
	code := p.wait(e.t, limit)
	var rep handoffReport
	if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil {
		e.t.Fatalf("handoff: exit %d, not a JSON report (%v):\n%s\nstderr:\n%s", code, err, p.stdout, p.stderr)
	}
	return code, rep, p.stderr.String()
}

// TestRedTeam29HandoffBadTo: --to with a control byte, longer than an
// identity may be, or empty, is bad flags (exit 64), refused before
// anything is written. Holds.
func TestRedTeam29HandoffBadTo(t *testing.T) {
	url := "mem://" + memName("rt29")
	for _, to := range []string{"b\x1b[2J", strings.Repeat("x", 300), ""} {
		code, stderr := leasehold(t, context.Background(), "handoff", "--lease", url, "--to", to)
		if code != exitUsage {
			t.Errorf("handoff --to %q: exit %d, want %d; stderr:\n%s", to, code, exitUsage, stderr)
		}
	}
}

// TestRedTeam29HandoffUnderTheLeadersIdentity: leasehold handoff run with
// the leader's identity (its default in the leader's own container: an
// operator who execs into it) hands the lease over like any other. Failed
// (exit 75 after --timeout, the leader ignoring a request held under its
// identity) before e5330d8. Holds.
func TestRedTeam29HandoffUnderTheLeadersIdentity(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	for _, who := range []string{"i1", "i2"} {
		e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--prefer", "7", "--", e.script)
	}
	first := e.waitSpans(1, 20*time.Second)[0]
	time.Sleep(e2eTTL)
	code, rep, stderr := e.handoffJSON(time.Minute, "--lease", url, "--identity", first.who, "--ttl", e2eTTL.String())
	if code != 0 || rep.From != first.who || rep.To == first.who || rep.To == "" {
		t.Errorf("handoff --identity %s (the leader's): exit %d, %+v; want 0, from %s to the other; stderr:\n%s", first.who, code, rep, first.who, stderr)
	}
	e.checkNoOverlap()
}
