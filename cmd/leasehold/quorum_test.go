//go:build unix

package main

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRunOnAQuorum: leasehold run leads on a quorum of stores as on one,
// and --shards, not built over a quorum yet, is refused by name.
func TestRunOnAQuorum(t *testing.T) {
	q := "quorum:mem://" + memName("qa") + ",mem://" + memName("qb") + ",mem://" + memName("qc")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true"); code != 0 {
		t.Fatalf("run --once on a quorum: exit %d\n%s", code, stderr)
	}
	code, stderr := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", q, "--ttl", "2s", "--", "true")
	if code == 0 || !strings.Contains(stderr, "is a quorum: --shards works on one store's URL") {
		t.Errorf("run --shards on a quorum: exit %d, want a refusal that says so\n%s", code, stderr)
	}
}

// TestStatusOfAQuorum: status shows the quorum's holder and each member's.
func TestStatusOfAQuorum(t *testing.T) {
	q, names, _ := liveQuorumLeader(t, "s")
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", q}, env); code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	out := stdout.String()
	for _, want := range []string{"holder         leader-1", "token          1", "member 1 (mem://" + names[0] + ") held by leader-1 (its token 1, quorum token 1)", "member 3 (mem://" + names[2] + ") held by leader-1"} {
		if !strings.Contains(out, want) {
			t.Errorf("status of a quorum: want %q in\n%s", want, out)
		}
	}
}

// TestCheckOfAQuorum: check checks every member and prices the quorum as
// its members added up.
func TestCheckOfAQuorum(t *testing.T) {
	q := "quorum:mem://" + memName("ca") + ",mem://" + memName("cb") + ",mem://" + memName("cc")
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"check", "--lease", q, "--ttl", "2s", "-o", "json"}, env); code != 0 {
		t.Fatalf("check of a quorum: exit %d\n%s", code, stderr)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var cost *costFigures
	for _, c := range rep.Checks {
		names[c.Check] = true
		if c.Check == "cost" {
			cost = c.Cost
		}
	}
	for _, want := range []string{"member 1 store", "member 2 permissions", "member 3 conditional writes", "cost"} {
		if !names[want] {
			t.Errorf("check of a quorum: no %q among %v", want, names)
		}
	}
	env, one, _ := testEnv(nil)
	mainWith(context.Background(), nil, []string{"check", "--lease", "mem://" + memName("single"), "--ttl", "2s", "-o", "json"}, env)
	var single checkReport
	if err := json.Unmarshal([]byte(one.String()), &single); err != nil {
		t.Fatal(err)
	}
	want := single.Checks[len(single.Checks)-1].Cost
	if !rep.OK || cost == nil || want == nil || cost.LeaderRequestsPerHour != 3*want.LeaderRequestsPerHour || cost.FollowerRequestsPerHour != 3*want.FollowerRequestsPerHour {
		t.Errorf("the quorum's cost %+v (ok %t), want three times one lease's %+v", cost, rep.OK, want)
	}
	if code, stderr := leasehold(t, context.Background(), "check", "--lease", "quorum:mem://a,mem://a,mem://b"); code != exitConfig || !strings.Contains(stderr, "names the same store and key as member 1") {
		t.Errorf("check of a quorum naming one member twice: exit %d, want %d\n%s", code, exitConfig, stderr)
	}
}

