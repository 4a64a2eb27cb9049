//go:build redteam14open && linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Red team 14: holes found in the CLI, each reproduced by a test that
// fails on the code as it stands. Run with -tags redteam14open.

// TestRedTeam14WindowsVet: leasehold ships a windows binary (scripts/release,
// whose default targets include windows/amd64 and windows/arm64; status,
// break and version work there), but its package's tests do not even
// type-check for Windows: docs_test.go has no build constraint and calls
// testEnv, which helpers_test.go defines only under the unix constraint.
// GOOS=windows go vet ./cmd/leasehold fails, so no test of what ships for
// Windows can run there, and CI (go vet ./... on Linux) does not see it.
func TestRedTeam14WindowsVet(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	cmd := exec.Command(goTool, "vet", ".")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("GOOS=windows go vet ./cmd/leasehold: %v\n%s", err, out)
	}
}

// TestRedTeam14HangupOrBrokenLogPipeAbandonsTheCommand (rule 14: the
// command dies with its wrapper, and only SIGKILL or a crash may keep
// leasehold from stopping it): leasehold handles SIGINT and SIGTERM, but
// neither SIGHUP (the terminal or SSH session it runs in closes) nor
// SIGPIPE (its stderr is a pipe whose reader went away: a log collector
// that exited, "leasehold run ... 2>&1 | tee log" whose tee died). Either
// kills it on the spot, by the default action: no SIGTERM or SIGKILL to the
// command's process group, no release. Pdeathsig (Linux only) kills the
// command's own process, and nothing else of its group: here the worker a
// shell started in the background runs on without the lease, as on macOS,
// which has no Pdeathsig, the command itself would. (A SIGTERM in the same
// TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand (rule 13; the help:
// "LEASEHOLD_PERIOD  with --period or --every: the period key it runs
// for"): supervisor.task sets LEASEHOLD_PERIOD from the term's record,
// whatever this run's flags: a run without --period, on a lease whose
// record names the period a scheduled run finished, starts its command
// with LEASEHOLD_PERIOD set to that finished period. A job that reads the
// variable to know which tick to process (what it is for) processes the
// finished period again: a manual "leasehold run --once -- ./job.sh" beside
// TestRedTeam14ShardVariablesConfigureANestedRun (rule 1 as the user of a
// nested leasehold sees it): the variables leasehold gives a shard's
// command are also the environment variables of leasehold's own flags:
// LEASEHOLD_SHARDS is --shards, LEASEHOLD_IDENTITY --identity,
// LEASEHOLD_LEASE --lease (and LEASEHOLD_PERIOD --period). A shard's
// command that runs a step under a single lease of its own, "leasehold run
// --lease URL -- step", starts a shard group of N instead: one instance
// runs the step N times at once, which the user asked to run on one
// leader at a time. The variables given to commands should not double as
// configuration (or leasehold should drop its own LEASEHOLD_ flag variables
// from the command's environment).
func TestRedTeam14ShardVariablesConfigureANestedRun(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	// The variables a shard's command gets.
	if code, stderr := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", "mem://"+memName("rt14-outer"), "--identity", "outer", "--ttl", "2s", "--",
		"sh", "-c", `if [ "$LEASEHOLD_SHARD" = 0 ]; then env > "$0.tmp"; mv "$0.tmp" "$0"; exit 0; fi; while :; do sleep 0.05; done`, envFile); code != 0 {
		t.Fatalf("the outer run exited %d: %s", code, stderr)
	}
	vars := map[string]string{}
	b, _ := os.ReadFile(envFile)
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "LEASEHOLD_") {
			vars[k] = v
		}
	}
	if vars["LEASEHOLD_SHARDS"] != "2" {
		t.Fatalf("the shard's command got %v", vars)
	}
	// That command runs a step under a lease of its own.
	ran := filepath.Join(dir, "ran")
	env, _, stderr := testEnv(vars)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, nil, []string{"run", "--lease", "mem://" + memName("rt14-step"), "--",
			"sh", "-c", `echo "$$" >> "$0"; while :; do sleep 0.05; done`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the step runs", func() bool { return fileExists(ran) })
	time.Sleep(time.Second) // let every start of the step happen
	cancel()
	<-done
	b, _ = os.ReadFile(ran)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("leasehold run --lease URL -- step, run by a shard's command, ran the step %d times at once; stderr:\n%s", n, stderr)
	}
}

// TestRedTeam14SigtermEndsTheMinimumHold (rule 13: "a record left held by
// a minimum hold is nobody's to take before it lapses, its writer's
// included"; the help: leasehold "keeps renewing it ... until D has
// passed, releases it and exits", and the docs: "it exits then, not
// before"): leasehold run --once --min-hold, its command done and the hold
// written, gets SIGTERM (the orchestrator stops a task whose command has
// finished): runOnce hands RunOnce the context the signal ends, holdUntil
// stops at once and the lease is released, minutes before the hold is
// over. A duplicate trigger that fires next takes the lease at once and
// runs the job a second time inside the window the hold was to keep it
// out of. (Had leasehold died instead, the record would at least have
// TestRedTeam14StalledStderrKeepsTheCommandAfterTheLeaseIsLost (rule 1):
// as TestRedTeam14StalledStderrKeepsTheCommandPastTheLease, but the lease
// is lost (an intruder's record, as after leasehold break --force or a
// restore): the runner's renew loop logs "renewal found the lease lost"
// before it ends the term (runner/renew.go keepRenewing), so with stderr
// stalled the term never ends, and the command runs on beside the
