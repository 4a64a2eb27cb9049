//go:build linux

package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestOrphanKeepingOnlyTheTokenDiesWithTheTerm: rule 14 (red team, issue
// 34). The command hands its fencing token, and nothing else, to a worker
// it starts in a session of its own with a clean environment (env -i
// PATH=... LEASEHOLD_TOKEN=$LEASEHOLD_TOKEN: the usual way to pass a
// fencing token to a daemon), then exits. leasehold adopts the worker
// (child subreaper); it carries the command's own token, so it is of the
// command's family and dies with the term, although it lost the command's
// other LEASEHOLD_ variables.
func TestOrphanKeepingOnlyTheTokenDiesWithTheTerm(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := `setsid env -i PATH="$PATH" LEASEHOLD_TOKEN="$LEASEHOLD_TOKEN" sh -c 'echo $$ > "$0"; exec sleep 60' "$0" >/dev/null 2>&1 & sleep 0.5; exit 0`
	cmd := exec.Command(filepath.Join(buildBinaries(t), "leasehold"), "run", "--lease", "mem://red-token-only", "--", "sh", "-c", script, pidFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("leasehold run: %v; output:\n%s", err, out)
	}
	pid := pidIn(t, pidFile)
	killAtEnd(t, pid)
	if alive(pid) {
		t.Errorf("process %d, started by the command with its LEASEHOLD_TOKEN in a session of its own, still runs after leasehold released the lease and returned (rule 14); output:\n%s", pid, out)
	}
}
