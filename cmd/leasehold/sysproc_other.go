//go:build unix && !linux

package main

import "syscall"

// sysProcAttr starts the command in a process group of its own. Only Linux
// can make it die with leasehold (Pdeathsig): elsewhere a leasehold killed
// with SIGKILL leaves its command running (the help and
// docs/run.md#the-command-never-outlives-the-lease say what to do instead).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

const diesWithLeasehold = false
