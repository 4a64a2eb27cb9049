package shard

import "time"

// Settled reports, on the assigner, the assignment that settled the group
// after a change (a join, a leave, an expiry, or the assigner's own start,
// which may find the group settled already):
// every shard given to a live worker, none releasing, and each live worker
// given ⌊N/M⌋ or ⌈N/M⌉ shards; under a cap C (Config.MaxPerWorker),
// min(N, M·C) shards so given, ⌊N'/M⌋ or ⌈N'/M⌉ each, and the others
// unowned.
type Settled struct {
	// Gen is the settling assignment's.
	Gen uint64
	// Workers is M, the live workers it balances over.
	Workers int
	// Took is how long the group took to settle, on the assigner's clock:
	// from the start of the first round that saw the change (or of the
	// assigner's term) to the write that settled it. The time the moved
	// shards' functions took to return is in it; the TTL a crashed worker's
	// liveness takes to expire, before the assigner sees the change, is not.
	Took time.Duration
	// Granted is how many shards were given to a worker in between: each
	// one start of a shard, with a new epoch.
	Granted int
}

// settled reports whether a gives every shard to one of the terms live, none
// releasing, and each of them ⌊N/M⌋ or ⌈N/M⌉ shards; under a cap, N' =
// min(N, M·C) shards so (see shared), the rest to nobody. A fence never
// settles: nothing starts until the assignment after it.
func (a *assignment) settled(live []term) bool {
	if a.Fence || len(live) == 0 {
		return false
	}
	counts := make(map[term]int, len(live))
	for _, t := range live {
		counts[t] = 0
	}
	owned := 0
	for s, sl := range a.Slots {
		t, ok := a.owner(s)
		if !ok {
			continue
		}
		if _, isLive := counts[t]; !isLive || sl.Releasing {
			return false
		}
		counts[t]++
		owned++
	}
	var shares []int
	for _, c := range counts {
		shares = append(shares, c)
	}
	n := shared(len(a.Slots), a.MaxPerWorker, len(live))
	return owned == n && even(n, shares)
}

// shared is N', how many of n shards m workers share when each runs at
// most perWorker (0: no cap).
func shared(n, perWorker, m int) int {
	if perWorker > 0 {
		return min(n, m*perWorker)
	}
	return n
}

// even reports whether shares, the shards of each of M workers, are each
// ⌊n/M⌋ or ⌈n/M⌉.
func even(n int, shares []int) bool {
	lo := n / len(shares)
	hi := lo
	if n%len(shares) != 0 {
		hi++
	}
	for _, c := range shares {
		if c < lo || c > hi {
			return false
		}
	}
	return true
}

// granted counts the shards a gives out: those whose epoch is its Gen.
func (a *assignment) granted() int {
	n := 0
	for _, sl := range a.Slots {
		if sl.Owner >= 0 && sl.Epoch == a.Gen && !a.Fence {
			n++
		}
	}
	return n
}

// settle follows whether the current assignment, as stored, has settled
// the group, and reports to Config.OnSettled when it does after a change:
// a round that started at began and changed the assignment, or found it
// unsettled.
func (a *assigner) settle(began time.Time, changed bool) {
	now := time.Now()
	live := a.live()
	settled := a.cur.settled(live)
	if (changed || !settled) && a.since.IsZero() {
		a.since = began
	}
	if settled && !a.since.IsZero() && a.stored != unknown {
		s := Settled{Gen: a.cur.Gen, Workers: len(live), Took: now.Sub(a.since), Granted: a.grants}
		a.since, a.grants = time.Time{}, 0
		a.w.cfg.Logger.Info("shard: assigner: the group is balanced", "gen", s.Gen, "workers", s.Workers, "took", s.Took, "granted", s.Granted)
		if a.w.cfg.OnSettled != nil {
			a.w.cfg.OnSettled(s)
		}
	}
}
