//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
	"github.com/leasehold/leasehold/shard"
)

// These tests run leasehold run --shards in this process, two workers on
// the process-wide in-memory store, with real commands and real time, and
// check the supervision of one command per shard.

// shardScript is a command that writes, to a file named SHARD.IDENTITY.PID
// in the directory dir, its LEASEHOLD_ variables, and then runs until
// killed; with stubborn it ignores SIGTERM, so that only SIGKILL stops it.
func shardScript(dir string, stubborn bool) []string {
	trap := ""
	if stubborn {
		trap = "trap '' TERM; "
	}
	return []string{"sh", "-c", trap + `echo "$LEASEHOLD_SHARD $LEASEHOLD_SHARDS $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY $LEASEHOLD_LEASE" > "$0/$LEASEHOLD_SHARD.$LEASEHOLD_IDENTITY.$$"; while :; do sleep 0.05; done`, dir}
}

// shardCommand is one command a shardScript started.
type shardCommand struct {
	shard    int
	identity string
	pid      int
	vars     []string // LEASEHOLD_SHARD, _SHARDS, _TOKEN, _IDENTITY, _LEASE
	alive    bool
}

// shardCommands lists the commands shardScript started in dir.
func shardCommands(t *testing.T, dir string) []shardCommand {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []shardCommand
	for _, e := range entries {
		parts := strings.Split(e.Name(), ".")
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(parts) != 3 || err != nil || !strings.HasSuffix(string(b), "\n") {
			continue // being written
		}
		s, _ := strconv.Atoi(parts[0])
		pid, _ := strconv.Atoi(parts[2])
		out = append(out, shardCommand{shard: s, identity: parts[1], pid: pid, vars: strings.Fields(string(b)), alive: alive(pid)})
	}
	return out
}

