//go:build redteam14open && linux

package main

import (
	"os"
	"os/exec"
	"testing"
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
