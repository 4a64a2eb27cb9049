package shard

// Red-team tests of 66b0f6f (the assigner reads and buries the
// acknowledgements in sorted order, resuming where a round stopped at its
// deadline: inTurn). A TestRedTeam... test that fails shows a hole; these
// passed, and are kept for the cases they add to TestInTurn.

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
)

// slowGets is an Objects whose every Get takes d (fake time) and is
// counted by key.
type slowGets struct {
	*memlease.Objects
	d    time.Duration
	gets map[string]int
}

func (s *slowGets) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	s.gets[key]++
	<-time.After(s.d)
	return s.Objects.Get(ctx, key, known)
}

// TestRedTeamReadAcksNoStarvation: with twelve workers whose
// acknowledgements all change before every round, and a round's deadline
// that leaves time for three reads, every acknowledgement is read within
// every five rounds (ceil(12/3) plus the resume), whatever its place in
// the order; also when the identity a round stopped at is removed, and
// when identities are added before and after it between rounds.
func TestRedTeamReadAcksNoStarvation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		objs := store.Objects("assigner")
		sg := &slowGets{Objects: objs, d: time.Second, gets: map[string]int{}}
		w := &Worker{cfg: Config{Store: sg, Group: "g", CallTimeout: 3 * time.Second, Logger: slog.New(slog.DiscardHandler)}}
		a := &assigner{w: w, acks: map[string]ack{}, ackVer: map[string]string{}, shown: map[string]ack{}, seenAt: map[string]time.Time{}, leftAt: map[string]string{}}
		ids := map[string]bool{}
		for i := range 12 {
			ids[fmt.Sprintf("w%02d", i)] = true
		}
		lastRead := map[string]int{}
		for round := 1; round <= 40; round++ {
			switch round {
			case 10: // the resume point goes away, as a worker leaves
				delete(ids, a.readFrom)
				t.Logf("round %d: removed %q, the resume point", round, a.readFrom)
			case 20: // identities join before and after the resume point
				ids["w00a"], ids["w99"] = true, true
			}
			listed := map[string]string{}
			for id := range ids {
				v, err := objs.Put(context.Background(), ackKey("g", id), ack{Token: 1, Applied: uint64(round)}.encode(), "")
				if err != nil { // exists: replace it
					_, cur, _ := objs.Get(context.Background(), ackKey("g", id), "")
					v, err = objs.Put(context.Background(), ackKey("g", id), ack{Token: 1, Applied: uint64(round)}.encode(), cur)
					if err != nil {
						t.Fatal(err)
					}
				}
				listed[id] = v
			}
			before := maps.Clone(sg.gets)
			a.readAcks(context.Background(), listed, time.Now().Add(2500*time.Millisecond))
			for id := range ids {
				if sg.gets[ackKey("g", id)] > before[ackKey("g", id)] {
					lastRead[id] = round
				}
			}
			if round < 6 {
				continue
			}
			for _, id := range slices.Sorted(maps.Keys(ids)) {
				joined := id == "w00a" || id == "w99"
				if round-lastRead[id] >= 5 && (!joined || round >= 25) {
					t.Errorf("round %d: %s's acknowledgement last read in round %d", round, id, lastRead[id])
				}
			}
		}
	})
}
