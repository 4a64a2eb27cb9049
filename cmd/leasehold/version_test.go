//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "-trimpath", Value: "true"},
		{Key: "vcs.revision", Value: "0123abcd"},
		{Key: "vcs.time", Value: "2026-11-23T20:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, tc := range []struct {
		name    string
		bi      *debug.BuildInfo
		stamped string
		want    buildVersion
	}{
		{
			name:    "a release: the stamped version wins",
			bi:      &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs[:3]},
			stamped: "v1.2.3",
			want:    buildVersion{Version: "v1.2.3", Commit: "0123abcd", CommitTime: "2026-11-23T20:00:00Z", Go: "go1.26.8"},
		},
		{
			name: "go install @version: the module's tag, no commit",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			want: buildVersion{Version: "v1.2.3", Go: "go1.26.8"},
		},
		{
			name: "a build from a changed checkout",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			want: buildVersion{Version: "(devel)", Commit: "0123abcd", Modified: true, CommitTime: "2026-11-23T20:00:00Z", Go: "go1.26.8"},
		},
		{
			name: "no build info",
			want: buildVersion{Version: "unknown", Go: runtime.Version()},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			if got := versionOf(tc.bi, tc.stamped); got != tc.want {
				t.Errorf("versionOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		env, stdout, stderr := testEnv(nil)
		if code := mainWith(context.Background(), nil, args, env); code != 0 || stderr.String() != "" {
			t.Fatalf("leasehold %s: exit %d, stderr %q", args[0], code, stderr)
		}
		for _, want := range []string{"version ", "commit ", "go       " + runtime.Version(), "platform " + runtime.GOOS} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("leasehold %s lacks %q:\n%s", args[0], want, stdout)
			}
		}
	}
	if code, stderr := leasehold(t, context.Background(), "version", "extra"); code != exitUsage || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("leasehold version extra: exit %d, stderr %q; want 64 naming the argument", code, stderr)
	}
}

// TestVersionOfBuilds builds leasehold twice, as a checkout does and as
// scripts/release does, and runs leasehold version from each.
func TestVersionOfBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds leasehold twice")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: %v", err)
	}
	dir := t.TempDir()
	build := func(name string, flags ...string) string {
		t.Helper()
		bin := filepath.Join(dir, name)
		out, err := exec.Command(gobin, append(append([]string{"build", "-o", bin}, flags...), ".")...).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", strings.Join(flags, " "), err, out)
		}
		out, err = exec.Command(bin, "version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s version: %v\n%s", name, err, out)
		}
		return string(out)
	}

	plain := build("plain", "-buildvcs=auto")
	if !strings.Contains(plain, "version  ") || strings.Contains(plain, "v9.8.7") {
		t.Errorf("a plain build's version:\n%s", plain)
	}
	// A build in a git checkout records its commit. Go looks for a .git
	// directory: a git worktree, whose .git is a file, is not stamped.
	if head, ok := gitCheckout(t); ok {
		if want := "commit   " + head; !strings.Contains(plain, want) {
			t.Errorf("a plain build in a git checkout: want %q in:\n%s", want, plain)
		}
	}
	devel := build("devel", "-buildvcs=false")
	if !strings.Contains(devel, "version  (devel)\ncommit   unknown\n") {
		t.Errorf("a build without VCS stamping:\n%s", devel)
	}
	release := build("release", "-trimpath", "-ldflags=-X main.stampedVersion=v9.8.7")
	if !strings.Contains(release, "version  v9.8.7\n") {
		t.Errorf("a release build stamped v9.8.7:\n%s", release)
	}
}

// gitCheckout returns the commit checked out, if the package is in a git
// checkout whose .git is a directory: one whose builds Go stamps.
func gitCheckout(t *testing.T) (string, bool) {
	t.Helper()
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Log("not a git checkout with a .git directory (a worktree?): Go records no commit")
		return "", false
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(head)), err == nil
}
