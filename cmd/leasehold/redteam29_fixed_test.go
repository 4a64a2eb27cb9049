//go:build linux

package main

import (
	"context"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam29HandoffToItselfExits0: handoff without --to when the leader
// is the only instance: it releases the lease, cools down (--cool-down,
// a TTL by default) and takes it back, within handoff's default --timeout
// of 3 TTLs; handoff reports "handed over: i1 (token N) -> i1 (token N+1)"
// and exits 0, where the help says "0 when another instance leads" (75:
// the leader did not hand the lease over). Fixed: without --to, handoff
// waits for another holder than the leader it found.
func TestRedTeam29HandoffToItselfExits0(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	e.start("i1", "run", "--lease", url, "--identity", "i1", "--ttl", e2eTTL.String(), "--prefer", "7", "--", e.script)
	e.waitSpans(1, 20*time.Second)
	time.Sleep(e2eTTL)
	code, rep, stderr := e.handoffJSON(time.Minute, "--lease", url, "--ttl", e2eTTL.String())
	if code == 0 || rep.To == "i1" {
		t.Errorf("handoff with i1 alone: exit %d, %+v: want not 0, not handed to i1 itself; stderr:\n%s", code, rep, stderr)
	}
}

// TestRedTeam29HandoffToStar: --to '*' passes as an identity, and is
// written as the request for any other instance: handoff waits for an
// instance named "*", renewing the request, so every leader in turn hands
// the lease over (3 moves in the 9 s --timeout, a ping-pong), and it exits
// 75 ("did not hand the lease over"). Want it refused as bad flags (64),
// or taken as no --to (0). Fixed: refused (64).
func TestRedTeam29HandoffToStar(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	for _, who := range []string{"i1", "i2"} {
		e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--prefer", "7", "--", e.script)
	}
	e.waitSpans(1, 20*time.Second)
	time.Sleep(e2eTTL)
	code, stderr := e.run(time.Minute, "handoff", "--lease", url, "--to", "*", "--ttl", e2eTTL.String())
	spans := e.spans()
	if code != 0 && code != exitUsage {
		t.Errorf("handoff --to '*': exit %d, leadership moved %d times; want 0 or %d; stderr:\n%s", code, len(spans)-1, exitUsage, stderr)
	}
	e.checkNoOverlap()
}

// TestRedTeam29HandoffOfALeaderWithoutPreferAfterOneWith: i1 (--prefer)
// leads and stops; p1, run without --prefer, takes the lease, and its
// record carries i1's runner/prefer over (runner/redteam29open_test.go's
// TestRedTeam29CarriedPreferOnALeaderWithoutPrefer). handoff takes p1 for
// a leader with --prefer, writes a request p1 never reads, and exits 75
// after --timeout, where the help says 78 for a leader without --prefer.
// Fixed: every runner writes its own Prefer, or none.
func TestRedTeam29HandoffOfALeaderWithoutPreferAfterOneWith(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	i1 := e.start("i1", "run", "--lease", url, "--identity", "i1", "--ttl", e2eTTL.String(), "--prefer", "7", "--", e.script)
	e.waitSpans(1, 20*time.Second)
	e.start("p1", "run", "--lease", url, "--identity", "p1", "--ttl", e2eTTL.String(), "--", e.script)
	time.Sleep(e2eTTL)
	i1.signal(syscall.SIGTERM)
	i1.wait(t, 15*time.Second)
	if spans := e.waitSpans(2, 20*time.Second); spans[1].who != "p1" {
		t.Fatalf("runs %+v: want p1 leading after i1", spans)
	}
	code, stderr := e.run(time.Minute, "handoff", "--lease", url, "--ttl", e2eTTL.String())
	if code != exitConfig {
		t.Errorf("handoff of p1, run without --prefer: exit %d, want %d (without --prefer); stderr:\n%s", code, exitConfig, stderr)
	}
}

// TestRedTeam29StatusDuringAHandoff: while a handoff waits for its
// successor (the leader's ReleaseTo, before the one named takes it; a TTL
// when that one has gone), leasehold status says "held: held by a (read
// once: use --watch 3s to see whether it is renewed)": a, which has let
// go, and not b, which alone may take it at once (every other waits a
// TTL). Fixed: status names the successor (9345030).
func TestRedTeam29StatusDuringAHandoff(t *testing.T) {
	name := memName("rt29-status")
	l, err := lease.Open(context.Background(), "mem://"+name, lease.Options{Identity: "a", TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	term, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(lease.Handoffer).ReleaseTo(context.Background(), term, "b"); err != nil {
		t.Fatal(err)
	}
	_, rep, _ := statusJSON(t, "--lease", "mem://"+name)
	if !regexp.MustCompile(`\bb\b`).MatchString(rep.Meaning) {
		t.Errorf("status of a lease handed to b: %s: %q; want b named as the only one that takes it at once", rep.State, rep.Meaning)
	}
}
