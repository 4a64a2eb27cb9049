package quorumlease_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeamPartitionedMinorityHolderBlocksNobody: a contender that can
// reach only the first member (its region's store) takes it and can never
// complete a majority; a contender that reaches every member must still
// lead within a few TTLs (claims d and e: no livelock, a minority's
// outage costs nothing).
func TestRedTeamPartitionedMinorityHolderBlocksNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFleet(t, 3)
		f.q.stores[1].Partition("b")
		f.q.stores[2].Partition("b")
		f.start("b")
		time.Sleep(ttl / 4)
		f.start("a")
		time.Sleep(10 * ttl)
		terms := f.stop()
		if len(terms) != 1 || terms[0].who != "a" {
			t.Fatalf("tenures %+v, want a's: b, cut off from a majority, holds the first member and no one leads", terms)
		}
	})
}

// TestRedTeamTokenCannotWrap: a member record whose quorum token is the
// largest uint64 (a hostile or corrupt annotation) must not make the next
// leader's token wrap round to 0 (claim b, rule 10): the engine reports a
// token that cannot grow as lease.ErrCorrupt.
func TestRedTeamTokenCannotWrap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemQuorum(3)
		ctx := context.Background()
		for i, s := range h.stores {
			m, _ := s.Open("job", lease.Options{Identity: "mallory", TTL: ttl})
			mt, err := m.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			mt = mt.Annotate("quorum/token", strconv.FormatUint(^uint64(0), 10)).Annotate("quorum/seq", "1")
			if i > 0 {
				mt = mt.Annotate("quorum/token", "7")
			}
			if err := m.Release(ctx, mt); err != nil {
				t.Fatal(err)
			}
		}
		a := open(t, h, "a")
		ta, err := a.Acquire(ctx)
		if err == nil {
			t.Fatalf("Acquire after a record with quorum token 2^64-1: token %d, want lease.ErrCorrupt", ta.Token)
		}
		if !errors.Is(err, lease.ErrCorrupt) {
			t.Errorf("Acquire after a record with quorum token 2^64-1: %v, want lease.ErrCorrupt", err)
		}
	})
}
