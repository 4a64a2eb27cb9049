//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A command's family is every process descended from it: what it started,
// what those started, and so on, whatever process group or session they
// moved to (setsid, a daemon's double fork), which a signal to the
// command's process group does not reach. child.signal sends each signal
// to the group and to the family, so that nothing the command started
// outlives its term.
//
// The family is found by walking the system's processes (processTable) by
// their parent links, from the command and from the processes seen in the
// family before (kept by process ID and start time, so that a reused ID is
// not mistaken for one of them). A process whose parent exits is adopted:
// elsewhere by process 1 or the nearest subreaper, where nothing links it
// to the command any more; on Linux, leasehold run is a child subreaper
// (becomeSubreaper), so leasehold adopts it, and it is of the family when
// its environment (environOf) carries none of the command's LEASEHOLD_
// variables (child.marks) with another value (a process with none of
// them may be any command's, and is treated as every command's). leasehold reaps the
// processes it adopts (reapAdopted), never the ones it started (own).

// procInfo is one process of a snapshot of the system's processes.
type procInfo struct {
	ppid, pgid int
	// start is when the process started, in the platform's unit: with
	// the process ID it names one process, even once the ID is reused.
	start  uint64
	zombie bool
}

// adopting is set once leasehold is a child subreaper (becomeSubreaper):
// the orphans of its commands' families become its children.
var adopting atomic.Bool

// own is the processes leasehold started itself (its commands, the shells
// of --health-cmd), which only their starters reap. Every other child of
// leasehold was adopted, and reapAdopted reaps it, under the same lock.
var own = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

// startOwn starts cmd and notes its process as one leasehold started.
func startOwn(cmd *exec.Cmd) error {
	own.Lock()
	defer own.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	own.pids[cmd.Process.Pid] = true
	return nil
}

// disown forgets the process pid that startOwn started, once it is reaped.
func disown(pid int) {
	own.Lock()
	defer own.Unlock()
	delete(own.pids, pid)
}

// familyRounds bounds how many times signalFamily walks the processes:
// processes fork while it walks, and a killed one takes a moment to die.
const familyRounds = 200

// familyPause is the pause between two walks (a variable for tests).
var familyPause = 5 * time.Millisecond

// signalFamily sends sig to the command's family (but the members of its
// process group while the group gets the signal too), walking the
// processes again until no new member appears, and with SIGKILL until
// none is left alive (or familyRounds walks). Call it under mu.
func (c *child) signalFamily(sig syscall.Signal) {
	sent := map[int]uint64{}
	for range familyRounds {
		table := processTable()
		if table == nil {
			return
		}
		alive, fresh := 0, 0
		for pid, p := range c.familyIn(table) {
			if p.zombie {
				continue
			}
			alive++
			if start, ok := sent[pid]; ok && start == p.start && sig != syscall.SIGKILL {
				continue
			}
			if !c.reaped && p.pgid == c.pid {
				continue // the group's signal reached it
			}
			signalProcess(pid, p.start, sig)
			sent[pid] = p.start
			fresh++
		}
		if alive == 0 || fresh == 0 && sig != syscall.SIGKILL {
			return
		}
		if sig != syscall.SIGKILL && c.killing.Load() > 0 {
			return // a SIGKILL waits: it reaches the whole family
		}
		time.Sleep(familyPause)
	}
}

// familyIn returns the command's family in table, the command excluded,
// and keeps it in c.family for the next walk. Call it under mu.
func (c *child) familyIn(table map[int]procInfo) map[int]procInfo {
	kids := map[int][]int{}
	for pid, p := range table {
		kids[p.ppid] = append(kids[p.ppid], pid)
	}
	out := map[int]procInfo{}
	var todo []int
	add := func(pid int) {
		if _, seen := out[pid]; !seen && pid != c.pid {
			out[pid] = table[pid]
			todo = append(todo, pid)
		}
	}
	if !c.reaped {
		todo = append(todo, c.pid)
	}
	for pid, start := range c.family {
		if p, ok := table[pid]; ok && p.start == start {
			add(pid)
		}
	}
	if adopting.Load() {
		own.Lock()
		for _, pid := range kids[os.Getpid()] {
			if !own.pids[pid] && c.marked(environOf(pid)) {
				add(pid)
			}
		}
		own.Unlock()
	}
	for len(todo) > 0 {
		pid := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, k := range kids[pid] {
			add(k)
		}
	}
	c.family = map[int]uint64{}
	for pid, p := range out {
		if !p.zombie {
			c.family[pid] = p.start
		}
	}
	return out
}

// marked reports whether a process whose environment is environ (NUL
// separated, as the platform keeps it) may be of the command's family: it
// carries none of the command's LEASEHOLD_ variables (child.marks) with
// another value. So a process handed the command's token alone (a daemon
// started with env -i) is, and one that rewrote its environment is too;
// one with another term's token or another shard is not.
func (c *child) marked(environ []byte) bool {
	for _, v := range bytes.Split(environ, []byte{0}) {
		key, _, ok := bytes.Cut(v, []byte("="))
		if !ok || !bytes.HasPrefix(key, []byte("LEASEHOLD_")) {
			continue
		}
		for _, m := range c.marks {
			if mk, _, _ := strings.Cut(m, "="); mk == string(key) && m != string(v) {
				return false
			}
		}
	}
	return true
}
