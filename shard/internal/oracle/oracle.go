// Package oracle sees every start and end of every shard function of a
// group and counts what package shard promises never happens: a shard
// started while another worker still runs it, an epoch that does not
// increase, and, in a group with a cap (shard.Config.MaxPerWorker), a
// worker that runs more shards than the cap. The simulation in package shard's tests and the shard
// conformance suite (shard/shardtest) both judge a group with it.
package oracle

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"
)

// Oracle watches the n shards of one group. Its methods are safe for
// concurrent use.
type Oracle struct {
	mu        sync.Mutex
	owner     []string
	epoch     []uint64
	count     map[string]int
	starts    int
	overlaps  int
	backwards int
	first     string    // the first violation, for the failure message
	firstAt   time.Time // when it happened
	dead      map[string]bool
	// started is when each shard's latest epoch started; lostLease and
	// lostAssignment every time the store lost the assigner lease's
	// record and the assignment (see Lost).
	started                   []time.Time
	lostLease, lostAssignment []time.Time
	// wrote is every assignment's write: its Gen, its term's fence's, and
	// when (see Wrote).
	wrote []write
	// waived counts the starts whose epoch did not increase beyond the
	// Gens' limit; waivedFirst is the first of them.
	waived      int
	waivedFirst string
	// perWorker is the group's cap, 0 for none (see LimitPerWorker);
	// crowded counts the starts that took a worker above it. running is
	// how many shards each worker's running process runs, by identity:
	// a process killed (Crash) runs none, however late its functions'
	// ends are reported; process[id] counts id's processes, and
	// startedBy[index] is the process that started the shard.
	perWorker int
	crowded   int
	running   map[string]int
	process   map[string]int
	startedBy []int
}

// Loss is a record of the group that the store lost: deleted, or
// restored to an earlier version.
type Loss int

const (
	// AssignerLease is the assigner lease's record, which says its
	// holder's token and the high half of its Gens.
	AssignerLease Loss = iota
	// Assignment is the assignment, which names the latest Gens.
	Assignment
)

// New returns an Oracle of n shards, none running.
func New(n int) *Oracle {
	return &Oracle{owner: make([]string, n), epoch: make([]uint64, n), count: map[string]int{}, dead: map[string]bool{}, started: make([]time.Time, n),
		running: map[string]int{}, process: map[string]int{}, startedBy: make([]int, n)}
}

// LimitPerWorker makes the group's cap perWorker (shard.Config.MaxPerWorker):
// a start that makes a worker run more than perWorker shards at once is a
// violation (Crowded), and Balanced expects min(n, M·perWorker) shards to
// run. Call it before the first Start.
func (o *Oracle) LimitPerWorker(perWorker int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.perWorker = perWorker
}

// Crowded returns the starts that made a worker run more shards than the
// group's cap (LimitPerWorker).
func (o *Oracle) Crowded() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.crowded
}

// Start records that worker id started shard index with epoch.
func (o *Oracle) Start(id string, index int, epoch uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.starts++
	if prev := o.owner[index]; prev != "" {
		o.overlaps++
		o.note(fmt.Sprintf("%v: shard %d started on %s (epoch %d) while %s ran it", time.Now().Format(time.TimeOnly), index, id, epoch, prev))
	}
	if epoch <= o.epoch[index] {
		what := fmt.Sprintf("%v: shard %d started on %s with epoch %d after epoch %d", time.Now().Format(time.TimeOnly), index, id, epoch, o.epoch[index])
		if o.beyondLimit(index, o.epoch[index], epoch) {
			o.waived++
			if o.waivedFirst == "" {
				o.waivedFirst = what
			}
		} else {
			o.backwards++
			o.note(what)
		}
	}
	o.owner[index], o.epoch[index], o.started[index] = id, epoch, time.Now()
	o.count[id]++
	o.running[id]++
	o.startedBy[index] = o.process[id]
	if o.perWorker > 0 && o.running[id] > o.perWorker {
		o.crowded++
		o.note(fmt.Sprintf("%v: shard %d started on %s (epoch %d), which then ran %d shards, above the cap %d", time.Now().Format(time.TimeOnly), index, id, epoch, o.running[id], o.perWorker))
	}
}

// Lost records that the store lost what, now.
func (o *Oracle) Lost(what Loss) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch what {
	case AssignerLease:
		o.lostLease = append(o.lostLease, time.Now())
	case Assignment:
		o.lostAssignment = append(o.lostAssignment, time.Now())
	}
}

// write is an assignment's write: its Gen, the Gen of the fence of the
// assigner term that wrote it, and when.
type write struct {
	gen, fence uint64
	at         time.Time
}

// Wrote records that an assignment with Gen gen was written, now (or may
// have been: a write whose answer was lost counts from when it returned),
// by the assigner term whose fence had Gen fence (the assignment's
// FenceGen; 0 if unknown).
func (o *Oracle) Wrote(gen, fence uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.wrote = append(o.wrote, write{gen, fence, time.Now()})
}

