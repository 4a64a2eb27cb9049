//go:build unix && !linux

package main

import (
	"log/slog"
	"syscall"
)

// signalProcess sends sig to process pid, which started at start when the
// process table was read a moment ago: a process ID freed and given to
// another process within that moment is the gap of this path.
func signalProcess(pid int, _ uint64, sig syscall.Signal) { _ = syscall.Kill(pid, sig) }

// environOf is nil: only Linux adopts orphans (becomeSubreaper).
func environOf(int) []byte { return nil }

// becomeSubreaper does nothing: only Linux has child subreapers. A process
// of the command's family whose parent exits before leasehold has seen it
// is adopted by process 1 (launchd), where leasehold cannot tell it from
// any other, and outlives the command.
func becomeSubreaper(*slog.Logger) {}
