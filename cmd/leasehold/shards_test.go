//go:build linux

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
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
func groupStatus(t *testing.T, leaseURL string, shards int) groupReport {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(t.Context(), nil, []string{"status", "--lease", leaseURL, "--shards", strconv.Itoa(shards), "-o", "json"}, env); code != 0 {
		t.Fatalf("status --shards: exit %d; stderr:\n%s", code, stderr)
	}
	var rep groupReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("status --shards -o json: %v in %q", err, stdout)
	}
	return rep
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
	if !strings.HasPrefix(rep.Meaning, "balanced: 2 live members own 2 shards each") {
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
// other shards' commands are stopped.
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
}

// TestStatusOfAGroupThatDiffers: status --shards with an N other than the
// group's says so; on a prefix with no group it says there is none.
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
	if rep := groupStatus(t, "mem://"+name, 5); !strings.Contains(rep.Meaning, "the group has 3 shards, not 5 (--shards)") {
		t.Errorf("status --shards 5 of a group of 3: %q", rep.Meaning)
	}
	if rep := groupStatus(t, "mem://"+memName("nothing"), 3); !strings.HasPrefix(rep.Meaning, "no group: no worker has joined") {
		t.Errorf("status --shards of no group: %q", rep.Meaning)
	}
}
