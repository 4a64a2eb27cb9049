//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndToEndJobControl: Ctrl-Z (SIGTSTP) stops the leader's leasehold;
// its command must stop with it, or it would run on without renewals while
// another instance takes the lease over after the TTL. Two `leasehold run`
// on MinIO: the leader's wrapper gets SIGTSTP; its command's last tick must
// come before the follower's command starts, and once the wrapper is
// continued (past its term) the old command is killed without running
// again.
func TestEndToEndJobControl(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTSTP, syscall.SIGTTOU} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newE2E(t)
			url := e.leaseURL(e.endpoint)
			ttl := "--ttl=" + e2eTTL.String()
			leader := e.start("leader", "run", "--lease", url, "--identity", "leader", ttl, "--", e.script)
			first := e.waitSpans(1, 20*time.Second)[0]
			follower := e.start("follower", "run", "--lease", url, "--identity", "follower", ttl, "--", e.script)
			time.Sleep(e2eTTL) // the follower is watching the leader's renewals

			stopAt := monotonic()
			leader.signal(sig)
			if !within(2*time.Second, func() bool { return isStopped(first.pid) }) {
				t.Errorf("the leader's command was not stopped with its leasehold")
			}
			spans := e.waitSpans(2, 20*time.Second)
			old, next := spans[0], spans[1]
			t.Logf("%v: the leader's command last ticked %s after it; the follower's started %s after it",
				sig, ms(old.end-stopAt), ms(next.start-stopAt))
			if next.who != "follower" || old.token != first.token {
				t.Fatalf("journal %+v: want the leader's run, then the follower's", spans)
			}
			e.checkNoOverlap()

			lastTick := old.end
			leader.signal(syscall.SIGCONT)
			eventually(t, 5*time.Second, "the old command killed once its leasehold continued", func() bool { return !alive(first.pid) })
			time.Sleep(500 * time.Millisecond)
			if spans := e.spans(); spans[0].end != lastTick || len(spans) != 2 {
				t.Errorf("the old command wrote after its leasehold was continued: journal %+v", spans)
			}
			e.checkNoOverlap()
			if log := leader.stderr.String(); !strings.Contains(log, "stopped by job control") || !strings.Contains(log, "past the term's deadline") {
				t.Errorf("the leader did not log the stop and the judgement on continuing:\n%s", log)
			}
			for _, p := range []*proc{leader, follower} {
				p.signal(syscall.SIGTERM)
				if code := p.wait(t, 15*time.Second); code != 0 {
					t.Errorf("%s exited %d after SIGTERM, want 0", p.name, code)
				}
			}
		})
	}
}

// TestEndToEndJobControlWithinTheTerm: a stop shorter than the renew
// deadline leaves the term running: once continued, the command is
// continued too, and keeps leading.
func TestEndToEndJobControlWithinTheTerm(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	leader := e.start("leader", "run", "--lease", url, "--identity", "leader", "--ttl=6s", "--", e.script)
	first := e.waitSpans(1, 20*time.Second)[0]
	time.Sleep(2 * time.Second) // a renewal: the 4s renew deadline now counts from it
	leader.signal(syscall.SIGTSTP)
	eventually(t, 2*time.Second, "the leader's command stopped", func() bool { return isStopped(first.pid) })
	before := e.spans()[0].end
	time.Sleep(300 * time.Millisecond)
	if after := e.spans()[0].end; after != before {
		t.Fatalf("the command ticked while stopped")
	}
	leader.signal(syscall.SIGCONT)
	eventually(t, 2*time.Second, "the command ticks again", func() bool { return e.spans()[0].end > before })
	time.Sleep(4 * time.Second) // past the renew deadline of the stop
	spans := e.spans()
	if len(spans) != 1 || !alive(first.pid) || time.Duration(monotonic()-spans[0].end) > time.Second {
		t.Fatalf("after a short stop the command should lead on: journal %+v, alive %v", spans, alive(first.pid))
	}
	leader.signal(syscall.SIGTERM)
	if code := leader.wait(t, 15*time.Second); code != 0 {
		t.Errorf("leader exited %d after SIGTERM, want 0", code)
	}
}

// within reports whether cond became true within limit, polling.
func within(limit time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// isStopped reports whether process pid is stopped by a signal: in state
// T, or in state D with a child in state T: a shell that started its child
// with vfork waits in D until the child, stopped with it, has run exec.
func isStopped(pid int) bool {
	switch procState(pid) {
	case 'T':
		return true
	case 'D':
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, f := range strings.Fields(string(kids)) {
			if k, err := strconv.Atoi(f); err == nil && procState(k) == 'T' {
				return true
			}
		}
	}
	return false
}

// procState is the state letter of process pid (R, S, T, Z, ...), or 0.
func procState(pid int) byte {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2]
	}
	return 0
}
