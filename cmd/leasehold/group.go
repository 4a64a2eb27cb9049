package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
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
	if isQuorum(leaseURL) {
		return group{}, &lease.OptionError{Field: "URL", Value: strconv.Quote(lease.RedactURL(leaseURL)), Reason: "is a quorum: --shards works on one store's URL; a shard group over a quorum of stores is not built yet"}
	}
	return atStart(ctx, leaseURL, timeout, log, func() (group, error) {
		store, name, err := shard.OpenStore(ctx, leaseURL, opts)
		if err != nil {
			return group{}, err
		}
		// Bounded by the call timeout, as every call of the group is: a
		// store that stopped answering is retried until --start-timeout.
		list := func(ctx context.Context) error { _, err := store.List(ctx, name+"/"); return err }
		if err := driver.Call(ctx, opts.WithDefaults().CallTimeout, list); err != nil {
			return group{}, err
		}
		return group{store, name}, nil
	})
}

// groupReport is what leasehold status --shards (or --holders) prints; -o
// json prints it as JSON with these keys.
type groupReport struct {
	// Lease is the group's URL (its prefix).
	Lease string `json:"lease"`
	// Shards is the group's N as its assignment says, 0 before the first
	// assignment; Gen is that assignment's generation. MaxPerWorker is
	// the group's cap on one member's shards: 1 for a group of leasehold
	// run --holders (whose shards are its slots), absent for --shards.
	Shards       int    `json:"shards"`
	MaxPerWorker int    `json:"max_per_worker,omitempty"`
	Gen          uint64 `json:"gen"`
	// Fence is set while the assignment is a new assigner's fence.
	Fence bool `json:"fence,omitempty"`
	// TTL and RenewInterval are the group's.
	TTL           string `json:"ttl,omitempty"`
	RenewInterval string `json:"renew_interval,omitempty"`
	// Balanced: every shard is owned by a live member, none is moving, and
	// each live member owns ⌊N/M⌋ or ⌈N/M⌉; with --holders, min(N, M)
	// slots are held, one by each of as many live members.
	Balanced bool `json:"balanced"`
	// Judged reports whether the members' liveness was judged, by a watch
	// of at least the group's TTL. Read once (or watched for less), a
	// member is live while its record is held and the assigner has not
	// judged its liveness expired: one that crashed since counts as live
	// until the assigner has, about a TTL after its last renewal.
	Judged  bool          `json:"judged"`
	Members []groupMember `json:"members"`
	// Ended counts the members whose term ended (they left, or the
	// assigner judged their liveness expired) and who own no shard: their
	// records stay in the store, and Members does not list them.
	Ended int `json:"ended"`
	// Unowned are the shards nobody owns (with --holders, the free slots).
	Unowned []int `json:"unowned"`
	// Watch is how long the group was watched (--watch).
	Watch string `json:"watch"`
	// Meaning says the same in a sentence.
	Meaning string `json:"meaning"`

	howRead string // for text: how the group was read, when not Judged
	unit    string // for text: "shard", or "slot" with --holders
}

// groupSpec is the group that leasehold status was asked about: --shards
// N, or --holders N (holders set).
type groupSpec struct {
	n       int
	holders bool
}

func (g groupSpec) flag() string {
	if g.holders {
		return "holders"
	}
	return "shards"
}

// perWorker is the cap of the group g asks about (shard.Config.MaxPerWorker).
func (g groupSpec) perWorker() int {
	if g.holders {
		return 1
	}
	return 0
}

// groupMember is one worker of a group.
type groupMember struct {
	Identity string `json:"identity"`
	// Token is its liveness term; Live reports whether that term is a
	// member (see groupReport.Judged): its liveness record is held (a
	// member that left released it), the assigner has not judged it
	// expired, and, after a watch of at least the group's TTL, it was
	// renewed during the watch; Lapsed that it was held but not renewed
	// during the watch (crashed or cut off).
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

// cmdGroupStatus is leasehold status --shards or --holders: the group at
// --lease.
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
	spec := o.group()
	rep := describeGroup(o.lease, spec, st, o.watch)
	if err := o.print(env.stdout, rep, func() { printGroup(env.stdout, rep) }); err != nil {
		return err
	}
	switch {
	case st.Shards == 0:
	case st.MaxPerWorker != spec.perWorker():
		return exitf(exitConfig, "status: --%s %d: %s", spec.flag(), spec.n, otherKind(rep.Lease, st))
	case st.Shards != spec.n:
		return exitf(exitConfig, "status: --%s %d: the group at %s has %d %ss", spec.flag(), spec.n, rep.Lease, st.Shards, unit(spec.flag()))
	}
	return nil
}

// otherKind says that the group of st at url is not of the kind asked
// about: a group of --holders (capped) or of --shards.
func otherKind(url string, st shard.Status) string {
	if st.MaxPerWorker == 1 {
		return fmt.Sprintf("the group at %s is one of leasehold run --holders %d (a slot per member), not of --shards", url, st.Shards)
	}
	if st.MaxPerWorker > 1 {
		return fmt.Sprintf("the group at %s caps each member at %d shards, as neither --shards nor --holders does", url, st.MaxPerWorker)
	}
	return fmt.Sprintf("the group at %s is one of leasehold run --shards %d, not of --holders", url, st.Shards)
}

