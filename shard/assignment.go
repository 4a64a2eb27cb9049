package shard

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// MaxShards is the largest number of shards a group may have.
const MaxShards = 100_000

// assignment is the group's one assignment object: which worker term owns
// which shard, written by the assigner only when ownership changes.
type assignment struct {
	// Gen is the assigner's token in the high 32 bits, raised above the
	// high half of every Gen the assigner knows of (assigner.raise), and a
	// count of its writes in the low: strictly greater than every earlier
	// Gen, across assigners too.
	Gen uint64
	// Fence marks the first assignment of an assigner's term: workers stop
	// what it does not give them and acknowledge it, and start nothing.
	Fence bool
	// Shards, TTL and Renew are the group's: every worker must use them.
	Shards     int
	TTL, Renew time.Duration
	Members    []member
	Slots      []slot // len Shards
	// Expect, if not zero, is when (on the wall clock) the assigner expects
	// to write the next assignment: the earliest moment a worker whose
	// renewals stopped can be judged expired. Workers read the assignment
	// just after it, as well as every renew interval, so that the shards
	// of a crashed worker start elsewhere without waiting for their next
	// read. It only times reads: a wrong clock costs time, never safety.
	Expect time.Time
	// FenceGen is the Gen of the fence of the assigner term that wrote
	// this (see assigner.fence): the epoch of the shards it kept through
	// the fence, which their runs started under lower ones. 0 in an
	// assignment of an earlier version, whose fences had a low half of 0.
	FenceGen uint64
	// MaxPerWorker is the group's cap on the shards of one worker term
	// (Config.MaxPerWorker), fixed for the group as Shards is: 0 for none,
	// and in an assignment of an earlier version, which had no cap.
	MaxPerWorker int
}

// member is one worker term named in an assignment.
type member struct {
	ID    string
	Token uint64 // the term's token (see termToken)
	// ReleaseGen is the Gen from which the term must have acknowledged
	// (Ack.Applied) before its releasing shards are free.
	ReleaseGen uint64
}

// slot is one shard's ownership.
type slot struct {
	Owner     int // index into Members; -1: no owner
	Releasing bool
	// Epoch is the Gen of the assignment that gave the shard to Owner:
	// the fencing token of its start.
	Epoch uint64
}

// term names one liveness term of one worker.
type term struct {
	ID    string
	Token uint64
}

func (a *assignment) owner(s int) (term, bool) {
	o := a.Slots[s].Owner
	if o < 0 {
		return term{}, false
	}
	return term{a.Members[o].ID, a.Members[o].Token}, true
}

// memberOf returns the index of t in Members, or -1.
func (a *assignment) memberOf(t term) int {
	for i, m := range a.Members {
		if m.ID == t.ID && m.Token == t.Token {
			return i
		}
	}
	return -1
}

var assignmentMagic = []byte("leasehold-shards\x01")

// encode returns the assignment's compact binary form: a magic, then
// unsigned varints (slots as (owner+1)<<1|releasing and epoch), then,
// only when set, Expect in Unix milliseconds, FenceGen and MaxPerWorker,
// each of them written (as 0 when unset) when one after it is set. A
// later version may append fields after MaxPerWorker, which this
// version's decoder skips (rule 11). An uncapped assignment is written as
// the versions before MaxPerWorker wrote it, and one of theirs reads as
// uncapped.
func (a *assignment) encode() []byte {
	b := append([]byte(nil), assignmentMagic...)
	fence := uint64(0)
	if a.Fence {
		fence = 1
	}
	for _, v := range []uint64{a.Gen, fence, uint64(a.Shards), uint64(a.TTL.Milliseconds()), uint64(a.Renew.Milliseconds()), uint64(len(a.Members))} {
		b = binary.AppendUvarint(b, v)
	}
	for _, m := range a.Members {
		b = binary.AppendUvarint(b, uint64(len(m.ID)))
		b = append(b, m.ID...)
		b = binary.AppendUvarint(b, m.Token)
		b = binary.AppendUvarint(b, m.ReleaseGen)
	}
	for _, s := range a.Slots {
		v := uint64(s.Owner+1) << 1
		if s.Releasing {
			v |= 1
		}
		b = binary.AppendUvarint(b, v)
		b = binary.AppendUvarint(b, s.Epoch)
	}
	switch {
	case !a.Expect.IsZero():
		b = binary.AppendUvarint(b, uint64(max(a.Expect.UnixMilli(), 1)))
	case a.FenceGen != 0 || a.MaxPerWorker != 0:
		b = binary.AppendUvarint(b, 0) // no Expect, before a later field
	}
	if a.FenceGen != 0 || a.MaxPerWorker != 0 {
		b = binary.AppendUvarint(b, a.FenceGen)
	}
	if a.MaxPerWorker != 0 {
		b = binary.AppendUvarint(b, uint64(a.MaxPerWorker))
	}
	return b
}

