// Package chaos proves leasehold's safety under faults: several contender
// processes (chaos/contender: a runner on lease.Open) compete for one lease
// on a real store, each reaching it through a toxiproxy proxy of its own,
// while the test kills and restarts the leader, delays, hangs and resets
// its connection, cuts it off alone, and hangs or cuts off a follower; on
// MinIO and dynalite the contenders run with a preference
// (runner.Config.Prefer, leasehold run --prefer), and a deploy restarts a
// follower with a greater one, which the leader hands the lease to, so
// that handoffs mix with the faults; on the CAS stores, TestChaosRestore puts an earlier write of the holder's
// term back, straight at the store, while the followers are cut off.
// Every leader records its own
// leadership intervals on CLOCK_MONOTONIC with its fencing token, and Check
// proves, from those records alone, that no two intervals overlap and that
// tokens strictly increase in time order. It also measures every
// leaderless gap against what the TTL, the campaign polling and the faults
// explain: a figure the run prints, which fails it only with
// LEASEHOLD_CHAOS_STRICT=1 (for a quiet machine), since load stretches real
// time; the simulations assert those bounds on a fake clock.
//
// TestChaosShards does the same for shard groups: four slots of
// "leasehold run --shards 6", from two to four of them running, whose
// commands record their shard and epoch; faults hit random members (kill -9
// and restart, a job-control stop, latency, hangs, resets, partitions) and
// members join and leave. CheckShards applies Check to each shard's runs,
// and adds the time from a shard's last run to the end of the run; the
// bound on a shard running nowhere is ShardBounds'. At the end the group
// must be balanced, as "leasehold status --shards -o json" says, with the
// commands running where it says. TestChaosHolders runs the same on
// "leasehold run --holders 2", whose shards are slots, and CheckSlots adds
// that no member runs two at once. TestChaosShardsCatchesSIGSTOP shows that
// the records and CheckShards find overlaps: leasehold stopped with SIGSTOP,
// which it cannot catch, leaves its commands running unrenewed.
//
// TestChaosQuorum runs leasehold run on a quorum lease of three stores
// (MinIO, dynalite, fake-gcs-server), each contender behind a proxy of its
// own to each member: the leader killed, contenders paused, the leader cut
// off from one member, and for minutes one member's store out (a MinIO the
// test starts itself, hung, killed and started again). Check judges the
// records as above; Result.Across measures the leader changes and the
// leaderless time across each fault that a quorum must ride out (a
// minority of its members out), which must both be zero.
//
// The tests, chaos_test.go, restore_test.go, shards_test.go and
// quorum_test.go, are built only with the tag chaos: each runs for
// LEASEHOLD_CHAOS_DURATION (90s by default) per backend, twice that on
// Azurite (its TTL is 15s), all backends at once, about four minutes in
// all; scripts/test runs them so. The sharded runs take
// LEASEHOLD_CHAOS_SHARDS_DURATION (60s by default, twice that on Azurite)
// beside them, and the quorum's LEASEHOLD_CHAOS_QUORUM_DURATION (3m by
// default, two thirds of it the outage). Set it to 30m for a soak (an hour, for
// Azurite), run the restore fault alone on one store for 10 minutes, the
// sharded run on every store for 10 minutes, or the quorum's for 15 (a
// 10-minute outage):
//
//	scripts/stack up; eval "$(scripts/stack env)"
//	go test -tags chaos ./chaos -run TestChaos -v
//	LEASEHOLD_CHAOS_DURATION=30m go test -tags chaos ./chaos -run TestChaos -v -timeout 90m
//	LEASEHOLD_CHAOS_DURATION=10m go test -tags chaos ./chaos -run 'TestChaosRestore/minio$' -v -timeout 30m
//	LEASEHOLD_CHAOS_SHARDS_DURATION=10m go test -tags chaos ./chaos -run 'TestChaosShards' -v -timeout 40m
//	LEASEHOLD_CHAOS_QUORUM_DURATION=15m go test -tags chaos ./chaos -run 'TestChaosQuorum' -v -timeout 30m
//
// Without the tag, go test runs the checker's own tests only.
package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold/internal/leaderless"
)

