package shard

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
)

// TestSettledAndStatus: the assigner reports each settling after a change
// (the first worker, then a join), with how long it took and how many
// shards it gave out; ReadStatus shows the members, their shards and
// epochs, and the balance, as the assignment does.
func TestSettledAndStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		var mu sync.Mutex
		var settled []Settled
		start := func(ctx context.Context, id string, assigner bool) chan error {
			w, err := New(Config{
				Store: store.Objects(id), Group: "g", Shards: 5, Identity: id, Logger: simLogger(), NoAssigner: !assigner,
				Run: func(ctx context.Context, s Shard) error { <-ctx.Done(); return nil },
				OnSettled: func(s Settled) {
					mu.Lock()
					defer mu.Unlock()
					settled = append(settled, s)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- w.Run(ctx) }()
			return done
		}
		ctx, cancel := context.WithCancel(t.Context())
		a := start(ctx, "a", true)
		time.Sleep(time.Minute)
		opts := lease.Options{Identity: "status"}
		st, err := ReadStatus(ctx, store.Objects("status"), "g", opts)
		if err != nil || !st.Balanced || len(st.Members) != 1 || len(st.Members[0].Shards) != 5 {
			t.Fatalf("status with one worker: %+v, %v; want a balanced group, a owning 5 shards", st, err)
		}
		bctx, leaveB := context.WithCancel(ctx)
		b := start(bctx, "b", false)
		time.Sleep(time.Minute)
		st, err = ReadStatus(ctx, store.Objects("status"), "g", opts)
		if err != nil || !st.Balanced || len(st.Members) != 2 || st.Shards != 5 || len(st.Unowned) != 0 {
			t.Fatalf("status after b joined: %+v, %v; want balanced over a and b", st, err)
		}
		counts := []int{len(st.Members[0].Shards), len(st.Members[1].Shards)}
		if counts[0]+counts[1] != 5 || max(counts[0], counts[1]) != 3 {
			t.Fatalf("shards per member %v, want 3 and 2", counts)
		}
		for _, m := range st.Members {
			for _, s := range m.Shards {
				if s.Epoch == 0 || s.Epoch > st.Gen {
					t.Fatalf("member %s shard %+v: want an epoch in 1..%d", m.Identity, s, st.Gen)
				}
			}
		}
		leaveB()
		<-b
		time.Sleep(time.Minute)
		st, err = ReadStatus(ctx, store.Objects("status"), "g", opts)
		if err != nil || !st.Balanced || st.Members[1].Live || len(st.Members[0].Shards) != 5 {
			t.Fatalf("status after b left: %+v, %v; want b not live and a owning all 5", st, err)
		}
		cancel()
		<-a
		mu.Lock()
		defer mu.Unlock()
		if len(settled) != 3 {
			t.Fatalf("settlings %+v; want 3: a alone, the join, the leave", settled)
		}
		// The join takes rounds (release, acknowledgement, grant); the
		// leave settles in the round that reads it.
		for i, want := range []struct {
			workers, granted int
			rounds           bool
		}{{1, 5, true}, {2, 2, true}, {1, 2, false}} {
			s := settled[i]
			if s.Workers != want.workers || s.Granted != want.granted || (s.Took > 0) != want.rounds || s.Took > 2*lease.DefaultTTL {
				t.Errorf("settling %d: %+v; want %d workers, %d granted, within 2 TTL (and more than a round: %t)", i, s, want.workers, want.granted, want.rounds)
			}
		}
	})
}

func TestReadStatusOfNoGroup(t *testing.T) {
	st, err := ReadStatus(t.Context(), memlease.NewStore().Objects("s"), "none", lease.Options{Identity: "s"})
	if err != nil || st.Shards != 0 || st.Members != nil || st.Balanced {
		t.Fatalf("ReadStatus of an empty prefix: %+v, %v; want the zero Status", st, err)
	}
}

// TestNoAssignmentIsNotBalanced: members that joined before any assigner
// wrote an assignment are not a balanced group (leasehold status reported
// them balanced, and a test that waited for balance read no assignment).
func TestNoAssignmentIsNotBalanced(t *testing.T) {
	st := Status{Members: []MemberStatus{{Identity: "a", Token: 1, Live: true}}}
	if st.balanced() {
		t.Error("a live member and no assignment: balanced")
	}
}

