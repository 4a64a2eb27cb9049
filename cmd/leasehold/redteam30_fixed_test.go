//go:build linux

package main

import (
	"context"
	"strings"
	"testing"
)

// TestRedTeam30PreferControlBytesAlone: a --prefer with a terminal escape is
// refused (exit 64) without writing the escape to stderr raw, without
// --once: runner.checkPrefer puts the raw value in its OptionError (rule 8:
// a clear error). Failed at 6083802; the runner now quotes it.
func TestRedTeam30PreferControlBytesAlone(t *testing.T) {
	url := "mem://" + memName("rt30pref")
	for _, extra := range [][]string{nil} {
		args := append(append([]string{"run", "--lease", url, "--prefer", "v\x1b[2J"}, extra...), "--", "true")
		code, stderr := leasehold(t, context.Background(), args...)
		if code != exitUsage {
			t.Errorf("run --prefer with ESC %v: exit %d, want %d; stderr:\n%q", extra, code, exitUsage, stderr)
		}
		if strings.Contains(stderr, "\x1b") {
			t.Errorf("run --prefer with ESC %v: stderr has the raw escape: %q", extra, stderr)
		}
	}
}

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