// Interval is one leadership as its leader recorded it: from its election
// to the moment its task's context was cancelled, on CLOCK_MONOTONIC (ns).
type Interval struct {
	// Process names the contender process (its log file).
	Process string
	// Token is the fencing token it led with.
	Token uint64
	// Start is when it was elected.
	Start int64
	// End is when the leader stopped acting as leader: recorded by itself,
	// or, if it was killed while leading, when the kill had taken effect.
	End int64
	// Killed reports whether the test killed it while it led.
	Killed bool
	// Shard is the shard it ran, in a sharded run (CheckShards); 0
	// otherwise.
	Shard int
}

// String shows iv with its times in seconds since the clock's zero.
func (iv Interval) String() string { return iv.since(0) }

// since shows iv with its times in seconds after base.
func (iv Interval) since(base int64) string {
	how := ""
	if iv.Killed {
		how = ", killed"
	}
	sec := func(t int64) string { return fmt.Sprintf("%.3fs", float64(t-base)/1e9) }
	return fmt.Sprintf("%s token %d [%s, %s]%s", iv.Process, iv.Token, sec(iv.Start), sec(iv.End), how)
}

// Fault is one fault the test injected, from Start to End (equal for an
// instant fault: a SIGKILL).
type Fault struct {
	// Kind is what the fault was: "kill-leader", "latency-all", ...
	Kind string
	// Target is the process or the proxy the fault was injected in.
	Target string
	// Start and End bound the fault, on CLOCK_MONOTONIC (ns).
	Start, End int64
}

// Bounds are the timing the gap check allows.
type Bounds struct {
	// TTL is the lease's TTL.
	TTL time.Duration
	// Retry is the longest a follower waits between two attempts: the
	// CampaignInterval plus its jitter.
	Retry time.Duration
	// Slack covers the requests of one takeover (a read and a write, each
	// bounded by the CallTimeout) and scheduling.
	Slack time.Duration
	// Recovery is what every fault in a gap adds beyond its own length:
	// the time to recover from it that the rest of the bound does not
	// cover (0 for a lease; see ShardBounds).
	Recovery time.Duration
}

// Gap is a time without a leader, between two intervals.
type Gap struct {
	// From is the interval that ended the gap's start, To the one that
	// began at its end.
	From, To Interval
	// Length is the time between From's end and To's start.
	Length time.Duration
	// Allowed is TTL + Retry + Slack + the length of every fault that
	// overlaps the gap or the TTL before it, and Recovery for each.
	Allowed time.Duration
	// Faults are the faults that overlap the gap or the TTL before it.
	Faults []Fault
}

// Result is what Check found.
type Result struct {
	Intervals []Interval // sorted by Start
	// Overlaps are pairs of intervals that overlap: each must be empty.
	Overlaps [][2]Interval
	// TokenErrors are intervals whose token is not greater than the one
	// before it in time.
	TokenErrors [][2]Interval
	// LongGaps are gaps longer than allowed.
	LongGaps []Gap
	// Worst is the longest gap.
	Worst Gap
	// WorstRatio is the largest Length/Allowed among the gaps.
	WorstRatio float64
}

// OK reports whether every check passed.
func (r *Result) OK() bool {
	return r.Safe() && len(r.LongGaps) == 0
}

// Safe reports whether the safety checks passed: no overlap, tokens in
// order. The gaps' bound is a liveness figure, which a loaded machine can
// break without a fault in the code.
func (r *Result) Safe() bool {
	return len(r.Overlaps) == 0 && len(r.TokenErrors) == 0
}

