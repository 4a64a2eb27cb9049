//go:build redteam14open && linux

package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// setting stops the whole group: TestRedTeam14SigtermStopsTheWholeGroup.)
func TestRedTeam14HangupOrBrokenLogPipeAbandonsTheCommand(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	for _, how := range []string{"SIGHUP", "broken stderr pipe"} {
		t.Run(how, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "worker")
			cmd := exec.Command(bin, "run", "--lease", "mem://rt14-hup", "--identity", "h", "--ttl", "2s", "--",
				"sh", "-c", `sleep 1000 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; wait`, pidFile)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() {
				_, _ = io.Copy(io.Discard, stderr) // until closed below
			}()
			worker := pidIn(t, pidFile)
			defer func() { _ = syscall.Kill(worker, syscall.SIGKILL) }()
			go func() { exited <- cmd.Wait() }()
			switch how {
			case "SIGHUP":
				_ = cmd.Process.Signal(syscall.SIGHUP)
			default:
				stderr.Close()                          // the log's reader goes away
				_ = cmd.Process.Signal(syscall.SIGTERM) // the next log line is written into the broken pipe
			}
			select {
			case err := <-exited:
				t.Logf("leasehold exited: %v", err)
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("leasehold did not exit")
			}
			if alive(worker) {
				t.Errorf("%s: leasehold is gone, and the worker its command started (pid %d, in the command's process group) runs on without the lease", how, worker)
			}
		})
	}
}
