//go:build linux

package main

import (
	"testing"
	"time"
)

// TestRedTeam32HandoffOfAStubbornCommand (holds): on MinIO, leasehold
// handoff --to f1 while the leader's command ignores SIGTERM and --grace
// (4 s) is longer than the TTL: the lease stays renewed through the grace
// period, the command is killed, and f1's command starts only after the
// old one's last tick; handoff reports the lease handed to f1 (exit 0)
// within its --timeout.
func TestRedTeam32HandoffOfAStubbornCommand(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	e.start("s1", "run", "--lease", url, "--identity", "s1", "--ttl", e2eTTL.String(), "--grace", "4s", "--prefer", "7", "--", e.script, "ignore-term")
	first := e.waitSpans(1, 20*time.Second)[0]
	for _, who := range []string{"f1", "f2"} {
		e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "4s", "--prefer", "7", "--", e.script)
	}
	time.Sleep(e2eTTL)
	code, rep, stderr := e.handoffJSON(time.Minute, "--lease", url, "--to", "f1", "--timeout", "30s")
	if code != 0 || rep.From != first.who || rep.To != "f1" {
		t.Errorf("handoff --to f1 of a command that ignores SIGTERM: exit %d, %+v; want 0, %s to f1; stderr:\n%s", code, rep, first.who, stderr)
	}
	spans := e.waitSpans(2, 20*time.Second)
	if spans[1].who != "f1" || spans[1].token <= spans[0].token {
		t.Errorf("runs %+v: want f1's after %s's, with a greater token", spans, first.who)
	}
	e.checkNoOverlap()
}
