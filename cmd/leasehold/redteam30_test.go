//go:build linux

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// TestRedTeam30SlotVarsNotInherited: a leasehold run started inside a
// --holders slot's command (LEASEHOLD_TOKEN, LEASEHOLD_SLOT and
// LEASEHOLD_SLOTS in its environment) must not pass the parent's slot on to
// its own command: the help says LEASEHOLD_SLOT and LEASEHOLD_SLOTS "are
// always this run's, or unset: never taken from leasehold's own
// environment". Failed before the fix: givenVars (supervisor.go) listed only
// LEASEHOLD_SHARD(S).
func TestRedTeam30SlotVarsNotInherited(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vars")
	env, _, stderr := testEnv(map[string]string{"LEASEHOLD_TOKEN": "7", "LEASEHOLD_SLOT": "1", "LEASEHOLD_SLOTS": "3"})
	args := []string{"run", "--once", "--lease", "mem://" + memName("rt30slot"), "--",
		"sh", "-c", `echo "${LEASEHOLD_SLOT:-unset} ${LEASEHOLD_SLOTS:-unset}" > "$0"`, out}
	if code := mainWith(context.Background(), nil, args, env); code != 0 {
		t.Fatalf("run --once: exit %d; stderr:\n%s", code, stderr)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(got)); s != "unset unset" {
		t.Errorf("the command of a leasehold inside a slot's command got LEASEHOLD_SLOT LEASEHOLD_SLOTS = %q, want both unset (the parent's slot beside this lease's token)", s)
	}
}

// TestRedTeam30HoldersBadValues: --holders out of range, or with --shards,
// --once, --rerun or --prefer, is bad flags (exit 64), also from
// LEASEHOLD_HOLDERS, before anything is written. Holds.
func TestRedTeam30HoldersBadValues(t *testing.T) {
	url := "mem://" + memName("rt30bad")
	cases := [][]string{
		{"--holders", "0"}, {"--holders", "-1"}, {"--holders", "99999999999"}, {"--holders", "1e3"},
		{"--holders", "2", "--shards", "2"}, {"--holders", "2", "--shards", "0"}, {"--holders", "0", "--shards", "2"},
		{"--holders", "2", "--once"}, {"--holders", "2", "--rerun"}, {"--holders", "2", "--prefer", "1"},
		{"--shards", "2", "--prefer", "1"}, {"--once", "--prefer", "1"},
	}
	for _, c := range cases {
		args := append(append([]string{"run", "--lease", url}, c...), "--", "true")
		code, stderr := leasehold(t, context.Background(), args...)
		if code != exitUsage {
			t.Errorf("run %v: exit %d, want %d; stderr:\n%s", c, code, exitUsage, stderr)
		}
	}
	for _, v := range []string{"0", "-3", "x", ""} {
		env, _, stderr := testEnv(map[string]string{"LEASEHOLD_HOLDERS": v})
		if code := mainWith(context.Background(), nil, []string{"run", "--lease", url, "--", "true"}, env); code != exitUsage {
			t.Errorf("LEASEHOLD_HOLDERS=%q: exit %d, want %d; stderr:\n%s", v, code, exitUsage, stderr)
		}
	}
	l, err := memlease.Default.Open(strings.TrimPrefix(url, "mem://"), lease.Options{Identity: "observer", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := l.Observe(context.Background()); !errors.Is(err, lease.ErrNoRecord) {
		t.Errorf("refused runs wrote the lease: %+v, %v", rec, err)
	}
}

// TestRedTeam30PreferControlBytes: a --prefer with a terminal escape, alone
// or with --once or --holders, is refused (exit 64) without writing the
// escape to stderr raw (rule 8: a clear error). Failed before the fixes:
// validate printed it with %s, and, alone, runner.checkPrefer put the raw
// value in its OptionError (6083802).
func TestRedTeam30PreferControlBytes(t *testing.T) {
	url := "mem://" + memName("rt30pref")
	for _, extra := range [][]string{nil, {"--once"}, {"--holders", "2"}} {
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

// TestRedTeam30HandoffCandidatesKey: leasehold handoff on a lease whose key
// already ends with .candidates: the candidates' key of another lease (run
// refuses it: TestRunRefusesACandidatesKey). Handoff on a lease nobody
// leads is exit 69, whatever the key; odd flags fail. Holds.
func TestRedTeam30HandoffCandidatesKey(t *testing.T) {
	url := "mem://" + memName("rt30") + ".candidates"
	code, stderr := leasehold(t, context.Background(), "handoff", "--lease", url)
	if code != exitUnavailable {
		t.Errorf("handoff --lease %s: exit %d, want %d; stderr:\n%s", url, code, exitUnavailable, stderr)
	}
	for _, odd := range [][]string{{"--timeout", "-1s"}, {"--to", "*"}, {"--lease", "quorum:"}, {"--lease", "mem://"}} {
		args := append([]string{"handoff", "--lease", url}, odd...)
		code, stderr := leasehold(t, context.Background(), args...)
		if code == 0 || code == exitUnavailable && odd[0] == "--to" {
			t.Errorf("handoff %v: exit %d; stderr:\n%s", odd, code, stderr)
		}
	}
}
