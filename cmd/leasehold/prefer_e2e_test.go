//go:build linux

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
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
