//go:build linux

package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
)

// Red team 14: what was tried and held, kept as regression tests.

// TestRedTeam14LeaseStartGivesUpAtStartTimeout: with one lease (no
// --shards), a store whose every call hangs is given up on once
// --start-timeout has passed (the call timeout bounds each try), with
// exit 69: the counterpart of TestRedTeam14GroupStartHangsPastStartTimeout.
func TestRedTeam14LeaseStartGivesUpAtStartTimeout(t *testing.T) {
	for _, args := range [][]string{
		{"status"},
		{"break"},
		{"check"},
	} {
		t.Run(args[0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				id := memName("rt14-hang-lease-" + args[0])
				memlease.Default.Hang(id)
				defer memlease.Default.Heal(id)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				done := make(chan int, 1)
				go func() {
					env, _, _ := testEnv(nil)
					full := append([]string{args[0], "--lease", "mem://" + id, "--identity", id, "--start-timeout", "1s"}, args[1:]...)
					done <- mainWith(ctx, nil, full, env)
				}()
				time.Sleep(time.Hour)
				select {
				case code := <-done:
					if code != exitUnavailable {
						t.Errorf("exit %d, want %d", code, exitUnavailable)
					}
				default:
					t.Errorf("leasehold %s with a store that hangs still waits an hour after --start-timeout (1s)", args[0])
					cancel()
					<-done
				}
			})
		})
	}
}

// TestRedTeam14SigtermStopsTheWholeGroup: the control of
// TestRedTeam14HangupOrBrokenLogPipeAbandonsTheCommand: on SIGTERM,
// leasehold stops the command's whole process group, the worker a shell
// started in the background included, before it exits.
func TestRedTeam14SigtermStopsTheWholeGroup(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	pidFile := filepath.Join(t.TempDir(), "worker")
	cmd := exec.Command(bin, "run", "--lease", "mem://rt14-term", "--identity", "h", "--ttl", "2s", "--",
		"sh", "-c", `sleep 1000 & echo $! > "$0.tmp"; mv "$0.tmp" "$0"; wait`, pidFile)
	cmd.Stderr = &syncBuffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	worker := pidIn(t, pidFile)
	defer func() { _ = syscall.Kill(worker, syscall.SIGKILL) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("leasehold did not exit")
	}
	if alive(worker) {
		t.Errorf("leasehold exited after SIGTERM, and the worker its command started (pid %d) runs on", worker)
	}
}
