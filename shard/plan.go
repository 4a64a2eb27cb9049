package shard

import (
	"cmp"
	"slices"
)

// view is what the assigner knows of the workers when it plans.
type view interface {
	// dead: term t has stopped every shard and will start none (its
	// liveness expired, it left, or a later term of its worker began).
	dead(t term) bool
	// released: term t has acknowledged gen (or a later assignment).
	released(t term, gen uint64) bool
	// live: the worker terms that count for balance, by identity.
	live() []term
}

// plan returns the assignment that follows cur at gen, and whether it
// differs from cur (a fence always does: workers start nothing until the
// assignment after it). It frees the shards of dead terms and the releasing
// shards whose owners acknowledged; then, over the M live terms, it gives
// each ⌊N'/M⌋ or ⌈N'/M⌉ shards, where N' is N, or with the group's cap C
// (MaxPerWorker) min(N, M·C), so that no share exceeds C (the other
// N − N' shards stay unowned). It keeps every owner it can: a term above
// its share releases its excess (marked releasing, to be freed once it has
// acknowledged: no shard is given away before its owner stopped it), and a
// term below its share takes free shards, its own worker's earlier shards
// first; under a cap, only while the shards it owns, releasing ones
// included, are fewer than C, so that no worker runs more than C at any
// instant. The ⌈N'/M⌉ shares go to the terms that own most, so the moves
// are the fewest that balance requires: with a cap of 1 (slots), a term
// that owns a slot keeps it, and a freed slot goes to a term that owns
// none.
func plan(cur *assignment, v view, gen uint64) (*assignment, bool) {
	n := cur.Shards
	owners := make([]term, n)
	owned := make([]bool, n)
	releasing := make([]bool, n)
	epochs := make([]uint64, n)
	prevID := make([]string, n) // the worker that owned a freed shard
	releaseGen := map[term]uint64{}
	for _, m := range cur.Members {
		releaseGen[term{m.ID, m.Token}] = m.ReleaseGen
	}
	for s := range n {
		t, ok := cur.owner(s)
		epochs[s] = cur.Slots[s].Epoch
		switch {
		case !ok:
		case v.dead(t) || cur.Slots[s].Releasing && v.released(t, releaseGen[t]):
			prevID[s] = t.ID
		default:
			owners[s], owned[s], releasing[s] = t, true, cur.Slots[s].Releasing
		}
	}
	live := v.live()
	if len(live) > 0 {
		balance(live, cur.MaxPerWorker, owners, owned, releasing, epochs, prevID, releaseGen, gen)
	}
	next := &assignment{Gen: gen, Shards: n, MaxPerWorker: cur.MaxPerWorker, TTL: cur.TTL, Renew: cur.Renew, Slots: make([]slot, n), FenceGen: cur.FenceGen}
	index := map[term]int{}
	for s := range n {
		next.Slots[s] = slot{Owner: -1, Epoch: epochs[s]}
		if !owned[s] {
			continue
		}
		i, ok := index[owners[s]]
		if !ok {
			i = len(next.Members)
			index[owners[s]] = i
			next.Members = append(next.Members, member{ID: owners[s].ID, Token: owners[s].Token, ReleaseGen: releaseGen[owners[s]]})
		}
		next.Slots[s].Owner, next.Slots[s].Releasing = i, releasing[s]
	}
	return next, cur.Fence || !sameOwnership(cur, next)
}

// balance moves shards among the live terms as plan says, capped at
// perWorker shards a term (0: no cap).
func balance(live []term, perWorker int, owners []term, owned, releasing []bool, epochs []uint64, prevID []string, releaseGen map[term]uint64, gen uint64) {
	n, m := len(owners), len(live)
	held := map[term][]int{} // shards each live term keeps, by index
	runs := map[term]int{}   // shards each term owns, releasing ones too
	for s := range n {
		if owned[s] {
			runs[owners[s]]++
		}
		if owned[s] && !releasing[s] {
			held[owners[s]] = append(held[owners[s]], s)
		}
	}
	shared := shared(n, perWorker, m)
	order := slices.Clone(live)
	slices.SortStableFunc(order, func(a, b term) int {
		return cmp.Or(cmp.Compare(len(held[b]), len(held[a])), cmp.Compare(a.ID, b.ID))
	})
	share := map[term]int{}
	for i, t := range order {
		share[t] = shared / m
		if i < shared%m {
			share[t]++
		}
	}
	for _, t := range order {
		excess := held[t][min(share[t], len(held[t])):]
		for _, s := range excess {
			releasing[s] = true
			releaseGen[t] = gen
		}
	}
	var free []int
	for s := range n {
		if !owned[s] {
			free = append(free, s)
		}
	}
	wants := func(t term) bool {
		return len(held[t]) < share[t] && (perWorker == 0 || runs[t] < perWorker)
	}
	give := func(t term, s int) {
		owners[s], owned[s], epochs[s] = t, true, gen
		held[t] = append(held[t], s)
		runs[t]++
	}
	byID := map[string]term{}
	for _, t := range live {
		byID[t.ID] = t
	}
	rest := free[:0]
	for _, s := range free { // a restarted worker's shards go back to it
		if t, ok := byID[prevID[s]]; ok && wants(t) {
			give(t, s)
			continue
		}
		rest = append(rest, s)
	}
	for _, t := range order {
		for wants(t) && len(rest) > 0 {
			give(t, rest[0])
			rest = rest[1:]
		}
	}
}

// sameOwnership reports whether a and b give every shard the same owner,
// state and epoch, and every owner the same ReleaseGen.
func sameOwnership(a, b *assignment) bool {
	for s := range a.Slots {
		ta, oka := a.owner(s)
		tb, okb := b.owner(s)
		if ta != tb || oka != okb || a.Slots[s].Releasing != b.Slots[s].Releasing || a.Slots[s].Epoch != b.Slots[s].Epoch {
			return false
		}
		if oka && a.Members[a.Slots[s].Owner].ReleaseGen != b.Members[b.Slots[s].Owner].ReleaseGen {
			return false
		}
	}
	return true
}