// Check checks the intervals recorded while faults were injected.
func Check(intervals []Interval, faults []Fault, b Bounds) *Result {
	r := &Result{Intervals: slices.Clone(intervals)}
	slices.SortFunc(r.Intervals, func(a, b Interval) int { return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End)) })
	ivs := r.Intervals

	// Overlaps: each interval against every later-starting one that starts
	// before it ends.
	for i, a := range ivs {
		for _, b := range ivs[i+1:] {
			if b.Start >= a.End {
				break
			}
			r.Overlaps = append(r.Overlaps, [2]Interval{a, b})
		}
	}
	// Tokens: strictly increasing in the order of election.
	for i := 1; i < len(ivs); i++ {
		if ivs[i].Token <= ivs[i-1].Token {
			r.TokenErrors = append(r.TokenErrors, [2]Interval{ivs[i-1], ivs[i]})
		}
	}
	// Gaps: from the latest end so far to the next start.
	if len(ivs) == 0 {
		return r
	}
	latest := ivs[0]
	for _, next := range ivs[1:] {
		if next.Start > latest.End {
			r.gap(latest, next, faults, b)
		}
		if next.End > latest.End {
			latest = next
		}
	}
	return r
}

// gap checks the leaderless time between prev's end and next's start.
func (r *Result) gap(prev, next Interval, faults []Fault, b Bounds) {
	g := Gap{From: prev, To: next, Length: time.Duration(next.Start - prev.End), Allowed: b.TTL + b.Retry + b.Slack}
	windowStart := prev.End - int64(b.TTL)
	for _, f := range faults {
		if f.End >= windowStart && f.Start <= next.Start {
			g.Faults = append(g.Faults, f)
			g.Allowed += time.Duration(f.End-f.Start) + b.Recovery
		}
	}
	if g.Length > g.Allowed {
		r.LongGaps = append(r.LongGaps, g)
	}
	if g.Length > r.Worst.Length {
		r.Worst = g
	}
	if ratio := float64(g.Length) / float64(g.Allowed); ratio > r.WorstRatio {
		r.WorstRatio = ratio
	}
}

// Steadiness is how leadership fared across a window in which it must not
// change: a fault that a lease is built to ride out, such as the outage of
// a minority of a quorum's members.
type Steadiness struct {
	// Changes counts the elections that began within the window, after
	// its first instant.
	Changes int
	// Leaderless is the time within the window when nobody led.
	Leaderless time.Duration
}

// Steady reports whether leadership neither changed nor lapsed.
func (s Steadiness) Steady() bool { return s.Changes == 0 && s.Leaderless == 0 }

// Across returns how leadership fared from from to to (CLOCK_MONOTONIC,
// ns), from the intervals.
func (r *Result) Across(from, to int64) Steadiness {
	ns := func(t int64) time.Time { return time.Unix(0, t) }
	ivs := make([]leaderless.Interval, len(r.Intervals))
	for i, iv := range r.Intervals {
		ivs[i] = leaderless.Interval{Start: ns(iv.Start), End: ns(iv.End)}
	}
	w := leaderless.Across(ivs, ns(from), ns(to))
	return Steadiness{Changes: w.Changes, Leaderless: w.Leaderless}
}

// Summary describes the result in a few lines: transitions, faults by
// kind, the worst gap, overlaps and token errors.
func (r *Result) Summary(faults []Fault) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d leadership intervals (%d transitions), %s\n",
		len(r.Intervals), max(len(r.Intervals)-1, 0), faultsText(faults))
	fmt.Fprintf(&sb, "worst leaderless gap %v (allowed %v, %d fault(s) in it); worst gap/allowed %.2f\n",
		r.Worst.Length.Round(time.Millisecond), r.Worst.Allowed.Round(time.Millisecond), len(r.Worst.Faults), r.WorstRatio)
	fmt.Fprintf(&sb, "overlaps %d, token order errors %d, gaps over the bound %d", len(r.Overlaps), len(r.TokenErrors), len(r.LongGaps))
	r.details(&sb, "")
	return sb.String()
}

