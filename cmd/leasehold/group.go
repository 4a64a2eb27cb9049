package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/shard"
)

// group is a shard group's store and its prefix in it.
type group struct {
	store shard.Store
	name  string
}

// openGroup opens the group at leaseURL and lists it once, retrying what
// may pass until timeout, so that a wrong URL, a missing bucket or a
// refused listing is reported at start (exit 78 or 69).
func openGroup(ctx context.Context, leaseURL string, opts lease.Options, timeout time.Duration, log *slog.Logger) (group, error) {
	return atStart(ctx, leaseURL, timeout, log, func() (group, error) {
		store, name, err := shard.OpenStore(ctx, leaseURL, opts)
		if err != nil {
			return group{}, err
		}
		if _, err := store.List(ctx, name+"/"); err != nil {
			return group{}, err
		}
		return group{store, name}, nil
	})
}

// groupReport is what leasehold status --shards prints; -o json prints it
// as JSON with these keys.
type groupReport struct {
	// Lease is the group's URL (its prefix).
	Lease string `json:"lease"`
	// Shards is the group's N as its assignment says, 0 before the first
	// assignment; Gen is that assignment's generation.
	Shards int    `json:"shards"`
	Gen    uint64 `json:"gen"`
	// Fence is set while the assignment is a new assigner's fence.
	Fence bool `json:"fence,omitempty"`
	// TTL and RenewInterval are the group's.
	TTL           string `json:"ttl,omitempty"`
	RenewInterval string `json:"renew_interval,omitempty"`
	// Balanced: every shard is owned by a live member, none is moving, and
	// each live member owns ⌊N/M⌋ or ⌈N/M⌉.
	Balanced bool          `json:"balanced"`
	Members  []groupMember `json:"members"`
	// Unowned are the shards nobody owns.
	Unowned []int `json:"unowned"`
	// Watch is how long the group was watched (--watch).
	Watch string `json:"watch"`
	// Meaning says the same in a sentence.
	Meaning string `json:"meaning"`
}

// groupMember is one worker of a group.
type groupMember struct {
	Identity string `json:"identity"`
	// Token is its liveness term; Live reports whether its liveness
	// record is held (a member that left released it) and, after a watch
	// of at least the group's TTL, was renewed during it; Lapsed that it
	// was held but not renewed (crashed or cut off).
	Token  uint64 `json:"token"`
	Live   bool   `json:"live"`
	Lapsed bool   `json:"lapsed,omitempty"`
	// Shards are the shards it owns and their epochs (the LEASEHOLD_TOKEN
	// of their commands, but see Fenced); Releasing the shards it is
	// stopping, to move.
	Shards    []ownedShard `json:"shards"`
	Releasing []int        `json:"releasing,omitempty"`
	// Fenced are those of Shards at an epoch a new assigner's fence set:
	// a command that ran the shard since before that fence has its
	// earlier, lower LEASEHOLD_TOKEN (its instance's /shards shows it);
	// one started since has this epoch.
	Fenced []int `json:"fenced,omitempty"`
}

