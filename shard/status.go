package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Status is a group as one reading of its store shows it: the assignment
// and every member's liveness record (what leasehold status prints).
type Status struct {
	// Shards is the group's N; 0 when no assigner has written an
	// assignment yet (Members may still show workers joining).
	Shards int
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
	// ⌊N/M⌋ or ⌈N/M⌉. One reading cannot tell a crashed worker whose
	// liveness record has not yet expired from a live one: both count as
	// live, as they do for the assigner until their TTL has passed.
	Balanced bool
}

// MemberStatus is one worker of a group.
type MemberStatus struct {
	Identity string
	// Token is the worker's liveness term, as its liveness record names
	// it; Live is whether that record is held (not released). A worker
	// that left released it.
	Token uint64
	Live  bool
	// Shards are the shards the assignment gives this term and that it
	// runs or is to start, with their epochs; Releasing those it is
	// asked to stop (moving elsewhere).
	Shards    []Shard
	Releasing []int
}

// ReadStatus reads the status of group in store: one listing of its
// members, a read of each member's liveness record and one of the
// assignment. opts are the options of the reader's leases (its identity
// and call timeout). A prefix with no group reads as the zero Status.
func ReadStatus(ctx context.Context, store Store, group string, opts lease.Options) (Status, error) {
	prefix := memberKey(group, "")
	listed, err := store.List(ctx, prefix)
	if err != nil {
		return Status{}, fmt.Errorf("shard: listing %s: %w", prefix, err)
	}
	byID := map[string]*MemberStatus{}
	for key := range listed {
		id := strings.TrimPrefix(key, prefix)
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
		byID[id] = &MemberStatus{Identity: id, Token: rec.Token, Live: !rec.Released}
	}
	var st Status
	data, _, err := store.Get(ctx, assignmentKey(group), "")
	switch {
	case errors.Is(err, lease.ErrNoRecord):
	case err != nil:
		return Status{}, fmt.Errorf("shard: reading %s: %w", assignmentKey(group), err)
	default:
		a, err := decodeAssignment(data)
		if err != nil {
			return Status{}, err
		}
		st = Status{Shards: a.Shards, Gen: a.Gen, Fence: a.Fence, TTL: a.TTL, RenewInterval: a.Renew}
		var live []term
		for _, m := range byID {
			if m.Live {
				live = append(live, term{m.Identity, m.Token})
			}
		}
		st.Balanced = a.settled(live)
		for s, sl := range a.Slots {
			t, ok := a.owner(s)
			if !ok {
				st.Unowned = append(st.Unowned, s)
				continue
			}
			m := byID[t.ID]
			if m == nil {
				m = &MemberStatus{Identity: t.ID, Token: t.Token}
				byID[t.ID] = m
			}
			switch {
			case m.Token != t.Token: // an earlier term's shard: not this worker's now
			case sl.Releasing:
				m.Releasing = append(m.Releasing, s)
			default:
				m.Shards = append(m.Shards, Shard{s, sl.Epoch})
			}
		}
	}
	for _, m := range byID {
		st.Members = append(st.Members, *m)
	}
	slices.SortFunc(st.Members, func(a, b MemberStatus) int { return cmp.Compare(a.Identity, b.Identity) })
	return st, nil
}
