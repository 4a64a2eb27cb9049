//go:build linux

package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// slotScript is shardScript for leasehold run --holders: it writes, to a
// file named SLOT.IDENTITY.PID in dir, LEASEHOLD_SLOT, _SLOTS, _TOKEN,
// _IDENTITY and, as "-" when unset, LEASEHOLD_SHARD; then runs until killed.
func slotScript(dir string) []string {
	return []string{"sh", "-c", `echo "$LEASEHOLD_SLOT $LEASEHOLD_SLOTS $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY ${LEASEHOLD_SHARD:--}" > "$0/$LEASEHOLD_SLOT.$LEASEHOLD_IDENTITY.$$"; while :; do sleep 0.05; done`, dir}
}

// watchHolders polls the commands in dir until the test ends, and fails it
// if more than n are ever alive at once, two of one slot, or two of one
// instance; it returns the most it saw alive at once.
func watchHolders(t *testing.T, dir string, n int) *atomic.Int64 {
	t.Helper()
	var done atomic.Bool
	most := new(atomic.Int64)
	finished := make(chan struct{})
	t.Cleanup(func() { done.Store(true); <-finished })
	go func() {
		defer close(finished)
		for !done.Load() {
			bySlot, byID, alive := map[int]int{}, map[string]int{}, 0
			for _, c := range shardCommands(t, dir) {
				if c.alive {
					bySlot[c.shard]++
					byID[c.identity]++
					alive++
				}
			}
			most.Store(max(most.Load(), int64(alive)))
			for s, k := range bySlot {
				if k > 1 {
					t.Errorf("slot %d runs %d commands at once", s, k)
					return
				}
			}
			for id, k := range byID {
				if k > 1 {
					t.Errorf("%s runs %d commands at once", id, k)
					return
				}
			}
			if alive > n {
				t.Errorf("%d commands run at once, more than --holders %d", alive, n)
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return most
}

// holdersStatus runs leasehold status --holders n -o json (and flags).
func holdersStatus(t *testing.T, leaseURL string, n int, flags ...string) (groupReport, int, string) {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	args := append([]string{"status", "--lease", leaseURL, "--holders", strconv.Itoa(n), "-o", "json"}, flags...)
	code := mainWith(t.Context(), nil, args, env)
	var rep groupReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("status --holders -o json: exit %d, %v in %q; stderr:\n%s", code, err, stdout, stderr)
	}
	return rep, code, stderr.String()
}

// TestHoldersRunAtMostN: three instances of leasehold run --holders 2: two
// run the command, each with its slot, the slot count and the slot's epoch
// (and no LEASEHOLD_SHARD), the third waits; status --holders shows it;
// when a holder stops (SIGTERM) the waiting instance takes its slot. Never
// more than two commands run at once, two of one slot, or two on one
// instance. A run or a status of --shards on the group is refused (78), as
// is a run of another --holders count, and a run of --holders on a live
// --shards group.
func TestHoldersRunAtMostN(t *testing.T) {
	dir := t.TempDir()
	leaseURL := "mem://" + memName("holders")
	most := watchHolders(t, dir, 2)
	stops := map[string]context.CancelCauseFunc{}
	waits := map[string]func() int{}
	for _, id := range []string{"a", "b", "c"} {
		ctx, stop := context.WithCancelCause(context.Background())
		stops[id] = stop
		waits[id], _ = started(t, ctx, append([]string{"run", "--holders", "2", "--lease", leaseURL, "--identity", id, "--ttl", "2s", "--grace", "1s", "--"},
			slotScript(dir)...)...)
	}
	running := func() map[string]shardCommand {
		out := map[string]shardCommand{}
		for _, c := range shardCommands(t, dir) {
			if c.alive {
				out[c.identity] = c
			}
		}
		return out
	}
	eventually(t, 20*time.Second, "two instances hold a slot each", func() bool {
		rep, _, _ := holdersStatus(t, leaseURL, 2)
		return rep.Balanced && len(running()) == 2
	})
	var waiter string
	for _, id := range []string{"a", "b", "c"} {
		c, ok := running()[id]
		if !ok {
			waiter = id
			continue
		}
		token, _ := strconv.ParseUint(c.vars[2], 10, 64)
		if len(c.vars) != 5 || c.vars[0] != strconv.Itoa(c.shard) || c.vars[1] != "2" || token == 0 || c.vars[3] != id || c.vars[4] != "-" {
			t.Fatalf("%s's command saw %q; want its slot, 2, its epoch, %s and no LEASEHOLD_SHARD", id, c.vars, id)
		}
	}
	rep, _, _ := holdersStatus(t, leaseURL, 2)
	if rep.MaxPerWorker != 1 || !strings.HasPrefix(rep.Meaning, "balanced: 2 of 2 slots held, one each by 2 members; 1 waiting for one to come free") {
		t.Errorf("status --holders 2: max_per_worker %d, meaning %q", rep.MaxPerWorker, rep.Meaning)
	}
	if _, code, stderr := groupStatusExit(t, leaseURL, 2); code != exitConfig || !strings.Contains(stderr, "is one of leasehold run --holders 2 (a slot per member), not of --shards") {
		t.Errorf("status --shards 2 of a group of --holders 2: exit %d, stderr %q; want 78 saying which group it is", code, stderr)
	}
	code, stderr := leasehold(t, t.Context(), "run", "--shards", "2", "--lease", leaseURL, "--identity", "d", "--ttl", "2s", "--", "true")
	if code != exitConfig || !strings.Contains(stderr, "--shards: the group is one of --holders (a slot per instance), not of --shards") {
		t.Errorf("run --shards 2 in a group of --holders 2: exit %d, stderr %q; want 78 naming both", code, stderr)
	}
	// Another count against the live group, or a count out of range: refused,
	// the group untouched.
	for n, want := range map[string]struct {
		code int
		says string
	}{
		"3":       {exitConfig, "Shards (3) differs from the group's 2"},
		"1":       {exitConfig, "Shards (1) differs from the group's 2"},
		"1000000": {exitUsage, "--holders (1000000) must be between 1 and 100000"},
	} {
		code, stderr := leasehold(t, t.Context(), "run", "--holders", n, "--lease", leaseURL, "--identity", "e", "--ttl", "2s", "--", "true")
		if code != want.code || !strings.Contains(stderr, want.says) {
			t.Errorf("run --holders %s in a group of --holders 2: exit %d, %q; want %d saying %q", n, code, errorLines(stderr), want.code, want.says)
		}
	}
	// A --holders instance joining a live --shards group: refused by name.
	shardURL := "mem://" + memName("shards")
	sctx, sstop := context.WithCancelCause(context.Background())
	swait, _ := started(t, sctx, append([]string{"run", "--shards", "2", "--lease", shardURL, "--identity", "s", "--ttl", "2s", "--grace", "1s", "--"}, slotScript(t.TempDir())...)...)
	eventually(t, 20*time.Second, "the shard group is balanced", func() bool {
		rep, code, _ := groupStatusExit(t, shardURL, 2)
		return code == 0 && rep.Balanced
	})
	code, stderr = leasehold(t, t.Context(), "run", "--holders", "2", "--lease", shardURL, "--identity", "h", "--ttl", "2s", "--", "true")
	if code != exitConfig || !strings.Contains(stderr, "the group is one of --shards (no cap on an instance's shards), not of --holders") {
		t.Errorf("run --holders 2 in a group of --shards 2: exit %d, %q; want 78 naming both", code, errorLines(stderr))
	}
	sstop(&signalCause{sig: 15})
	if code := swait(); code != 0 {
		t.Errorf("the shard worker exited %d after SIGTERM, want 0", code)
	}
	var holder string
	for id := range running() {
		holder = id
		break
	}
	stops[holder](&signalCause{sig: 15})
	if code := waits[holder](); code != 0 {
		t.Fatalf("%s exited %d after SIGTERM, want 0", holder, code)
	}
	eventually(t, 10*time.Second, "the waiting instance takes the freed slot", func() bool {
		_, ok := running()[waiter]
		return ok && len(running()) == 2
	})
	for id, stop := range stops {
		if id != holder {
			stop(&signalCause{sig: 15})
			if code := waits[id](); code != 0 {
				t.Errorf("%s exited %d after SIGTERM, want 0", id, code)
			}
		}
	}
	if most.Load() != 2 {
		t.Errorf("at most %d commands ran at once; want 2", most.Load())
	}
}

// TestStatusHoldersFlags: status refuses --holders with --shards, and an
// out-of-range --holders, naming the flag and value.
func TestStatusHoldersFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--holders", "2", "--shards", "2"}, "--holders (2) and --shards (2) exclude each other"},
		{[]string{"--holders", "0"}, "--holders (0) must be between 1 and 100000"},
	} {
		code, stderr := leasehold(t, t.Context(), append([]string{"status", "--lease", "mem://" + memName("holders-flags")}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("status %v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
