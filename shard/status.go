package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Status is a group as one reading of its store shows it: the assignment
// and every member's liveness record (what leasehold status prints).
type Status struct {
	// Shards is the group's N; 0 when no assigner has written an
	// assignment yet (Members may still show workers joining).
	// MaxPerWorker is the group's cap (Config.MaxPerWorker), 0 for none.
	Shards       int
	MaxPerWorker int
	// Gen is the assignment's generation; Fence is set while it is a new
	// assigner's fence (nothing starts until the next one).
	Gen   uint64
	Fence bool
	// TTL and RenewInterval are the group's.
	TTL, RenewInterval time.Duration
	// Members are the workers with a liveness record, and the owners the
	// assignment names without one, by identity.
	Members []MemberStatus
	// Unowned are the shards the assignment gives nobody.
	Unowned []int
	// Balanced reports whether the assignment settles the group over its
	// live members: every shard owned by one, none releasing, each with
	// ⌊N/M⌋ or ⌈N/M⌉; under a cap C, N' = min(N, M·C) shards so, each
	// with ⌊N'/M⌋ or ⌈N'/M⌉, and the rest Unowned. One reading cannot tell a crashed worker, whose
	// liveness record stays held, from a live one until the assigner has
	// judged it expired and said so: until then both count as live (see
	// Lapse).
	Balanced bool
}

// MemberStatus is one worker of a group.
type MemberStatus struct {
	// Identity is the worker's (Config.Identity).
	Identity string
	// Token is the worker's liveness term, as its liveness record names
	// it; Live is whether that term is still a member: its record is held
	// (a worker that leaves releases it) and its acknowledgement does not
	// say that the term left (a worker that leaves says so, and so does
	// the assigner for a term whose liveness it judged expired, by the
	// lease rule, while its record stays held).
	Token uint64
	Live  bool
	// Version is the store's version of the liveness record, which every
	// renewal changes; Lapsed is set by Lapse.
	Version string
	Lapsed  bool
	// Shards are the shards the assignment gives this term and that it
	// runs or is to start, with their epochs; Releasing those it is
	// asked to stop (moving elsewhere).
	Shards    []Shard
	Releasing []int
	// term is the token of the worker's term as the assignment names it
	// (see termToken): its acknowledgement's, when that names the
	// liveness term of the record.
	term uint64
	// Fenced are those of Shards whose epoch is an assigner's fence Gen:
	// a new assigner's fence gives every running shard its own epoch, so
	// a shard that ran since before that fence runs under its earlier,
	// lower epoch, which the store no longer holds; one started since
	// runs under this one. For the others, Epoch is the epoch the shard
	// runs under.
	Fenced []int
}

// ReadStatus reads the status of group in store: one listing of its
// members, a read of each member's liveness record and of its
// acknowledgement (which names the term the assignment gives shards to),
// and one of the assignment. opts are the options of the reader's leases (its identity
// and call timeout). A prefix with no group reads as the zero Status.
func ReadStatus(ctx context.Context, store Store, group string, opts lease.Options) (Status, error) {
	timeout := opts.WithDefaults().CallTimeout // bounds each of the Store's calls, as a lease's
	prefix := memberKey(group, "")
	listed, err := listWithin(ctx, store, timeout, prefix)
	if err != nil {
		return Status{}, fmt.Errorf("shard: listing %s: %w", prefix, err)
	}
	byID := map[string]*MemberStatus{}
	for key := range listed {
		id, ok := memberID(prefix, key)
		if !ok {
			continue
		}
		l, err := store.Lease(key, opts)
		if err != nil {
			return Status{}, err
		}
		rec, err := l.Observe(ctx)
		if errors.Is(err, lease.ErrNoRecord) {
			continue // gone since the listing
		}
		if err != nil {
			return Status{}, fmt.Errorf("shard: reading %s: %w", key, err)
		}
		m := &MemberStatus{Identity: id, Token: rec.Token, Version: rec.Version}
		var left bool
		if m.term, left, err = readTerm(ctx, store, timeout, group, id, rec.Token); err != nil {
			return Status{}, err
		}
		m.Live = !rec.Released && !left
		byID[id] = m
	}
	var st Status
	data, _, err := getWithin(ctx, store, timeout, assignmentKey(group), "")
	switch {
	case errors.Is(err, lease.ErrNoRecord):
	case err != nil:
		return Status{}, fmt.Errorf("shard: reading %s: %w", assignmentKey(group), err)
	default:
		a, err := decodeAssignment(data)
		if err != nil {
			return Status{}, err
		}
		st = Status{Shards: a.Shards, MaxPerWorker: a.MaxPerWorker, Gen: a.Gen, Fence: a.Fence, TTL: a.TTL, RenewInterval: a.Renew}
		for s, sl := range a.Slots {
			t, ok := a.owner(s)
			if !ok {
				st.Unowned = append(st.Unowned, s)
				continue
			}
			m := byID[t.ID]
			if m == nil {
				m = &MemberStatus{Identity: t.ID, Token: termHigh(t.Token), term: t.Token}
				byID[t.ID] = m
			}
			switch {
			case m.term != t.Token: // an earlier term's shard: not this worker's now
			case sl.Releasing:
				m.Releasing = append(m.Releasing, s)
			default:
				m.Shards = append(m.Shards, Shard{s, sl.Epoch})
				if a.fenceEpoch(sl.Epoch) {
					m.Fenced = append(m.Fenced, s)
				}
			}
		}
	}
	for _, m := range byID {
		st.Members = append(st.Members, *m)
	}
	slices.SortFunc(st.Members, func(a, b MemberStatus) int { return cmp.Compare(a.Identity, b.Identity) })
	st.Balanced = st.balanced()
	return st, nil
}