// TestPreferAndHandoffOnAQuorum: run --prefer on a quorum opens the
// quorum of its members' candidates' keys, so a better instance takes
// leadership over from the leader, with a greater token, and leasehold
// handoff --to moves it on to the instance named.
func TestPreferAndHandoffOnAQuorum(t *testing.T) {
	q := "quorum:mem://" + memName("pa") + ",mem://" + memName("pb") + ",mem://" + memName("pc")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stderrs := map[string]*string{}
	run := func(who, prefer string) {
		out := new(string)
		stderrs[who] = out
		wg.Go(func() {
			_, *out = leasehold(t, ctx, "run", "--lease", q, "--identity", who, "--ttl", "2s", "--grace", "5s", "--prefer", prefer, "--", "sleep", "600")
		})
	}
	defer func() { cancel(); wg.Wait() }()
	watcher := openLeaseAs(t, q, "watcher", 2*time.Second)
	leads := func(who string) lease.Record {
		t.Helper()
		var rec lease.Record
		eventually(t, 30*time.Second, who+" leads", func() bool {
			r, err := watcher.Observe(ctx)
			rec = r
			return err == nil && r.Holder == who && !r.Released
		})
		return rec
	}
	run("old", "1")
	first := leads("old")
	run("new", "2")
	second := leads("new")
	if second.Token <= first.Token {
		t.Errorf("new's token %d after old's %d: want greater", second.Token, first.Token)
	}
	run("peer", "2")
	time.Sleep(2 * time.Second) // peer's candidacy starts; it does not announce itself to an equal
	code, stderr := leasehold(t, ctx, "handoff", "--lease", q, "--to", "peer", "--ttl", "2s")
	if code != 0 {
		t.Fatalf("handoff --to peer: exit %d; stderr:\n%s", code, stderr)
	}
	if third := leads("peer"); third.Token <= second.Token {
		t.Errorf("peer's token %d after new's %d: want greater", third.Token, second.Token)
	}
	cancel()
	wg.Wait()
	for _, who := range []string{"old", "new"} {
		if !strings.Contains(*stderrs[who], `reason="handed off"`) {
			t.Errorf("%s did not log a handoff:\n%s", who, *stderrs[who])
		}
	}
}

// TestTwoHandoffsAtOnce: two leasehold handoff commands at once, to two
// different followers: the first to hold the candidates' key is obeyed;
// the other finds the term it asked about ended, and fails saying where
// the lease went, not that the old leader still leads. The lease moves
// once.
func TestTwoHandoffsAtOnce(t *testing.T) {
	q := "mem://" + memName("two-handoffs")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	watcher := openLeaseAs(t, q, "watcher", 2*time.Second)
	var first lease.Record
	for _, who := range []string{"leader", "f1", "f2"} {
		wg.Go(func() {
			leasehold(t, ctx, "run", "--lease", q, "--identity", who, "--ttl", "2s", "--prefer", "1", "--", "sleep", "600")
		})
		if who == "leader" {
			eventually(t, 30*time.Second, "leader leads", func() bool {
				r, err := watcher.Observe(ctx)
				first = r
				return err == nil && r.Holder == "leader" && r.Held()
			})
		}
	}
	time.Sleep(time.Second) // f1 and f2 follow
	type result struct {
		to     string
		code   int
		stderr string
	}
	results := make(chan result, 2)
	for _, to := range []string{"f1", "f2"} {
		if to == first.Holder {
			t.Fatalf("%s leads, want the first instance started", to)
		}
		go func() {
			code, stderr := leasehold(t, ctx, "handoff", "--lease", q, "--to", to, "--ttl", "2s", "--timeout", "8s")
			results <- result{to, code, stderr}
		}()
	}
	var won []string
	var lost []result
	for range 2 {
		r := <-results
		if r.code == 0 {
			won = append(won, r.to)
		} else {
			lost = append(lost, r)
		}
	}
	after, err := watcher.Observe(ctx)
	if err != nil || len(won) != 1 || after.Holder != won[0] || after.Token <= first.Token {
		t.Fatalf("handoffs obeyed %v, leader now %+v (%v); want exactly one, whose target leads with a greater token", won, after, err)
	}
	if l := lost[0]; l.code != exitRefused || !strings.Contains(l.stderr, "not to "+l.to) || !strings.Contains(l.stderr, "went from "+first.Holder+" to "+won[0]) {
		t.Errorf("the other handoff (--to %s): exit %d, want %d saying the lease went to %s instead; stderr:\n%s", l.to, l.code, exitRefused, won[0], l.stderr)
	}
}
