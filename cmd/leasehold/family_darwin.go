package main

import "golang.org/x/sys/unix"

// processTable reads every process's parent, group, start time and state
// from the kernel (sysctl kern.proc.all); nil if it cannot.
func processTable() map[int]procInfo {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	table := make(map[int]procInfo, len(procs))
	for _, p := range procs {
		start := uint64(p.Proc.P_starttime.Sec)*1e6 + uint64(p.Proc.P_starttime.Usec)
		table[int(p.Proc.P_pid)] = procInfo{ppid: int(p.Eproc.Ppid), pgid: int(p.Eproc.Pgid), start: start, zombie: p.Proc.P_stat == szomb}
	}
	return table
}

// szomb is the state of a zombie (SZOMB in sys/proc.h).
const szomb = 5