// readTerm returns the term token of id's acknowledgement if it is that of
// the liveness term token (an earlier version's acknowledgement names it by
// its token alone), else 0: no term of the assignment is the record's; and
// whether that acknowledgement says the term left (the worker left, or the
// assigner buried the term: see assigner.bury).
func readTerm(ctx context.Context, store Store, timeout time.Duration, group, id string, token uint64) (uint64, bool, error) {
	data, _, err := getWithin(ctx, store, timeout, ackKey(group, id), "")
	switch {
	case errors.Is(err, lease.ErrNoRecord):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("shard: reading %s: %w", ackKey(group, id), err)
	}
	k, err := decodeAck(data)
	if err != nil || !k.ofLease(token) {
		return 0, false, nil
	}
	return k.Token, k.Left, nil
}

// fenceEpoch reports whether epoch is the Gen of the fence of the
// assigner term that wrote a (FenceGen), the first write of its term; in
// an assignment of an earlier version, a count of 0 in the low 32 bits.
func (a *assignment) fenceEpoch(epoch uint64) bool {
	if a.FenceGen != 0 {
		return epoch == a.FenceGen
	}
	return epoch&(1<<32-1) == 0
}

// Lapse judges the members of st, read watched after earlier, by the
// lease rule: a live member whose liveness record shows the same version
// in both, when watched is at least the group's TTL, has stopped renewing
// it (it crashed or is cut off), and is marked Lapsed and not Live; then
// Balanced is judged again, over the members still live.
func (st *Status) Lapse(earlier Status, watched time.Duration) {
	if st.TTL == 0 || watched < st.TTL {
		return
	}
	before := map[string]string{}
	for _, m := range earlier.Members {
		before[m.Identity] = m.Version
	}
	for i := range st.Members {
		m := &st.Members[i]
		if m.Live && m.Version != "" && before[m.Identity] == m.Version {
			m.Live, m.Lapsed = false, true
		}
	}
	st.Balanced = st.balanced()
}

// balanced reports whether every shard (under a cap, N' of them) is owned
// by a live member, none releasing, each live member owning ⌊N'/M⌋ or
// ⌈N'/M⌉, and the assignment is not a fence (what assignment.settled says, from the status). A group
// with no assignment yet is not balanced, whoever has joined.
func (st *Status) balanced() bool {
	if st.Shards == 0 {
		return false
	}
	var counts []int
	owned := 0
	for _, m := range st.Members {
		if len(m.Releasing) > 0 || !m.Live && len(m.Shards) > 0 {
			return false
		}
		if m.Live {
			counts = append(counts, len(m.Shards))
			owned += len(m.Shards)
		}
	}
	if st.Fence || len(counts) == 0 {
		return false
	}
	n := shared(st.Shards, st.MaxPerWorker, len(counts))
	return owned == n && even(n, counts)
}
