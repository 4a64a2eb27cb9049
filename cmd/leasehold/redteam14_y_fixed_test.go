//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Red team 14's findings on periods and holds, fixed: each test failed on
// the code before its fix.

// TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand (rule 13; the help:
// "LEASEHOLD_PERIOD  with --period or --every: the period key it runs
// for"): supervisor.task set LEASEHOLD_PERIOD from the term's record,
// whatever this run's flags: a run without --period, on a lease whose
// record names the period a scheduled run finished, started its command
// with LEASEHOLD_PERIOD set to that finished period, and a job that reads
// the variable to know which tick to process processed it again. It is
// now the run's own period, and unset without one.
func TestRedTeam14PeriodOfAnotherRunLeaksIntoTheCommand(t *testing.T) {
	const period = "2026-12-06T11:00:00Z"
	dir := t.TempDir()
	name := "mem://" + memName("rt14-period-leak")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "cron", "--period", period, "--", "true"); code != 0 {
		t.Fatalf("the scheduled run exited %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "period")
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "manual", "--",
		"sh", "-c", `printf %s "${LEASEHOLD_PERIOD-unset}" > "$0"`, out); code != 0 {
		t.Fatalf("the manual run exited %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "unset" {
		t.Errorf("a run without --period started its command with LEASEHOLD_PERIOD=%q, the period another run finished", b)
	}
	// A run with a period of its own gets it.
	const next = "2026-12-06T12:00:00Z"
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", name, "--identity", "cron", "--period", next, "--",
		"sh", "-c", `printf %s "${LEASEHOLD_PERIOD-unset}" > "$0"`, out); code != 0 {
		t.Fatalf("the next scheduled run exited %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != next {
		t.Errorf("a run with --period %s started its command with LEASEHOLD_PERIOD=%q", next, b)
	}
}
