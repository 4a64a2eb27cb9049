package main

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr starts the command in a process group of its own, so that
// signals reach everything it started and a Ctrl-C at a terminal reaches
// only leasehold, and asks the kernel to SIGKILL it when leasehold dies
// (Pdeathsig), so that a leasehold killed with SIGKILL cannot leave a
// leader running without its lease. Pdeathsig reaches the command itself,
// not the processes the command started: a shell script should exec its
// worker.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// diesWithLeasehold says whether sysProcAttr makes the command die with
// leasehold.
const diesWithLeasehold = true

// waitExited blocks until the process pid has exited, without reaping it, and
// reports whether it could: while the process is not reaped its ID, and
// so its process group's ID, cannot be reused.
func waitExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// hasExited reports at once whether the process pid has exited, without
// reaping it (waitid's WNOHANG, which leaves the siginfo zeroed while it
// runs).
func hasExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if err != unix.EINTR {
			return err == nil && info.Signo != 0
		}
	}
}