// The fewest bytes a member and a slot take in the encoding: an identity
// of one byte after its length, a token and a release Gen; an owner and an
// epoch.
const (
	minMemberBytes = 4
	minSlotBytes   = 2
)

// decodeAssignment parses what encode wrote, and what a later version
// writes with fields appended after MaxPerWorker (skipped); anything else is
// lease.ErrCorrupt. Every count and length is bounded by the bytes left to
// read before anything is allocated for it, so hostile bytes (a length of
// 2^62) cost an error, not a panic or the process's memory.
func decodeAssignment(data []byte) (*assignment, error) {
	if !bytes.HasPrefix(data, assignmentMagic) {
		return nil, driver.Corruptf("shard: the assignment object is not a leasehold shard assignment")
	}
	r := bytes.NewReader(data[len(assignmentMagic):])
	var err error
	// next reads a varint of at most limit, or returns 0 and keeps the
	// first error.
	next := func(what string, limit uint64) uint64 {
		if err != nil {
			return 0
		}
		v, e := binary.ReadUvarint(r)
		switch {
		case e != nil:
			err = driver.Corruptf("shard: assignment: %s: %v", what, e)
		case v > limit:
			err = driver.Corruptf("shard: assignment: %s (%d) exceeds %d", what, v, limit)
		default:
			return v
		}
		return 0
	}
	left := func(per int) uint64 { return uint64(r.Len() / per) }
	a := &assignment{Gen: next("gen", 1<<63), Fence: next("fence", 1) == 1}
	a.Shards = int(next("shards", min(MaxShards, left(minSlotBytes))))
	a.TTL = time.Duration(next("TTL", 1<<40)) * time.Millisecond
	a.Renew = time.Duration(next("renew interval", 1<<40)) * time.Millisecond
	nm := next("members", min(MaxShards, left(minMemberBytes)))
	if nm > 0 {
		a.Members = make([]member, 0, nm)
	}
	for i := uint64(0); i < nm && err == nil; i++ {
		id := make([]byte, next("identity length", min(lease.MaxIdentityLen, left(1))))
		if _, e := io.ReadFull(r, id); e != nil && err == nil {
			err = driver.Corruptf("shard: assignment: identity: %v", e)
		}
		m := member{ID: string(id), Token: next("token", 1<<63), ReleaseGen: next("release gen", 1<<63)}
		if err == nil && lease.ValidateIdentity(m.ID) != nil {
			err = driver.Corruptf("shard: assignment: member %q is not a valid identity", m.ID)
		}
		a.Members = append(a.Members, m)
	}
	if err == nil && uint64(a.Shards) > left(minSlotBytes) {
		err = driver.Corruptf("shard: assignment: %d shards in %d bytes", a.Shards, r.Len())
	}
	if err == nil {
		a.Slots = make([]slot, 0, a.Shards)
	}
	for i := 0; i < a.Shards && err == nil; i++ {
		v := next("owner", (nm<<1)|1)
		a.Slots = append(a.Slots, slot{Owner: int(v>>1) - 1, Releasing: v&1 == 1, Epoch: next("epoch", 1<<63)})
	}
	if err == nil && r.Len() > 0 {
		if ms := next("expect", 1<<62); ms != 0 {
			a.Expect = time.UnixMilli(int64(ms))
		}
	}
	if err == nil && r.Len() > 0 {
		a.FenceGen = next("fence gen", 1<<63)
	}
	if err == nil && r.Len() > 0 {
		a.MaxPerWorker = int(next("shards per worker", MaxShards))
	}
	switch {
	case err != nil:
		return nil, err
	case a.Shards == 0:
		return nil, driver.Corruptf("shard: assignment: no shards")
	}
	return a, nil
}

// checkGroup reports, naming the field, a worker whose settings differ
// from the group's, as written in the assignment.
func (a *assignment) checkGroup(shards, perWorker int, ttl, renew time.Duration) error {
	switch {
	case a.Shards != shards:
		return &lease.OptionError{Pkg: "shard", Field: "Shards", Value: shards, Reason: fmt.Sprintf("differs from the group's %d: a group's shard count is fixed", a.Shards)}
	case a.MaxPerWorker != perWorker:
		return &lease.OptionError{Pkg: "shard", Field: "MaxPerWorker", Value: perWorker, Reason: fmt.Sprintf("differs from the group's %d: a group's cap is fixed", a.MaxPerWorker)}
	case a.TTL != ttl:
		return &lease.OptionError{Pkg: "shard", Field: "TTL", Value: ttl, Reason: fmt.Sprintf("differs from the group's %v", a.TTL)}
	case a.Renew != renew:
		return &lease.OptionError{Pkg: "shard", Field: "RenewInterval", Value: renew, Reason: fmt.Sprintf("differs from the group's %v", a.Renew)}
	}
	return nil
}