// faultsText is "N faults (KIND n, ...)".
func faultsText(faults []Fault) string {
	kinds := map[string]int{}
	for _, f := range faults {
		kinds[f.Kind]++
	}
	var fs []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fs = append(fs, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	return fmt.Sprintf("%d faults (%s)", len(faults), strings.Join(fs, ", "))
}

// details writes a line for every overlap, token error and long gap, each
// after prefix, with times from the first interval's start.
func (r *Result) details(sb *strings.Builder, prefix string) {
	var base int64 // times are shown from the first election
	if len(r.Intervals) > 0 {
		base = r.Intervals[0].Start
	}
	for _, o := range r.Overlaps {
		fmt.Fprintf(sb, "\n  %sOVERLAP: %s and %s, by %v", prefix, o[0].since(base), o[1].since(base), time.Duration(min(o[0].End, o[1].End)-o[1].Start))
	}
	for _, o := range r.TokenErrors {
		fmt.Fprintf(sb, "\n  %sTOKEN ORDER: %s, then %s", prefix, o[0].since(base), o[1].since(base))
	}
	for _, g := range r.LongGaps {
		fmt.Fprintf(sb, "\n  %sLONG GAP: %v after %s, before %s (allowed %v; %d fault(s))", prefix, g.Length, g.From.since(base), g.To.since(base), g.Allowed, len(g.Faults))
		for _, f := range g.Faults {
			fmt.Fprintf(sb, "\n    fault %s on %s from %.3fs to %.3fs", f.Kind, f.Target, float64(f.Start-base)/1e9, float64(f.End-base)/1e9)
		}
	}
}

// ShardBounds are the bounds of a sharded run's orphan check, for a group
// of TTL ttl, renew interval r and call timeout call: the longest a shard
// may go unowned outside faults. The worst case is a crash of the worker
// that was both the shard's owner and the group's assigner: a TTL and a
// campaign retry until a new assigner is elected (the runner's campaign
// interval, ttl/3, and its jitter of 20%: 2/5 of the TTL),
// a TTL of its listings until it judges the owner's liveness expired, a
// listing period (r/3), the new owner's read of the assignment (r), and
// the requests of it all, on every store alike (Azure's renewals show in
// its listings too). As in Check, every fault that overlaps the gap, or
// the TTL before it, adds its length, and in a group a TTL more
// (Recovery): a member cut off or stalled loses its liveness term and
// rejoins only after its cool-down, a TTL; a killed assigner's successor is elected a TTL after it; and the
// faults come a TTL or two apart, so one's recovery runs into the next's.
// (Ten-minute runs went over the bound without it, by up to 2.8 s on MinIO
// at TTL 2 s, through a hang of the owner, latency for all and a kill of
// the assigner in one gap.)
func ShardBounds(ttl, r, call time.Duration) Bounds {
	return Bounds{TTL: ttl, Retry: ttl + ttl*2/5 + r/3 + r, Slack: 6 * call, Recovery: ttl}
}

// ShardResult is what CheckShards found: each shard's Result, in which a
// gap is a time when no worker ran the shard.
type ShardResult struct {
	Shards []*Result // by shard
	// Orphans are the gaps longer than allowed, of every shard, the time
	// from a shard's last run to the end of the run (until) included.
	Orphans []Gap
	// Worst is the longest gap of any shard, WorstRatio the largest
	// Length/Allowed.
	Worst      Gap
	WorstRatio float64
	// Moves counts the starts of a shard on another process than its
	// previous run's.
	Moves int
	// Crowded, in a run of slots (CheckSlots), are the runs of a process
	// that began while it still ran another: a member with two slots at
	// once.
	Crowded [][2]Interval
}

// CheckShards checks the runs of shards 0 to n-1 recorded while faults
// were injected, each shard's as Check checks a lease's leaderships: no
// two runs of a shard overlap, its epochs (Token) strictly increase in
// time order, and no gap between two of its runs, nor from its last run to
// until (when the faults stopped and every worker was running), is longer
// than b allows. A shard that never ran is an orphan from the first run of
// any shard.
func CheckShards(intervals []Interval, n int, faults []Fault, b Bounds, until int64) *ShardResult {
	by := make([][]Interval, n)
	first := until
	for _, iv := range intervals {
		if iv.Shard >= 0 && iv.Shard < n {
			by[iv.Shard] = append(by[iv.Shard], iv)
		}
		first = min(first, iv.Start)
	}
	sr := &ShardResult{}
	for shard, ivs := range by {
		r := Check(ivs, faults, b)
		end := Interval{Process: "(end of the run)", Shard: shard, Start: until, End: until}
		last := Interval{Process: "(start of the run)", Shard: shard, Start: first, End: first}
		for _, iv := range r.Intervals {
			if iv.End > last.End {
				last = iv
			}
		}
		if until > last.End {
			r.gap(last, end, faults, b)
		}
		for i := 1; i < len(r.Intervals); i++ {
			if r.Intervals[i].Process != r.Intervals[i-1].Process {
				sr.Moves++
			}
		}
		sr.Shards = append(sr.Shards, r)
		sr.Orphans = append(sr.Orphans, r.LongGaps...)
		if r.Worst.Length > sr.Worst.Length {
			sr.Worst = r.Worst
		}
		sr.WorstRatio = max(sr.WorstRatio, r.WorstRatio)
	}
	return sr
}

// CheckSlots is CheckShards for leasehold run --holders n, whose shards are
// slots: beside its checks, no process (a member's leasehold, one log)
// runs two slots at once, so that with no two runs of a slot at once no
// more than n run at any instant.
func CheckSlots(intervals []Interval, n int, faults []Fault, b Bounds, until int64) *ShardResult {
	sr := CheckShards(intervals, n, faults, b, until)
	by := map[string][]Interval{}
	for _, iv := range intervals {
		by[iv.Process] = append(by[iv.Process], iv)
	}
	for _, process := range slices.Sorted(maps.Keys(by)) {
		ivs := by[process]
		slices.SortFunc(ivs, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
		for i := 1; i < len(ivs); i++ {
			for _, prev := range ivs[:i] {
				if prev.End > ivs[i].Start {
					sr.Crowded = append(sr.Crowded, [2]Interval{prev, ivs[i]})
				}
			}
		}
	}
	return sr
}

// OK reports whether every shard passed every check.
func (sr *ShardResult) OK() bool {
	return sr.Safe() && len(sr.Orphans) == 0
}

// Safe reports whether every shard passed the safety checks: no two runs
// at once, epochs in order; and, for slots, no process with two at once.
func (sr *ShardResult) Safe() bool {
	if len(sr.Crowded) > 0 {
		return false
	}
	for _, r := range sr.Shards {
		if !r.Safe() {
			return false
		}
	}
	return true
}

// Summary describes the result: runs, moves and faults, the worst orphan
// time, and every overlap, epoch order error and orphan, by shard.
func (sr *ShardResult) Summary(faults []Fault) string {
	runs, overlaps, tokens := 0, 0, 0
	for _, r := range sr.Shards {
		runs += len(r.Intervals)
		overlaps += len(r.Overlaps)
		tokens += len(r.TokenErrors)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d shards: %d runs, %d moves, %s\n", len(sr.Shards), runs, sr.Moves, faultsText(faults))
	fmt.Fprintf(&sb, "worst time a shard ran nowhere %v (shard %d; allowed %v, %d fault(s) in it); worst gap/allowed %.2f\n",
		sr.Worst.Length.Round(time.Millisecond), sr.Worst.To.Shard, sr.Worst.Allowed.Round(time.Millisecond), len(sr.Worst.Faults), sr.WorstRatio)
	fmt.Fprintf(&sb, "overlaps %d, epoch order errors %d, orphans %d", overlaps, tokens, len(sr.Orphans))
	if len(sr.Crowded) > 0 {
		fmt.Fprintf(&sb, ", a process running two slots at once %d", len(sr.Crowded))
		for _, o := range sr.Crowded {
			fmt.Fprintf(&sb, "\n  crowded: %v and %v", o[0], o[1])
		}
	}
	for shard, r := range sr.Shards {
		r.details(&sb, fmt.Sprintf("shard %d: ", shard))
	}
	return sb.String()
}