// beyondLimit reports whether epoch next of shard index, which does not
// increase after epoch, is the Gens' limit of package shard's doc ("Gens
// go back only when the new assigner can read none of the later ones,
// because the assigner lease's record was deleted or restored ..., the
// assignment and every acknowledgement that named them were deleted or
// restored ..."): the store lost the assigner lease's record, which says
// the high half of epoch, since the term that wrote epoch wrote its fence,
// and the assignment since the last write of a Gen at or above epoch,
// both before the last write of next (the assigner that wrote it read the
// store before; with no such write reported, before now). The term is the
// one whose write of epoch the shard started from: the last before its
// start (or the first, when a write whose answer came late was reported
// only after the start). Its fence is that term's latest write of the
// fence's Gen before it (a fence's Gen repeats when a term after both
// losses reads neither record, red team 20); with the fence unknown, or
// its write not reported, the write of epoch itself counts, as the term's
// earlier writes cannot be told from another term's of the same token. With no
// write of epoch reported, both losses count since the shard's latest
// epoch started, which came after its Gen's write. A loss before that
// term's fence hides nothing of it: a term whose lease was taken after a
// delete may repeat an earlier term's token, and the next assigner reads
// its record (red team 19). Overlaps are never waived.
func (o *Oracle) beyondLimit(index int, epoch, next uint64) bool {
	started := o.started[index]
	high, latest, end := started, started, time.Now()
	var fence uint64
	found := false
	for _, w := range o.wrote {
		if w.gen == epoch && (!found || !w.at.After(started)) {
			high, fence, found = w.at, w.fence, true
		}
	}
	wroteEpoch := high
	for _, w := range o.wrote {
		if fence != 0 && w.gen == fence && w.fence == fence && !w.at.After(wroteEpoch) {
			high = w.at
		}
	}
	for _, w := range o.wrote {
		if w.gen >= epoch {
			latest = w.at
		}
		if w.gen == next {
			end = w.at
		}
	}
	between := func(losses []time.Time, from time.Time) bool {
		return slices.ContainsFunc(losses, func(at time.Time) bool { return at.After(from) && !at.After(end) })
	}
	return between(o.lostLease, high) && between(o.lostAssignment, latest)
}

// Waived returns the starts whose epoch did not increase beyond the Gens'
// limit (see Lost), and the first of them.
func (o *Oracle) Waived() (int, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.waived, o.waivedFirst
}

// End records that worker id's function for shard index returned.
func (o *Oracle) End(id string, index int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.owner[index] == id {
		o.owner[index] = ""
	}
	o.count[id]--
	if o.startedBy[index] == o.process[id] {
		o.running[id]--
	}
}

// Crash marks id's process dead: its shard functions end at once.
func (o *Oracle) Crash(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dead[id] = true
	o.running[id] = 0
	o.process[id]++
}

// Restart marks a new process of id, after Crash: its shards are its own
// again, their functions take their time to stop.
func (o *Oracle) Restart(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.dead, id)
}

// Shards returns the shards id runs, by index.
func (o *Oracle) Shards(id string) []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []int
	for s, owner := range o.owner {
		if owner == id {
			out = append(out, s)
		}
	}
	return out
}

// Crashed reports whether Crash marked id dead.
func (o *Oracle) Crashed(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dead[id]
}

// note keeps s as the first violation if none came before it: of those
// at one instant, the least in text, so that the message does not depend
// on the order in which goroutines ran at that instant.
func (o *Oracle) note(s string) {
	now := time.Now()
	if o.first == "" || now.Before(o.firstAt) || now.Equal(o.firstAt) && s < o.first {
		o.first, o.firstAt = s, now
	}
}

// Balanced reports whether every shard runs (under a cap, min(n, M·cap)
// of them, M the live workers) and the live workers' counts differ by at
// most one.
func (o *Oracle) Balanced(live []string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	want := len(o.owner)
	if o.perWorker > 0 {
		want = min(want, len(live)*o.perWorker)
	}
	runs := 0
	for _, id := range o.owner {
		if id != "" {
			runs++
		}
	}
	if runs != want {
		return false
	}
	lo, hi := len(o.owner), 0
	total := 0
	for _, id := range live {
		lo, hi = min(lo, o.count[id]), max(hi, o.count[id])
		total += o.count[id]
	}
	return total == want && hi-lo <= 1
}

// Counts returns how many shards each of ids runs.
func (o *Oracle) Counts(ids []string) []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = o.count[id]
	}
	return out
}

// Starts returns how many shard starts it has seen.
func (o *Oracle) Starts() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.starts
}

// Violations returns the starts of a shard while another worker ran it,
// the starts whose epoch did not increase, and the first of either, as a
// sentence ("" when there were none).
func (o *Oracle) Violations() (overlaps, backwards int, first string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.overlaps, o.backwards, o.first
}

// MinMoves is the fewest starts that balance counts (the live workers'
// shards) when unowned shards must start too: the unowned, and each
// worker's excess over its share, the larger shares going to the workers
// that hold most.
func MinMoves(counts []int, unowned int) int {
	c := slices.Clone(counts)
	sort.Sort(sort.Reverse(sort.IntSlice(c)))
	n := unowned
	for _, x := range c {
		n += x
	}
	moves := unowned
	for i, x := range c {
		share := n / len(c)
		if i < n%len(c) {
			share++
		}
		moves += max(0, x-share)
	}
	return moves
}
