//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// ownSession is a command that starts a process in a session of its own
// (setsid), which writes its PID to the file pidFile and sleeps: out of the
// command's process group, so that no signal to the group reaches it.
// Then the command runs then (a shell command line).
func ownSession(pidFile, then string) []string {
	return []string{"sh", "-c", `setsid sh -c 'echo $$ > "$0"; exec sleep 60' "$0" >/dev/null 2>&1 & ` + then, pidFile}
}

// killAtEnd kills process pid when the test ends, should it have survived.
func killAtEnd(t *testing.T, pid int) {
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
}

// TestStopKillsProcessInItsOwnSession: rule 14, the wrapped command runs
// only while its instance leads. A process the command started in a
// session of its own gets none of the process group's signals; stopping
// the command (SIGTERM to leasehold here) stops it too, before leasehold
// releases the lease. Red team #3.
func TestStopKillsProcessInItsOwnSession(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	wait, stderr := started(t, ctx, append([]string{"run", "--lease", "mem://" + memName("own-session-stop"), "--"}, ownSession(pidFile, "wait")...)...)
	pid := pidIn(t, pidFile)
	killAtEnd(t, pid)
	cancel()
	if code := wait(); code != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	if alive(pid) {
		t.Errorf("process %d, started by the command in a session of its own, still runs after leasehold stopped the command and released the lease", pid)
	}
}

// TestCommandExitKillsOrphanInItsOwnSession: rule 14. The command starts a
// process in a session of its own and exits at once, so that the process
// has no parent left in the command's tree; leasehold adopts it (a child
// subreaper) and kills it before it releases the lease. leasehold built
// as users run it (the subreaper is the binary's, not this test
// process's). Red team #3: it ran on after leasehold had released the
// lease and returned. Then the same with a process handed the command's
// LEASEHOLD_TOKEN alone (env -i: the usual way to pass a fencing token to
// a daemon), which the second red team found judged another command's.
func TestCommandExitKillsOrphanInItsOwnSession(t *testing.T) {
	for _, tc := range []struct{ name, env string }{
		{"environment kept", ""},
		{"token alone", `env -i PATH="$PATH" LEASEHOLD_TOKEN="$LEASEHOLD_TOKEN" `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			argv := []string{"sh", "-c", `setsid ` + tc.env + `sh -c 'echo $$ > "$0"; exec sleep 60' "$0" >/dev/null 2>&1 & sleep 0.5; exit 0`, pidFile}
			cmd := exec.Command(filepath.Join(buildBinaries(t), "leasehold"), append([]string{"run", "--lease", "mem://orphan", "--"}, argv...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("leasehold run: %v; output:\n%s", err, out)
			}
			pid := pidIn(t, pidFile)
			killAtEnd(t, pid)
			if alive(pid) {
				t.Errorf("process %d, started by the command in a session of its own (%s), still runs after leasehold released the lease and returned; output:\n%s", pid, tc.name, out)
			}
		})
	}
}

// TestAdoptedProcessesAreReaped: the processes leasehold adopts as a child
// subreaper are reaped when they exit, leaving no zombie, while the
// command runs on.
func TestAdoptedProcessesAreReaped(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(filepath.Join(buildBinaries(t), "leasehold"), "run", "--lease", "mem://reaped", "--",
		"sh", "-c", `for i in 1 2 3 4 5; do (setsid sh -c 'echo $$ >> "$0"' "$0" &); done; sleep 60`, pidFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	var pids []string
	eventually(t, 10*time.Second, "five processes wrote their PIDs", func() bool {
		b, _ := os.ReadFile(pidFile)
		pids = strings.Fields(string(b))
		return len(pids) == 5
	})
	eventually(t, 10*time.Second, "the five processes, which exited, were reaped", func() bool {
		for _, pid := range pids {
			if _, err := os.Stat("/proc/" + pid); err == nil {
				return false
			}
		}
		return true
	})
}

// TestWaitOutputsStopsEveryPipe: once the output's drain time is over,
// every copy still running is stopped, the second as the first: a process
// that escaped the command's family and holds both its stdout and stderr
// does not keep leasehold waiting. (The second used to wait on a nil
// channel, for ever.)
func TestWaitOutputsStopsEveryPipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &child{}
		for range 2 {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c.outputs = append(c.outputs, &output{r: r, done: make(chan struct{})})
		}
		start := time.Now()
		c.waitOutputs(outputDrain)
		if waited := time.Since(start); waited != outputDrain {
			t.Errorf("waitOutputs returned after %v, want %v", waited, outputDrain)
		}
		for i, o := range c.outputs {
			if _, err := o.r.Read(make([]byte, 1)); err == nil {
				t.Errorf("output %d: its pipe is still open", i+1)
			}
		}
	})
}

// TestMarked: a process leasehold adopted is of a command's family unless
// its environment carries one of the command's LEASEHOLD_ variables with
// another value: with all of them, some (the token alone, handed to a
// daemon), or none (rewritten, or unreadable), it is.
func TestMarked(t *testing.T) {
	c := &child{marks: []string{"LEASEHOLD_TOKEN=7", "LEASEHOLD_SHARD=2"}}
	for _, row := range []struct {
		name    string
		environ string
		want    bool
	}{
		{"Same", "HOME=/\x00LEASEHOLD_TOKEN=7\x00LEASEHOLD_SHARD=2\x00", true},
		{"Unreadable", "", true},
		{"Rewritten", "PATH=/bin\x00", true},
		{"TokenAlone", "PATH=/bin\x00LEASEHOLD_TOKEN=7\x00", true},
		{"ForeignVariable", "LEASEHOLD_TOKEN=7\x00LEASEHOLD_OTHER=x\x00", true},
		{"AnotherShard", "LEASEHOLD_TOKEN=7\x00LEASEHOLD_SHARD=3\x00", false},
		{"AnotherTerm", "LEASEHOLD_TOKEN=70\x00LEASEHOLD_SHARD=2\x00", false},
	} {
		t.Run(row.name, func(t *testing.T) {
			if got := c.marked([]byte(row.environ)); got != row.want {
				t.Errorf("marked(%q) = %v, want %v", row.environ, got, row.want)
			}
		})
	}
}
