package rule11_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// old is the last commit before annotations.
const old = "519cf6f"

// packages are the backends' codecs, by folder: the JSON records (memory,
// S3, Cloud Storage), DynamoDB items, Azure blob metadata.
var packages = []string{"lease/driver", "lease/dynamolease", "lease/azurelease"}

// TestOldVersion runs 519cf6f's decoders on this version's fixtures: it
// extracts that commit with git archive into a temporary folder, adds this
// package (with 519cf6f's schedule.go) and each backend's rule11_test.go,
// and runs their TestRule11 there on this tree's testdata. With
// LEASEHOLD_RULE11_UPDATE=1 it rewrites the 519cf6f fixtures with 519cf6f's
// encoders. It skips under -short, and where git or the commit is missing
// (a shallow clone).
func TestOldVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds commit " + old + "; skipped with -short")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	root := strings.TrimSpace(string(top))
	if err := exec.Command("git", "-C", root, "cat-file", "-e", old+"^{commit}").Run(); err != nil {
		t.Skipf("commit %s is not in this clone (a shallow one?): %v", old, err)
	}
	tmp := t.TempDir()
	run(t, root, "sh", "-c", "git archive --format=tar "+old+" | tar -x -C "+tmp)
	copyFile(t, filepath.Join(root, "lease/internal/rule11/rule11.go"), filepath.Join(tmp, "lease/internal/rule11/rule11.go"))
	copyFile(t, filepath.Join(root, "lease/internal/rule11/testdata/v"+old+"/schedule.go.txt"), filepath.Join(tmp, "lease/internal/rule11/schedule.go"))
	for _, p := range packages {
		copyFile(t, filepath.Join(root, p, "rule11_test.go"), filepath.Join(tmp, p, "rule11_test.go"))
	}
	for _, p := range packages {
		cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRule11$", "./"+p)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "LEASEHOLD_RULE11_DIR="+filepath.Join(root, p, "testdata/rule11"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s at %s, on this version's records: %v\n%s", p, old, err, out)
		}
	}
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
