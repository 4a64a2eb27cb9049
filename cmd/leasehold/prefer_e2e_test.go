//go:build linux

package main

import (
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// TestEndToEndPrefer: a rolling deploy on MinIO. Three instances run with
// --prefer 1; then each is replaced by one with --prefer 2, the new one
// started before the old one is stopped: leadership moves once, from the
// old leader to the first new instance, whose command starts only after
// the old one's has ended (it had SIGTERM first), with a greater token; no
// two commands ever run at once.
func TestEndToEndPrefer(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	run := func(who, prefer string) *proc {
		return e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--prefer", prefer, "--", e.script)
	}
	olds := []*proc{run("old-1", "1"), run("old-2", "1"), run("old-3", "1")}
	first := e.waitSpans(1, 20*time.Second)[0]
	time.Sleep(e2eTTL)
	for i, who := range []string{"new-1", "new-2", "new-3"} {
		run(who, "2")
		time.Sleep(2 * e2eTTL)
		olds[i].signal(syscall.SIGTERM)
		if code := olds[i].wait(t, 15*time.Second); code != 0 {
			t.Errorf("old-%d exited %d after SIGTERM, want 0; stderr:\n%s", i+1, code, olds[i].stderr)
		}
		time.Sleep(e2eTTL)
	}
	spans := e.spans()
	if len(spans) != 2 || spans[0].who != first.who || spans[1].who != "new-1" || !spans[0].ended {
		t.Fatalf("runs of the command %+v: want %s's, ended by SIGTERM, then new-1's", spans, first.who)
	}
	t.Logf("handoff: %s's command ended; new-1's started %s later", first.who, ms(spans[1].start-spans[0].end))
	for _, p := range olds {
		if p.name == first.who && !strings.Contains(p.stderr.String(), `reason="handed off"`) {
			t.Errorf("%s did not log a handoff:\n%s", p.name, p.stderr)
		}
	}
	e.checkNoOverlap()
}

// TestEndToEndHandoff: leasehold handoff on MinIO. Three instances with the
// same --prefer; handoff --to one of the followers moves leadership to it,
// the old leader's command ended first; handoff without --to moves it to
// another instance; a leader without --prefer is refused (exit 78), as is
// a lease nobody holds (exit 69).
func TestEndToEndHandoff(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	code, stderr := e.run(30*time.Second, "handoff", "--lease", url)
	if code != exitUnavailable || !strings.Contains(stderr, "nobody leads") {
		t.Errorf("handoff of a lease nobody holds: exit %d, %q; want %d, nobody leads", code, stderr, exitUnavailable)
	}
	for _, who := range []string{"i1", "i2", "i3"} {
		e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--prefer", "7", "--", e.script)
	}
	first := e.waitSpans(1, 20*time.Second)[0]
	time.Sleep(e2eTTL)
	to := "i1"
	if first.who == to {
		to = "i2"
	}
	code, stderr = e.run(time.Minute, "handoff", "--lease", url, "--to", to, "--ttl", e2eTTL.String())
	if code != 0 {
		t.Fatalf("handoff --to %s: exit %d; stderr:\n%s", to, code, stderr)
	}
	spans := e.waitSpans(2, 10*time.Second)
	if spans[1].who != to || !spans[0].ended {
		t.Fatalf("runs %+v: want %s's ended by SIGTERM, then %s's", spans, first.who, to)
	}
	t.Logf("handoff --to: %s's command ended; %s's started %s later", first.who, to, ms(spans[1].start-spans[0].end))
	time.Sleep(e2eTTL)
	code, stderr = e.run(time.Minute, "handoff", "--lease", url, "--ttl", e2eTTL.String())
	if code != 0 {
		t.Fatalf("handoff to any other: exit %d; stderr:\n%s", code, stderr)
	}
	spans = e.waitSpans(3, 10*time.Second)
	if spans[2].who == to {
		t.Errorf("runs %+v: want another instance than %s to lead after handoff without --to", spans, to)
	}
	e.checkNoOverlap()

	plain := e.leaseURL(e.endpoint)
	e.start("p1", "run", "--lease", plain, "--identity", "p1", "--ttl", e2eTTL.String(), "--", "sleep", "600")
	eventually(t, 20*time.Second, "p1 leads", func() bool {
		p := e.start("status", "status", "--lease", plain, "-o", "json")
		p.wait(t, 20*time.Second)
		return strings.Contains(p.stdout.String(), `"holder": "p1"`)
	})
	code, stderr = e.run(30*time.Second, "handoff", "--lease", plain)
	if code != exitConfig || !strings.Contains(stderr, "without --prefer") {
		t.Errorf("handoff of a leader without --prefer: exit %d, %q; want %d, without --prefer", code, stderr, exitConfig)
	}
}

// TestStatusShowsHandoff: leasehold status of a lease handed to another
// instance names the successor, and the holder's --prefer, and says that
// the successor takes it at once while the others wait.
func TestStatusShowsHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		url := "mem://" + memName("handoff")
		a := openLeaseAs(t, url, "a", e2eTTL)
		term, err := a.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if term, err = a.Renew(t.Context(), term.Annotate(runner.AnnotationPrefer, "7")); err != nil {
			t.Fatal(err)
		}
		if err := a.(lease.Handoffer).ReleaseTo(t.Context(), term, "b"); err != nil {
			t.Fatal(err)
		}
		code, rep, stderr := reportJSON[statusReport](t, "status", "--lease", url, "--ttl", e2eTTL.String())
		if code != 0 || rep.State != "held" || rep.Successor != "b" || rep.Prefer != "7" || !strings.Contains(rep.Meaning, "handed by a to b") {
			t.Errorf("status of a lease handed to b: exit %d, %+v; stderr:\n%s", code, rep, stderr)
		}
	})
}
