//go:build unix

package main

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// child is one run of the command, in a process group of its own whose ID
// is the command's PID. leasehold signals the group, never the command
// alone, and the rest of the command's family (see family.go), so that
// what the command started stops with it. It reaps the
// command itself (exec.Cmd.Wait is never called), so that it knows, under
// mu, whether the group ID is still the command's: once the command is
// reaped its ID, and so its group's, may be given to a new process, and a
// signal to the group could reach a stranger.
//
// The path is the same on every Unix: signals go to the group while the
// command is not reaped, and the command is reaped by wait4 under mu (see
// tryReap). Linux refines it (exitedUnreaped): it learns of the exit
// without reaping, so the command's leftovers are killed while its zombie
// still holds the group ID.
type child struct {
	pid     int
	exited  chan struct{}      // closed when the command was reaped and its output copied
	status  syscall.WaitStatus // the command's end, once exited is closed
	outputs []*output
	// unreaped is exitedUnreaped, if this command takes that path.
	unreaped func(pid int) bool
	// marks are the LEASEHOLD_ variables of the command's environment,
	// which the processes it starts inherit (see family.go).
	marks []string

	// killing counts the SIGKILLs waiting for mu: they cut short the
	// walks of another signal's signalFamily (see signal).
	killing atomic.Int32

	mu     sync.Mutex
	reaped bool // the process ID may have been reused: send no more signals
	// family is the command's family as last seen: process ID to start
	// time (see family.go).
	family map[int]uint64
}

// signal sends sig to the command's process group, unless it has been
// reaped, and to the rest of its family (see family.go).
//
// A SIGKILL does not wait for another signal's walks of the family:
// signalFamily walks again while each walk finds a new member, up to
// familyRounds, familyPause apart, under mu, and a family that keeps
// starting processes (a pool of short tasks in a session of its own) kept
// the SIGKILL due at the kill deadline waiting for seconds behind the
// SIGTERM, past the lease (red team 16). A waiting SIGKILL ends those
// walks after the one under way.
func (c *child) signal(sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		c.killing.Add(1)
		defer c.killing.Add(-1)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The family is seen before the group's signal can end a parent, and
	// so unlink its children from the command.
	c.familyIn(processTable())
	if !c.reaped {
		_ = syscall.Kill(-c.pid, sig)
	}
	c.signalFamily(sig)
}

// exitedYet reports, without waiting, whether the command has exited,
// reaped or not: supervise asks when the term ends, to tell a command that
// exited by itself before leasehold signalled it from one it stops. On
// the portable path it reaps a command that has exited, as reap would.
func (c *child) exitedYet() bool {
	if c.unreaped == nil {
		return c.tryReap(true)
	}
	c.mu.Lock() // the reap waits, so the exit is seen either way
	defer c.mu.Unlock()
	return c.reaped || exitedNow(c.pid)
}

// exitedNow, set where exitedUnreaped is, reports at once whether process
// pid has exited, without reaping it.
var exitedNow func(pid int) bool

// exitedUnreaped, where the platform can (Linux: waitid with WNOWAIT),
// blocks until process pid has exited, without reaping it, and reports
// whether it could. It is nil elsewhere, and in builds with the
// leasehold_portable tag.
var exitedUnreaped func(pid int) bool

// portableOnly makes the commands started from now on take the portable
// path even where exitedUnreaped is set: tests run it on Linux so.
var portableOnly atomic.Bool

// watchExits chooses the command's path, before it starts: where
// exitedUnreaped is used it returns nil; else a channel told of every
// SIGCHLD from now on, for the portable path to wake on, so that the
// command's exit is not missed. signal.Stop the channel once it is reaped.
func (c *child) watchExits() chan os.Signal {
	if c.unreaped = exitedUnreaped; c.unreaped != nil && !portableOnly.Load() {
		return nil
	}
	c.unreaped = nil
	wake := make(chan os.Signal, 1)
	signal.Notify(wake, syscall.SIGCHLD)
	return wake
}

// reap waits until the command has exited, kills what it left behind in
// its process group and the rest of its family (nothing it started may
// outlive the term), and reaps it. wake is watchExits's channel.
func (c *child) reap(wake <-chan os.Signal) {
	defer disown(c.pid)
	if c.unreaped != nil && c.unreaped(c.pid) {
		// Exited, and its zombie keeps the group ID: the kill reaches
		// exactly the group's leftovers.
		c.signal(syscall.SIGKILL)
		for !c.tryReap(false) {
		}
		return
	}
	for !c.tryReap(true) {
		select {
		case <-wake:
		case <-time.After(reapPoll):
		}
	}
	c.signal(syscall.SIGKILL) // the family; the group had its SIGKILL
}

// reapPoll bounds how long the portable path may take to notice the
// command's exit should its SIGCHLD be lost.
const reapPoll = 250 * time.Millisecond

// tryReap reaps the command if it has exited, and reports whether it did.
// The reap and the flag that stops signal happen under mu, so no signal is
// sent after the group ID may have been freed. With killLeftovers (the
// portable path), the group's leftovers get SIGKILL in the same breath: a process group ID is not reused while a
// member remains, so the kill reaches exactly them. With none left it finds
// no group, unless within these microseconds the system handed out every
// other process ID and a new group leader got this one: the one gap of the
// portable path, which Linux closes by killing the leftovers before the
// reap.
func (c *child) tryReap(killLeftovers bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return true
	}
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(c.pid, &ws, syscall.WNOHANG, nil)
	switch {
	case err == syscall.EINTR, err == nil && pid == 0:
		return false
	case err != nil:
		// ECHILD: reaped elsewhere, which leasehold never does. Its
		// status is lost: report exit status 1.
		ws = 1 << 8
	}
	c.reaped, c.status = true, ws
	if killLeftovers {
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	}
	return true
}

// waitOutputs waits for the copies of the command's output to end, for at
// most limit in all: longer only when a process outside the command's
// family holds its stdout or stderr. Then it stops those still copying.
func (c *child) waitOutputs(limit time.Duration) {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	over := false
	for _, o := range c.outputs {
		if o.done == nil {
			continue
		}
		if !over {
			select {
			case <-o.done:
				continue
			case <-deadline.C:
				over = true
			}
		}
		o.r.Close()
	}
}

// outputDrain is how long after the command was reaped leasehold waits for
// the rest of its output.
const outputDrain = time.Second