// describeGroup reports on group status st, read for the group spec, and
// watched for watched (0: read once).
func describeGroup(leaseURL string, spec groupSpec, st shard.Status, watched time.Duration) groupReport {
	judged := st.TTL > 0 && watched >= st.TTL
	rep := groupReport{Lease: lease.RedactURL(leaseURL), Shards: st.Shards, MaxPerWorker: st.MaxPerWorker, unit: unit(spec.flag()), Gen: st.Gen, Fence: st.Fence, Balanced: st.Balanced, Judged: judged, Unowned: st.Unowned, Members: []groupMember{}, Watch: watched.String()}
	if rep.Unowned == nil {
		rep.Unowned = []int{}
	}
	if st.TTL > 0 {
		rep.TTL, rep.RenewInterval = st.TTL.String(), st.RenewInterval.String()
	}
	live, lo, hi, holding := 0, -1, 0, 0
	for _, m := range st.Members {
		if !m.Live && !m.Lapsed && len(m.Shards)+len(m.Releasing) == 0 {
			rep.Ended++
			continue
		}
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
			if n > 0 {
				holding++
			}
		}
	}
	adj, unjudged := "live ", ""
	if !judged {
		adj, rep.howRead = "", unjudgedRead(watched)
		unjudged = fmt.Sprintf(" (liveness not judged: %s; --watch %v tells a crashed member from a live one)", rep.howRead, st.TTL)
	}
	flag, u := spec.flag(), rep.unit
	switch {
	case st.Shards == 0 && len(st.Members) == 0:
		rep.Meaning = fmt.Sprintf("no group: no worker has joined (leasehold run --%s N --lease URL starts one)", flag)
	case st.Shards == 0:
		rep.Meaning = fmt.Sprintf("no assignment yet: %s joining, waiting for an assigner", counted(live, "member"))
	case st.MaxPerWorker != spec.perWorker():
		rep.Meaning = otherKind(rep.Lease, st) + fmt.Sprintf(": workers started with --%s stop with an error", flag)
	case st.Shards != spec.n:
		rep.Meaning = fmt.Sprintf("the group has %d %ss, not %d (--%s): workers started with --%s %d stop with an error", st.Shards, u, spec.n, flag, flag, spec.n)
	case st.Balanced && spec.holders:
		rep.Meaning = fmt.Sprintf("balanced: %d of %d slots held, one each by %s; %s%s",
			holding, st.Shards, counted(holding, adj+"member"), waiting(live-holding, len(st.Unowned)), unjudged)
	case st.Balanced:
		rep.Meaning = fmt.Sprintf("balanced: %s (a worker starts a shard given to it at its next read, within a renew interval)%s", owning(live, adj, lo, hi), unjudged)
	case st.Fence:
		rep.Meaning = fmt.Sprintf("a new assigner is fencing the group: no %s starts until every member has acknowledged it", u)
	case live == 0:
		rep.Meaning = fmt.Sprintf("no %smembers: the %ss wait for a worker", adj, u)
	case spec.holders:
		rep.Meaning = fmt.Sprintf("not balanced yet: %d of %d slots held, by %d of %s, %d free; moving (a member joined, left or crashed; a crashed member's slot is free once its TTL has passed)%s",
			holding, st.Shards, holding, counted(live, adj+"member"), len(st.Unowned), unjudged)
	default:
		rep.Meaning = fmt.Sprintf("not balanced yet: %s, %d unowned; moving (a member joined, left or crashed; a crashed member's shards move once its TTL has passed)%s", owning(live, adj, lo, hi), len(st.Unowned), unjudged)
	}
	return rep
}

// unjudgedRead says how a group was read when its members' liveness could not
// be judged: once, or watched for less than the TTL.
func unjudgedRead(watched time.Duration) string {
	if watched == 0 {
		return "read once"
	}
	return fmt.Sprintf("watched %v, less than the TTL", watched)
}

// waiting says how many live members wait for a slot, and how many slots
// are free, in a balanced group of --holders (one of the two is 0).
func waiting(members, free int) string {
	if free > 0 {
		return fmt.Sprintf("%d free until more instances join (one that joins takes a slot at its next read, within a renew interval)", free)
	}
	return fmt.Sprintf("%d waiting for one to come free (a waiting member takes a slot that comes free at its next read, within a renew interval)", members)
}

// counted is "1 shard" or "n shards".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// owning says that n members (adj: "live " or "") own lo to hi shards
// each: "1 live member owns 6 shards", "3 members own 2 to 3 shards each".
func owning(n int, adj string, lo, hi int) string {
	if n == 1 {
		return "1 " + adj + "member owns " + counted(lo, "shard")
	}
	each := counted(lo, "shard")
	if lo != hi {
		each = fmt.Sprintf("%d to %d shards", lo, hi)
	}
	return fmt.Sprintf("%d %smembers own %s each", n, adj, each)
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
		row(r.unit+"s", fmt.Sprintf("%d (gen %d%s; ttl %s, renew interval %s)", r.Shards, r.Gen, fence, r.TTL, r.RenewInterval))
		balanced := fmt.Sprint(r.Balanced)
		if !r.Judged {
			balanced += " (as the store shows it; liveness not judged: " + r.howRead + ")"
		}
		row("balanced", balanced)
	}
	for _, m := range r.Members {
		state := "live"
		switch {
		case m.Lapsed:
			state = "lapsed: not renewed during the watch"
		case !m.Live:
			state = "ended: it left, or its liveness expired"
		case !r.Judged:
			state = "not judged: " + r.howRead
		}
		line := fmt.Sprintf("%s (token %d, %s): %s", m.Identity, m.Token, state, counted(len(m.Shards), r.unit))
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
	if r.Ended > 0 {
		row("ended", counted(r.Ended, "member")+" not listed: left, or liveness expired, owning nothing (their records stay)")
	}
	switch {
	case r.Shards > 0 && r.unit == "slot":
		row("free", fmt.Sprint(len(r.Unowned)))
	case r.Shards > 0:
		row("unowned", fmt.Sprint(len(r.Unowned)))
	}
	row("meaning", r.Meaning)
}