// watchOverlaps polls the commands in dir until the test ends, and fails it
// if two commands of one shard are ever alive at once.
func watchOverlaps(t *testing.T, dir string) {
	t.Helper()
	var done atomic.Bool
	finished := make(chan struct{})
	t.Cleanup(func() { done.Store(true); <-finished })
	go func() {
		defer close(finished)
		for !done.Load() {
			running := map[int][]shardCommand{}
			for _, c := range shardCommands(t, dir) {
				if c.alive {
					running[c.shard] = append(running[c.shard], c)
				}
			}
			for s, cs := range running {
				if len(cs) > 1 {
					t.Errorf("shard %d runs twice at once: %+v", s, cs)
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
}

// groupStatus reads the group's status as leasehold status --shards -o
// json prints it.
func groupStatus(t *testing.T, leaseURL string, shards int, flags ...string) groupReport {
	t.Helper()
	rep, code, stderr := groupStatusExit(t, leaseURL, shards, flags...)
	if code != 0 {
		t.Fatalf("status --shards: exit %d; stderr:\n%s", code, stderr)
	}
	return rep
}

// groupStatusExit is groupStatus with leasehold's exit status and stderr.
func groupStatusExit(t *testing.T, leaseURL string, shards int, flags ...string) (groupReport, int, string) {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	args := append([]string{"status", "--lease", leaseURL, "--shards", strconv.Itoa(shards), "-o", "json"}, flags...)
	code := mainWith(t.Context(), nil, args, env)
	var rep groupReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("status --shards -o json: exit %d, %v in %q; stderr:\n%s", code, err, stdout, stderr)
	}
	return rep, code, stderr.String()
}

// TestShardsRunOneCommandPerShard: each worker runs one command per shard
// it owns, with the shard, the shard count, the shard's epoch and its
// identity in the command's environment; a join balances the group, which
// leasehold status --shards shows; and the workers stop cleanly (exit 0).
func TestShardsRunOneCommandPerShard(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("shards")
	watchOverlaps(t, dir)
	run := func(ctx context.Context, id string) func() int {
		wait, _ := started(t, ctx, append([]string{"run", "--shards", "4", "--lease", leaseURL, "--identity", id, "--ttl", "2s", "--grace", "1s", "--"},
			shardScript(dir, false)...)...)
		return wait
	}
	ctx, stop := context.WithCancelCause(context.Background())
	waitA := run(ctx, "a")
	eventually(t, 15*time.Second, "a runs all 4 shards", func() bool { return len(shardCommands(t, dir)) == 4 })
	for _, c := range shardCommands(t, dir) {
		token, _ := strconv.ParseUint(c.vars[2], 10, 64)
		if len(c.vars) != 5 || c.vars[0] != strconv.Itoa(c.shard) || c.vars[1] != "4" || token == 0 || c.vars[3] != "a" || c.vars[4] != leaseURL {
			t.Fatalf("shard %d's command saw %q; want its shard, 4, its epoch, a and the lease", c.shard, c.vars)
		}
	}
	waitB := run(ctx, "b")
	eventually(t, 20*time.Second, "a join balances the group", func() bool {
		rep := groupStatus(t, leaseURL, 4)
		return rep.Balanced && len(rep.Members) == 2 && len(rep.Members[0].Shards) == 2 && len(rep.Members[1].Shards) == 2
	})
	rep := groupStatus(t, leaseURL, 4)
	// Each worker starts what the assignment gives it at its next read.
	eventually(t, 5*time.Second, "the commands run where status says, with the epochs it shows", func() bool {
		running := map[string]map[int]uint64{"a": {}, "b": {}}
		for _, c := range shardCommands(t, dir) {
			if c.alive {
				running[c.identity][c.shard], _ = strconv.ParseUint(c.vars[2], 10, 64)
			}
		}
		for _, m := range rep.Members {
			for _, s := range m.Shards {
				if running[m.Identity][s.Shard] != s.Epoch || len(running[m.Identity]) != 2 {
					return false
				}
			}
		}
		return true
	})
	if !strings.HasPrefix(rep.Meaning, "balanced: 2 members own 2 shards each") {
		t.Errorf("status meaning %q", rep.Meaning)
	}
	stop(&signalCause{sig: 15})
	if a, b := waitA(), waitB(); a != 0 || b != 0 {
		t.Fatalf("exit statuses %d and %d after SIGTERM, want 0", a, b)
	}
	for _, c := range shardCommands(t, dir) {
		if c.alive {
			t.Errorf("shard %d's command on %s outlived leasehold", c.shard, c.identity)
		}
	}
}

// TestShardMovesOnlyAfterItsCommandExited: when a join moves shards from a
// worker whose commands ignore SIGTERM, they get SIGTERM, then SIGKILL at
// the end of --grace, and only then start on the new owner: never two
// commands of one shard at once (watchOverlaps), and not before the grace
// period.
func TestShardMovesOnlyAfterItsCommandExited(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("moves")
	watchOverlaps(t, dir)
	const grace = 2 * time.Second
	ctx, stop := context.WithCancelCause(context.Background())
	waitA, _ := started(t, ctx, append([]string{"run", "--shards", "2", "--lease", leaseURL, "--identity", "a", "--ttl", "2s", "--grace", grace.String(), "--"},
		shardScript(dir, true)...)...)
	eventually(t, 15*time.Second, "a runs both shards", func() bool { return len(shardCommands(t, dir)) == 2 })
	joined := time.Now()
	waitB, _ := started(t, ctx, append([]string{"run", "--shards", "2", "--lease", leaseURL, "--identity", "b", "--ttl", "2s", "--"},
		shardScript(dir, false)...)...)
	var moved shardCommand
	eventually(t, 20*time.Second, "a shard moved to b", func() bool {
		for _, c := range shardCommands(t, dir) {
			if c.identity == "b" && c.alive {
				moved = c
				return true
			}
		}
		return false
	})
	if took := time.Since(joined); took < grace {
		t.Errorf("shard %d started on b %v after b joined, before a's command's grace period (%v) ended", moved.shard, took, grace)
	}
	for _, c := range shardCommands(t, dir) {
		if c.identity == "a" && c.shard == moved.shard && c.alive {
			t.Errorf("a's command of shard %d is alive while b's runs", c.shard)
		}
	}
	stop(&signalCause{sig: 15})
	waitA()
	waitB()
}

// TestShardCommandExitEndsTheRun: a command that exits by itself ends
// leasehold run --shards with its status, as without --shards, and the
// other shards' commands are stopped. Its shard is reported ended, the
// others revoked (the events leasehold_shard_events_total counts, as the
// worker logs them): ending the run before the worker saw the command's
// end counted it revoked, and the ended series never moved.
func TestShardCommandExitEndsTheRun(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("exit")
	code, stderr := leasehold(t, context.Background(), "run", "--shards", "3", "--lease", leaseURL, "--identity", "a", "--ttl", "2s", "--",
		"sh", "-c", `echo x > "$0/$LEASEHOLD_SHARD.a.$$"; [ "$LEASEHOLD_SHARD" = 1 ] && { sleep 0.5; exit 3; }; while :; do sleep 0.05; done`, dir)
	if code != 3 {
		t.Fatalf("exit status %d, want 3 (shard 1's command's); stderr:\n%s", code, stderr)
	}
	cs := shardCommands(t, dir)
	if len(cs) != 3 {
		t.Fatalf("%d commands started, want 3", len(cs))
	}
	for _, c := range cs {
		if c.alive {
			t.Errorf("shard %d's command outlived leasehold", c.shard)
		}
	}
	events := map[string]int{}
	for _, l := range strings.Split(stderr, "\n") {
		for _, k := range []string{"ended", "revoked", "lost"} {
			for sh := range 3 {
				if strings.Contains(l, `msg="shard: `+k+`" shard=`+strconv.Itoa(sh)+" ") {
					events[k+" "+strconv.Itoa(sh)]++
				}
			}
		}
	}
	if len(events) != 3 || events["ended 1"] != 1 || events["revoked 0"] != 1 || events["revoked 2"] != 1 {
		t.Errorf("shard events %v; want shard 1 ended, 0 and 2 revoked, once each; stderr:\n%s", events, stderr)
	}
}

// TestStatusOfAGroupThatDiffers: status --shards with an N other than the
// group's says so; with --watch it tells a member that stopped renewing
// (lapsed); on a prefix with no group it says there is none.
func TestStatusOfAGroupThatDiffers(t *testing.T) {
	name := memName("differs")
	w, err := shard.New(shard.Config{Store: memlease.Default.Objects("w"), Group: name, Shards: 3, Identity: "w", TTL: 2 * time.Second,
		Run: func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	eventually(t, 10*time.Second, "the group is balanced", func() bool { return groupStatus(t, "mem://"+name, 3).Balanced })
	rep, code, stderr := groupStatusExit(t, "mem://"+name, 5)
	if !strings.Contains(rep.Meaning, "the group has 3 shards, not 5 (--shards)") || code != exitConfig || !strings.Contains(stderr, "status: --shards 5: the group at mem://"+name+" has 3 shards") {
		t.Errorf("status --shards 5 of a group of 3: exit %d, meaning %q, stderr %q; want exit 78 and an error naming both", code, rep.Meaning, stderr)
	}
	// A member cut off (its calls hang) keeps its record held; a watch of
	// a TTL tells it lapsed.
	xid := name + "-x" // memlease's faults are by identity, process-wide
	x, err := shard.New(shard.Config{Store: memlease.Default.Objects(xid), Group: name, Shards: 3, Identity: xid, TTL: 2 * time.Second, NoAssigner: true,
		Run: func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	xdone := make(chan error, 1)
	go func() { xdone <- x.Run(ctx) }()
	defer func() { memlease.Default.Heal(xid); cancel(); <-xdone }()
	eventually(t, 10*time.Second, "x joined", func() bool { return len(groupStatus(t, "mem://"+name, 3).Members) == 2 })
	memlease.Default.Hang(xid)
	rep = groupStatus(t, "mem://"+name, 3, "--watch", "2s")
	lapsed := map[string]bool{}
	for _, m := range rep.Members {
		lapsed[m.Identity] = m.Lapsed && !m.Live
	}
	if len(rep.Members) != 2 || !lapsed[xid] || lapsed["w"] || rep.Watch != "2s" {
		t.Errorf("status --shards --watch 2s with x cut off: %+v; want x lapsed, w not", rep.Members)
	}
	if rep := groupStatus(t, "mem://"+memName("nothing"), 3); !strings.HasPrefix(rep.Meaning, "no group: no worker has joined") {
		t.Errorf("status --shards of no group: %q", rep.Meaning)
	}
}

// TestGroupStatusReadOnce: read once, status --shards judges no member's
// liveness, but it shows what the store says: a member cut off, whose
// record stays held, is no member once the assigner judged its liveness
// expired and rebalanced the group (it counted as live, owning nothing,
// and the group as moving, for as long as its record stayed); and neither
// a member that left nor a worker refused for another --shards is listed.
func TestGroupStatusReadOnce(t *testing.T) {
	name := memName("readonce")
	// start runs a worker until the test ends or stop is called; ended
	// waits for its Run to return, and both return what it returned.
	start := func(id string, shards int, noAssigner bool) (stop, ended func() error) {
		w, err := shard.New(shard.Config{Store: memlease.Default.Objects(id), Group: name, Shards: shards, Identity: id, TTL: time.Second, NoAssigner: noAssigner,
			Run: func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		ended = sync.OnceValue(func() error { return <-done })
		stop = func() error { cancel(); return ended() }
		t.Cleanup(func() { stop() })
		return stop, ended
	}
	xid, yid, zid := name+"-x", name+"-y", name+"-z" // memlease's faults are by identity, process-wide
	t.Cleanup(func() { memlease.Default.Heal(xid) })
	start("w", 3, false)
	stopX, _ := start(xid, 3, true)
	owners := func(rep groupReport) map[string]int {
		out := map[string]int{}
		for _, m := range rep.Members {
			out[m.Identity] = len(m.Shards)
		}
		return out
	}
	eventually(t, 10*time.Second, "x owns a shard", func() bool { return owners(groupStatus(t, "mem://"+name, 3))[xid] > 0 })

	memlease.Default.Hang(xid)
	var rep groupReport
	eventually(t, 10*time.Second, "the group is balanced over w alone", func() bool {
		rep = groupStatus(t, "mem://"+name, 3)
		return owners(rep)["w"] == 3
	})
	eventually(t, 5*time.Second, "x's term ends", func() bool { rep = groupStatus(t, "mem://"+name, 3); return rep.Ended == 1 })
	if o := owners(rep); !rep.Balanced || rep.Judged || len(o) != 1 || o["w"] != 3 || !strings.Contains(rep.Meaning, "balanced: 1 member owns 3 shards") || !strings.Contains(rep.Meaning, "liveness not judged: read once; --watch 1s tells") {
		t.Errorf("read once with x cut off and its shards moved: %+v; want w alone listed, balanced, x ended, liveness not judged", rep)
	}
	var out strings.Builder
	printGroup(&out, describeGroup("mem://"+name, groupSpec{n: 3}, shard.Status{Shards: 3, TTL: time.Second, Members: []shard.MemberStatus{{Identity: "w", Live: true, Shards: []shard.Shard{{Index: 0, Epoch: 1}}}}}, 0))
	if !strings.Contains(out.String(), "w (token 0, not judged: read once): 1 shard 0") {
		t.Errorf("status --shards read once printed\n%s\nwant w's liveness not judged", out.String())
	}

	// A worker that leaves, and one whose --shards differ, leave records
	// behind that are not members.
	memlease.Default.Heal(xid)
	stopX()
	if _, ended := start(yid, 5, true); !errors.Is(ended(), lease.ErrInvalid) {
		t.Fatal("a worker with 5 shards in a group of 3 did not end with lease.ErrInvalid")
	}
	stopZ, _ := start(zid, 3, true)
	eventually(t, 10*time.Second, "z owns a shard", func() bool { return owners(groupStatus(t, "mem://"+name, 3))[zid] > 0 })
	stopZ()
	eventually(t, 10*time.Second, "w owns every shard again", func() bool { rep = groupStatus(t, "mem://"+name, 3); return owners(rep)["w"] == 3 })
	if o := owners(rep); len(o) != 1 || !rep.Balanced {
		t.Errorf("after x, y and z went: %+v; want w alone listed, balanced", rep)
	}
}

// TestJobControlStopsEveryShardsCommand: a job-control stop stops the
// process group of every running command (one per shard), and continues
// each whose term is still within its deadlines.
func TestJobControlStopsEveryShardsCommand(t *testing.T) {
	l, err := memlease.Default.Open(memName("jobcontrol"), lease.Options{Identity: "j", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	terms := make(chan context.Context, 1)
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler), Task: func(ctx context.Context) error {
		terms <- ctx
		<-ctx.Done()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	term := <-terms
	s := &supervisor{argv: []string{"sh", "-c", "while :; do sleep 0.05; done"}, env: os.Environ(), grace: time.Second, margin: time.Second,
		stdout: &syncBuffer{}, stderr: &syncBuffer{}, log: slog.New(slog.DiscardHandler)}
	stopped := make(chan struct{}, 2)
	for i := range 2 {
		go func() {
			_ = s.supervise(term, job{token: uint64(i + 1), log: s.log})
			stopped <- struct{}{}
		}()
	}
	pids := func() []int {
		s.mu.Lock()
		defer s.mu.Unlock()
		var out []int
		for r := range s.running {
			out = append(out, r.c.pid)
		}
		return out
	}
	eventually(t, 5*time.Second, "two commands run", func() bool { return len(pids()) == 2 })
	running := pids()
	suspended := 0
	s.suspend(syscall.SIGTSTP, func() {
		for _, pid := range running {
			eventually(t, 5*time.Second, "the command is stopped", func() bool { return isStopped(pid) })
			if isStopped(pid) {
				suspended++
			}
		}
	})
	if suspended != 2 {
		t.Fatalf("%d of 2 commands stopped while suspended, want both", suspended)
	}
	for _, pid := range running {
		eventually(t, 5*time.Second, "the command is continued", func() bool { return !isStopped(pid) })
	}
	cancel()
	<-stopped
	<-stopped
}

// assignerOf returns the holder of group's assigner lease on the
// process-wide in-memory store, "" if none.
func assignerOf(t *testing.T, group string) string {
	t.Helper()
	b, ok := memlease.Default.Bytes(group + "/assigner")
	if !ok {
		return ""
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return r.Holder
}

// turnStubborn makes the commands of a shardScript(dir, false) started with
// stubbornScript ignore SIGTERM from now on on the instance identity.
func turnStubborn(t *testing.T, dir, identity string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "stubborn."+identity), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stubbornScript is shardScript's command, which ignores SIGTERM once
// turnStubborn was called for its instance: so that the moves of a start
// are quick, and a later stop waits for SIGKILL.
func stubbornScript(dir string) []string {
	return []string{"sh", "-c", `trap '[ -e "$0/stubborn.$LEASEHOLD_IDENTITY" ] || exit 0' TERM; echo "$LEASEHOLD_SHARD $LEASEHOLD_SHARDS $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY $LEASEHOLD_LEASE" > "$0/$LEASEHOLD_SHARD.$LEASEHOLD_IDENTITY.$$"; while :; do sleep 0.05; done`, dir}
}

// assignerAndWorker starts a, the group's assigner, and b, sharing 2
// shards with --ttl 2s and --grace 6s (longer than the TTL), each running
// stubbornScript with its own context, and waits until each runs one.
func assignerAndWorker(t *testing.T, dir, leaseURL string) (stopA context.CancelCauseFunc, waitA, waitB func() int) {
	t.Helper()
	run := func(id string) (context.CancelCauseFunc, func() int) {
		ctx, stop := context.WithCancelCause(context.Background())
		wait, _ := started(t, ctx, append([]string{"run", "--shards", "2", "--lease", leaseURL, "--identity", id, "--ttl", "2s", "--grace", "6s", "--"},
			stubbornScript(dir)...)...)
		t.Cleanup(func() { stop(nil) }) // before started's wait
		return stop, wait
	}
	stopA, waitA = run("a")
	group := strings.TrimPrefix(leaseURL, "mem://")
	eventually(t, 10*time.Second, "a is the assigner", func() bool { return assignerOf(t, group) == "a" })
	_, waitB = run("b")
	eventually(t, 20*time.Second, "a and b run one shard each", func() bool {
		running := map[string]int{}
		for _, c := range shardCommands(t, dir) {
			if c.alive {
				running[c.identity]++
			}
		}
		return running["a"] == 1 && running["b"] == 1
	})
	return stopA, waitA, waitB
}

// TestAssignersCommandsKeepTheirShardsWhileTheyStop: SIGTERM to the
// group's assigner, whose command ignores SIGTERM for its whole --grace
// (longer than the TTL): its assigner lease stays renewed, as its
// liveness does, until the command was killed, so no other instance
// starts its shard meanwhile (watchOverlaps). On main the assigner lease's
// renewals stopped at once, and b, taking it over a TTL later, started
// a's shard beside a's command.
func TestAssignersCommandsKeepTheirShardsWhileTheyStop(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("assigner-leaves")
	watchOverlaps(t, dir)
	stopA, waitA, _ := assignerAndWorker(t, dir, leaseURL)
	turnStubborn(t, dir, "a")
	stopA(&signalCause{sig: 15})
	if code := waitA(); code != 0 {
		t.Fatalf("a exited %d after SIGTERM, want 0", code)
	}
	eventually(t, 10*time.Second, "b runs both shards", func() bool {
		n := 0
		for _, c := range shardCommands(t, dir) {
			if c.alive && c.identity == "b" {
				n++
			}
		}
		return n == 2
	})
}

// TestAssignerLeaseLostWhileItsCommandsStop: the group's assigner, told
// to stop, keeps both its leases renewed while its command (which ignores
// SIGTERM) has its --grace; a restore of the assigner lease's record then
// ends that drain at the next renewal, and the command is killed at once,
// not at the end of --grace: the next assigner frees its shard as soon as
// it wins the lease.
func TestAssignerLeaseLostWhileItsCommandsStop(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("assigner-lost-draining")
	group := strings.TrimPrefix(leaseURL, "mem://")
	watchOverlaps(t, dir)
	stopA, waitA, _ := assignerAndWorker(t, dir, leaseURL)
	var pid int
	for _, c := range shardCommands(t, dir) {
		if c.alive && c.identity == "a" {
			pid = c.pid
		}
	}
	old, _ := memlease.Default.Bytes(group + "/assigner")
	turnStubborn(t, dir, "a")
	stopA(&signalCause{sig: 15})
	eventually(t, 5*time.Second, "the assigner lease renewed while a drains", func() bool {
		b, _ := memlease.Default.Bytes(group + "/assigner")
		return string(b) != string(old)
	})
	restored := time.Now()
	memlease.Default.Put(group+"/assigner", old)
	eventually(t, 6*time.Second, "a's command killed", func() bool { return !alive(pid) })
	if took := time.Since(restored); took > 2*time.Second {
		t.Errorf("a's command was killed %v after its assigner lease's record was restored; want within the TTL (2s)", took)
	}
	if code := waitA(); code != 0 {
		t.Fatalf("a exited %d after SIGTERM, want 0", code)
	}
}

// TestLostAssignerLeaseKillsItsCommands: a restore of the assigner lease's
// record ends the assigner's term at its next renewal, while its liveness
// renews on; its commands are killed by the assigner lease's expiry (here
// at once: a renewal found it lost), not at the end of --grace, since the
// next assigner frees their shards as soon as it wins the lease. On main
// they lived their whole --grace, following the liveness lease alone, and
// b started a's shard beside a's command.
func TestLostAssignerLeaseKillsItsCommands(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("assigner-lost")
	group := strings.TrimPrefix(leaseURL, "mem://")
	watchOverlaps(t, dir)
	assignerAndWorker(t, dir, leaseURL)
	var pid int
	for _, c := range shardCommands(t, dir) {
		if c.alive && c.identity == "a" {
			pid = c.pid
		}
	}
	old, _ := memlease.Default.Bytes(group + "/assigner")
	eventually(t, 5*time.Second, "the assigner lease renewed", func() bool {
		b, _ := memlease.Default.Bytes(group + "/assigner")
		return string(b) != string(old)
	})
	turnStubborn(t, dir, "a")
	restored := time.Now()
	memlease.Default.Put(group+"/assigner", old)
	eventually(t, 6*time.Second, "a's command killed", func() bool { return !alive(pid) })
	if took := time.Since(restored); took > 2*time.Second {
		t.Errorf("a's command was killed %v after its assigner lease's record was restored; want within the TTL (2s)", took)
	}
}

// TestShardedRunsSayWhoAssigns: under run --shards, /leader answers 200 on
// the group's assigner and 503 on the other instance, naming the
// assigner, and leasehold_is_leader is 1 on the assigner only (every
// instance's /leader answered 503, and its leasehold_is_leader stayed 0).
func TestShardedRunsSayWhoAssigns(t *testing.T) {
	leaseURL := "mem://" + memName("assigns")
	group := strings.TrimPrefix(leaseURL, "mem://")
	ctx, stop := context.WithCancelCause(context.Background())
	listening := regexp.MustCompile(`msg="serving [^"]*" addr=(127\.0\.0\.1:\d+)`)
	run := func(id string) string {
		_, stderr := started(t, ctx, "run", "--shards", "2", "--lease", leaseURL, "--identity", id, "--ttl", "2s", "--listen", "127.0.0.1:0",
			"--", "sh", "-c", "while :; do sleep 0.05; done")
		t.Cleanup(func() { stop(nil) }) // before started's wait
		var addr string
		eventually(t, 10*time.Second, id+" listens", func() bool {
			m := listening.FindStringSubmatch(stderr.String())
			if m != nil {
				addr = m[1]
			}
			return m != nil
		})
		return "http://" + addr
	}
	fetch := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	a := run("a")
	eventually(t, 10*time.Second, "a is the assigner", func() bool { return assignerOf(t, group) == "a" })
	b := run("b")
	eventually(t, 10*time.Second, "b names a as the assigner", func() bool {
		code, body := fetch(b + "/leader")
		return code == http.StatusServiceUnavailable && strings.TrimSpace(body) == "not the group's assigner (last seen assigner: a)"
	})
	if code, body := fetch(a + "/leader"); code != http.StatusOK || !strings.HasPrefix(body, "the group's assigner (token ") {
		t.Errorf("a's /leader: %d %q; want 200, the group's assigner", code, body)
	}
	for url, want := range map[string]string{a: "1", b: "0"} {
		if _, metrics := fetch(url + "/metrics"); !strings.Contains(metrics, "\nleasehold_is_leader "+want+"\n") {
			t.Errorf("%s/metrics: want leasehold_is_leader %s", url, want)
		}
	}
}