// cmdGroupStatus is leasehold status --shards: the group at --lease.
func cmdGroupStatus(ctx context.Context, o *statusOptions, log *slog.Logger, env *environment) error {
	g, err := openGroup(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	if err != nil {
		return err
	}
	read := func() (shard.Status, error) {
		return atStart(ctx, o.lease, o.startTimeout, log, func() (shard.Status, error) {
			return shard.ReadStatus(ctx, g.store, g.name, o.leaseOptions())
		})
	}
	st, err := read()
	if err != nil {
		return err
	}
	if o.watch > 0 {
		select {
		case <-ctx.Done():
			return interrupted(ctx, "while watching the group")
		case <-time.After(o.watch):
		}
		first := st
		if st, err = read(); err != nil {
			return err
		}
		st.Lapse(first, o.watch)
	}
	rep := describeGroup(o.lease, o.shards, st)
	rep.Watch = o.watch.String()
	return o.print(env.stdout, rep, func() { printGroup(env.stdout, rep) })
}

// describeGroup reports on group status st, read for a group of shards.
func describeGroup(leaseURL string, shards int, st shard.Status) groupReport {
	rep := groupReport{Lease: lease.RedactURL(leaseURL), Shards: st.Shards, Gen: st.Gen, Fence: st.Fence, Balanced: st.Balanced, Unowned: st.Unowned, Members: []groupMember{}}
	if rep.Unowned == nil {
		rep.Unowned = []int{}
	}
	if st.TTL > 0 {
		rep.TTL, rep.RenewInterval = st.TTL.String(), st.RenewInterval.String()
	}
	live, lo, hi := 0, -1, 0
	for _, m := range st.Members {
		gm := groupMember{Identity: m.Identity, Token: m.Token, Live: m.Live, Lapsed: m.Lapsed, Shards: []ownedShard{}, Releasing: m.Releasing, Fenced: m.Fenced}
		for _, s := range m.Shards {
			gm.Shards = append(gm.Shards, ownedShard{s.Index, s.Epoch})
		}
		rep.Members = append(rep.Members, gm)
		if m.Live {
			live++
			n := len(m.Shards) + len(m.Releasing)
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
	}
	switch {
	case st.Shards == 0 && len(st.Members) == 0:
		rep.Meaning = "no group: no worker has joined (leasehold run --shards N --lease URL starts one)"
	case st.Shards == 0:
		rep.Meaning = fmt.Sprintf("no assignment yet: %d members joining, waiting for an assigner", live)
	case st.Shards != shards:
		rep.Meaning = fmt.Sprintf("the group has %d shards, not %d (--shards): workers started with --shards %d stop with an error", st.Shards, shards, shards)
	case st.Balanced:
		rep.Meaning = fmt.Sprintf("balanced: %d live members own %s shards each (a worker starts a shard given to it at its next read, within a renew interval)", live, shareText(lo, hi))
	case st.Fence:
		rep.Meaning = "a new assigner is fencing the group: no shard starts until every member has acknowledged it"
	case live == 0:
		rep.Meaning = "no live members: the shards wait for a worker"
	default:
		rep.Meaning = fmt.Sprintf("not balanced yet: %d live members own %s shards each, %d unowned; moving (a member joined, left or crashed; a crashed member's shards move once its TTL has passed; --watch TTL tells a crashed member from a live one)", live, shareText(lo, hi), len(st.Unowned))
	}
	return rep
}

// shareText is "n" or "lo to hi": the shards each member owns.
func shareText(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}

// printGroupShards is how many shard numbers a member's line lists in text.
const printGroupShards = 32

func printGroup(w io.Writer, r groupReport) {
	row := func(k, v string) { fmt.Fprintf(w, "%-14s %s\n", k, v) }
	row("group", r.Lease)
	if r.Shards > 0 {
		fence := ""
		if r.Fence {
			fence = ", a fence"
		}
		row("shards", fmt.Sprintf("%d (gen %d%s; ttl %s, renew interval %s)", r.Shards, r.Gen, fence, r.TTL, r.RenewInterval))
		row("balanced", fmt.Sprint(r.Balanced))
	}
	for _, m := range r.Members {
		state := "live"
		switch {
		case m.Lapsed:
			state = "lapsed: not renewed during the watch"
		case !m.Live:
			state = "left"
		}
		line := fmt.Sprintf("%s (token %d, %s): %d shards", m.Identity, m.Token, state, len(m.Shards))
		if len(m.Shards) > 0 {
			var nums []string
			lo, hi := m.Shards[0].Epoch, m.Shards[0].Epoch
			for i, s := range m.Shards {
				if i < printGroupShards {
					nums = append(nums, fmt.Sprint(s.Shard))
				}
				lo, hi = min(lo, s.Epoch), max(hi, s.Epoch)
			}
			if len(m.Shards) > printGroupShards {
				nums = append(nums, fmt.Sprintf("and %d more (-o json lists them)", len(m.Shards)-printGroupShards))
			}
			epochs := fmt.Sprint(lo)
			if hi != lo {
				epochs = fmt.Sprintf("%d to %d", lo, hi)
			}
			line += fmt.Sprintf(" %s, epochs %s", strings.Join(nums, " "), epochs)
			if len(m.Fenced) > 0 {
				line += fmt.Sprintf(" (%d at a fence's epoch: a command running since before the fence has a lower LEASEHOLD_TOKEN)", len(m.Fenced))
			}
		}
		if len(m.Releasing) > 0 {
			line += fmt.Sprintf("; releasing %d", len(m.Releasing))
		}
		row("member", line)
	}
	if r.Shards > 0 {
		row("unowned", fmt.Sprint(len(r.Unowned)))
	}
	row("meaning", r.Meaning)
}
