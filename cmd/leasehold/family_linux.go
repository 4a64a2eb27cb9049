package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// processTable reads every process's parent, group, start time and state
// from /proc/PID/stat; nil if /proc cannot be read.
func processTable() map[int]procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	table := make(map[int]procInfo, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			table[pid] = p
		}
	}
	return table
}

// readStat reads process pid's /proc/PID/stat: its fields after the
// command's name (which may hold spaces and parentheses) are the state,
// the parent, the group, ... and the start time, 20th after the state.
func readStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{ppid: ppid, pgid: pgid, start: start, zombie: string(f[0]) == "Z" || string(f[0]) == "X"}, true
}

// signalProcess sends sig to process pid if it is still the one that
// started at start: through a pidfd, which names that process and no
// other, once its start time has been checked again.
func signalProcess(pid int, start uint64, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) { // Linux before 5.3
		_ = syscall.Kill(pid, sig)
		return
	}
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	if p, ok := readStat(pid); ok && p.start == start {
		_ = unix.PidfdSendSignal(fd, sig, nil, 0)
	}
}

// environOf returns process pid's environment as it started, NUL
// separated; nil when it cannot be read (a zombie's, another user's).
func environOf(pid int) []byte {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return b
}

// adoptedZombies returns the zombies among leasehold's children in table
// that it did not start: the adopted processes to reap. Call it under own.
func adoptedZombies(table map[int]procInfo) []int {
	var out []int
	self := os.Getpid()
	for pid, p := range table {
		if p.ppid == self && p.zombie && !own.pids[pid] {
			out = append(out, pid)
		}
	}
	return out
}

var subreaper sync.Once

// becomeSubreaper makes leasehold a child subreaper (PR_SET_CHILD_SUBREAPER):
// a process of a command's family whose parent exits becomes leasehold's
// child, not process 1's, so that it stays in reach (see family.go); and
// starts reaping the processes so adopted when they exit.
func becomeSubreaper(log *slog.Logger) {
	subreaper.Do(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			log.Warn("cannot become a child subreaper: a process the command starts in a session of its own escapes once its parent exits", "err", err)
			return
		}
		adopting.Store(true)
		wake := make(chan os.Signal, 1)
		signal.Notify(wake, syscall.SIGCHLD)
		go reapAdopted(wake)
	})
}

// reapAdopted reaps, at every SIGCHLD, the processes leasehold adopted
// that have exited, never one that it started (own), which its starter
// reaps.
func reapAdopted(wake <-chan os.Signal) {
	for range wake {
		own.Lock()
		for _, pid := range adoptedZombies(processTable()) {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		}
		own.Unlock()
	}
}