func TestSettledNeedsEveryShardOnALiveWorker(t *testing.T) {
	a, b := term{"a", 1}, term{"b", 1}
	asg := func(owners ...int) *assignment {
		x := &assignment{Gen: 9, Shards: len(owners), Members: []member{{ID: "a", Token: 1}, {ID: "b", Token: 1}}}
		for _, o := range owners {
			x.Slots = append(x.Slots, slot{Owner: o, Epoch: 9})
		}
		return x
	}
	for _, tc := range []struct {
		name string
		a    *assignment
		live []term
		want bool
	}{
		{"balanced", asg(0, 1, 0), []term{a, b}, true},
		{"two more", asg(0, 0, 0, 1), []term{a, b}, false},
		{"unowned", asg(0, -1, 1), []term{a, b}, false},
		{"owner not live", asg(0, 1, 0), []term{a}, false},
		{"a live worker owns none", asg(0, 0), []term{a, b}, false},
		{"no workers", asg(0), nil, false},
	} {
		if got := tc.a.settled(tc.live); got != tc.want {
			t.Errorf("%s: settled %t, want %t", tc.name, got, tc.want)
		}
	}
	r := asg(0, 1)
	r.Slots[1].Releasing = true
	if r.settled([]term{a, b}) {
		t.Error("settled with a shard releasing")
	}
	f := asg(0, 1)
	f.Fence = true
	if f.settled([]term{a, b}) || f.granted() != 0 {
		t.Error("a fence settled or granted shards")
	}
	c := term{"c", 1}
	for _, tc := range []struct {
		name string
		a    *assignment
		live []term
		want bool
	}{
		{"a slot each, one free", asg(0, -1, 1), []term{a, b}, true},
		{"a free slot while a worker waits", asg(0, -1, 1), []term{a, b, c}, false},
		{"more workers than slots", asg(1, 0), []term{a, b, c}, true},
		{"one owns two", asg(0, 0, -1), []term{a, b}, false},
	} {
		tc.a.MaxPerWorker = 1
		if got := tc.a.settled(tc.live); got != tc.want {
			t.Errorf("slots, %s: settled %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestStatusBalancedUnderACap: leasehold status calls a slot group whose
// live members hold one slot each balanced, with slots left over (fewer
// members than slots) or members left waiting (more).
func TestStatusBalancedUnderACap(t *testing.T) {
	member := func(id string, slots ...int) MemberStatus {
		m := MemberStatus{Identity: id, Token: 1, Live: true}
		for _, s := range slots {
			m.Shards = append(m.Shards, Shard{s, 5})
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		members []MemberStatus
		want    bool
	}{
		{"fewer members than slots", []MemberStatus{member("a", 0), member("b", 2)}, true},
		{"more members than slots", []MemberStatus{member("a", 0), member("b", 1), member("c", 2), member("d")}, true},
		{"a slot free while a member waits", []MemberStatus{member("a", 0), member("b"), member("c", 2)}, false},
		{"one member holds two", []MemberStatus{member("a", 0, 1), member("b", 2)}, false},
	} {
		st := Status{Shards: 3, MaxPerWorker: 1, Members: tc.members}
		if got := st.balanced(); got != tc.want {
			t.Errorf("%s: balanced %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestLapse: a member whose liveness record kept its version through a
// watch of at least the group's TTL is judged gone, and the balance is
// judged over the others; a shorter watch or a renewed record changes
// nothing.
func TestLapse(t *testing.T) {
	read := func(aVersion, bVersion string) Status {
		st := Status{Shards: 4, TTL: 15 * time.Second, Members: []MemberStatus{
			{Identity: "a", Token: 1, Live: true, Version: aVersion, Shards: []Shard{{0, 7}, {1, 7}, {2, 9}, {3, 9}}},
			{Identity: "b", Token: 2, Live: true, Version: bVersion},
		}}
		st.Balanced = st.balanced()
		return st
	}
	for _, tc := range []struct {
		name    string
		later   string
		watched time.Duration
		lapsed  bool
	}{
		{"unchanged for a TTL", "b1", 15 * time.Second, true},
		{"unchanged for less", "b1", 14 * time.Second, false},
		{"renewed", "b2", time.Minute, false},
	} {
		st := read("a2", tc.later)
		if st.Balanced {
			t.Fatalf("%s: balanced before Lapse with b live and owning none", tc.name)
		}
		st.Lapse(read("a1", "b1"), tc.watched)
		if b := st.Members[1]; b.Lapsed != tc.lapsed || b.Live == tc.lapsed || st.Balanced != tc.lapsed {
			t.Errorf("%s: b %+v, balanced %t; want lapsed %t, and balanced over a alone only then", tc.name, b, st.Balanced, tc.lapsed)
		}
	}
}

// TestReadStatusFencedEpochs: a shard whose epoch a fence set is Fenced,
// for its command may run under an earlier epoch; one given by a later
// write of the assigner is not.
func TestReadStatusFencedEpochs(t *testing.T) {
	store := memlease.NewStore()
	fence := uint64(2) << 32
	a := assignment{
		Gen: fence | 3, Shards: 3, TTL: lease.DefaultTTL, Renew: lease.DefaultTTL / 3,
		Members: []member{{ID: "a", Token: 1}},
		Slots:   []slot{{Owner: 0, Epoch: fence}, {Owner: 0, Epoch: fence | 2}, {Owner: 0, Epoch: fence}},
	}
	if _, err := store.Objects("w").Put(t.Context(), assignmentKey("g"), a.encode(), ""); err != nil {
		t.Fatal(err)
	}
	st, err := ReadStatus(t.Context(), store.Objects("status"), "g", lease.Options{Identity: "status"})
	if err != nil || len(st.Members) != 1 || !slices.Equal(st.Members[0].Fenced, []int{0, 2}) {
		t.Fatalf("status: %+v, %v; want member a with shards 0 and 2 fenced", st, err)
	}
}

// TestReadStatusBoundedByCallTimeout: ReadStatus's calls of the Store are
// each bounded by the options' CallTimeout, as a worker's are: on a store
// that stopped answering it returns lease.ErrUnavailable after a call
// timeout, so that leasehold status --shards gives up at --start-timeout
// (red team 14: it waited for ever).
func TestReadStatusBoundedByCallTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		store.Hang("reader")
		began := time.Now()
		_, err := ReadStatus(t.Context(), store.Objects("reader"), "g", lease.Options{Identity: "reader", CallTimeout: 2 * time.Second})
		if !errors.Is(err, lease.ErrUnavailable) || time.Since(began) != 2*time.Second {
			t.Errorf("ReadStatus on a store that hangs: %v after %v; want lease.ErrUnavailable after the call timeout (2s)", err, time.Since(began))
		}
	})
}

// hangingGets is a Store whose reads of one key hang until their context
// ends.
type hangingGets struct {
	Store
	key string
}

func (h hangingGets) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	if key == h.key {
		<-ctx.Done()
		return nil, "", ctx.Err()
	}
	return h.Store.Get(ctx, key, known)
}

// TestReadStatusReadsBoundedByCallTimeout: ReadStatus's reads after the
// listing, of a member's acknowledgement and of the assignment, are each
// bounded by the options' CallTimeout too (TestReadStatusBoundedByCallTimeout
// hangs the listing, the first call, and passed with either read
// unbounded).
func TestReadStatusReadsBoundedByCallTimeout(t *testing.T) {
	for _, key := range []string{ackKey("g", "w1"), assignmentKey("g")} {
		t.Run(key, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				store.Put(memberKey("g", "w1"), driver.EncodeJSON(lease.Record{Holder: "w1", Token: 1, TTL: 15 * time.Second, Nonce: "n"}))
				store.Put(ackKey("g", "w1"), []byte("{}"))
				store.Put(assignmentKey("g"), []byte("{}"))
				began := time.Now()
				_, err := ReadStatus(t.Context(), hangingGets{store.Objects("reader"), key}, "g", lease.Options{Identity: "reader", CallTimeout: 2 * time.Second})
				if !errors.Is(err, lease.ErrUnavailable) || time.Since(began) != 2*time.Second {
					t.Errorf("ReadStatus on a store whose read of %s hangs: %v after %v; want lease.ErrUnavailable after the call timeout (2s)", key, err, time.Since(began))
				}
			})
		})
	}
}
