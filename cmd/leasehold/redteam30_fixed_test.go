//go:build linux

package main

import (
	"context"
	"testing"
)

// TestRedTeam30NestedOnceUnderPreferEnv: a leasehold run --once started
// inside the command of a leasehold configured by LEASEHOLD_PREFER (which
// the command inherits, as every variable leasehold does not give it)
// takes the parent's --prefer for its own, and refuses to run at all:
// LEASEHOLD_PREFER describes the parent as LEASEHOLD_SHARDS does, but is
// not in givenToCommand.
func TestRedTeam30NestedOnceUnderPreferEnv(t *testing.T) {
	env, _, stderr := testEnv(map[string]string{"LEASEHOLD_TOKEN": "7", "LEASEHOLD_PREFER": "2"})
	args := []string{"run", "--once", "--lease", "mem://" + memName("rt30nest"), "--", "true"}
	if code := mainWith(context.Background(), nil, args, env); code != 0 {
		t.Errorf("run --once inside a command of a LEASEHOLD_PREFER=2 leasehold: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
