package shard

import (
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

func sample() *assignment {
	return &assignment{
		Gen: 7<<32 | 3, Shards: 4, TTL: 15 * time.Second, Renew: 5625 * time.Millisecond,
		Members: []member{{ID: "w1", Token: 2, ReleaseGen: 7<<32 | 2}, {ID: "w2", Token: 9}},
		Slots:   []slot{{Owner: 0, Epoch: 5}, {Owner: 1, Epoch: 7<<32 | 3}, {Owner: -1, Epoch: 1}, {Owner: 0, Releasing: true, Epoch: 4}},
	}
}

func TestAssignmentRoundTrip(t *testing.T) {
	for _, fence := range []bool{false, true} {
		a := sample()
		a.Fence = fence
		if fence {
			a.Expect = time.UnixMilli(1_795_000_000_123)
		}
		got, err := decodeAssignment(a.encode())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, a) {
			t.Fatalf("decoded %+v, want %+v", got, a)
		}
	}
}

// TestAssignmentAcceptsFieldAddedByLaterVersion: in a rolling upgrade a
// later version's assigner may append fields after MaxPerWorker (writing
// Expect, FenceGen and MaxPerWorker, as 0 when unset, before them); this
// version reads such an assignment for what it knows, instead of refusing
// it as corrupt and so starting nothing the new assigner gives it (rule
// 11). FenceGen and MaxPerWorker were such fields: an earlier version
// skips them, and an assignment an earlier version wrote reads as
// uncapped.
func TestAssignmentAcceptsFieldAddedByLaterVersion(t *testing.T) {
	expecting := sample()
	expecting.Expect, expecting.FenceGen, expecting.MaxPerWorker = time.UnixMilli(1_795_000_000_123), 7<<32|12345, 2
	fenced := sample()
	fenced.FenceGen = 7<<32 | 12345
	capped := sample()
	capped.MaxPerWorker = 1
	unset := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(sample().encode(), 0), 0), 0)
	for _, tc := range []struct {
		name string
		a    *assignment
		data []byte
	}{
		{"after max per worker", expecting, binary.AppendUvarint(expecting.encode(), 42)},
		{"fence gen without expect, no max per worker (an earlier version's)", fenced, fenced.encode()},
		{"max per worker without expect or fence gen", capped, capped.encode()},
		{"after expect 0, fence gen 0 and max per worker 0 (unset)", sample(), append(unset, "a later field"...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAssignment(tc.data)
			if err != nil {
				t.Fatalf("decodeAssignment of an assignment with a field added by a later version: %v", err)
			}
			if !reflect.DeepEqual(got, tc.a) {
				t.Fatalf("decoded %+v, want %+v", got, tc.a)
			}
		})
	}
}

func TestAssignmentOf10000ShardsIsCompact(t *testing.T) {
	a := &assignment{Gen: 1 << 40, Shards: 10_000, TTL: 15 * time.Second, Renew: 5 * time.Second, Slots: make([]slot, 10_000)}
	for i := range 1000 {
		a.Members = append(a.Members, member{ID: strings.Repeat("w", 20) + string(rune('a'+i%26)), Token: uint64(i)})
	}
	for s := range a.Slots {
		a.Slots[s] = slot{Owner: s % 1000, Epoch: 1<<40 | uint64(s)}
	}
	if n := len(a.encode()); n > 120_000 {
		t.Fatalf("10,000 shards over 1,000 workers encode to %d bytes; want at most 120 kB", n)
	}
}

func TestAssignmentCorrupt(t *testing.T) {
	good := sample().encode()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"a lease record", []byte(`{"leasehold":1,"holder":"w1"}`)},
		{"truncated", good[:len(good)-1]},
		{"owner out of range", func() []byte { a := sample(); a.Slots[0].Owner = 5; return a.encode() }()},
		{"no shards", func() []byte { a := sample(); a.Shards, a.Slots = 0, nil; return a.encode() }()},
		{"invalid identity", func() []byte { a := sample(); a.Members[0].ID = "a\nb"; return a.encode() }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeAssignment(tc.data); !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("decode: %v, want lease.ErrCorrupt", err)
			}
		})
	}
}

func TestCheckGroupNamesTheField(t *testing.T) {
	a := sample()
	for _, tc := range []struct {
		name         string
		shards, per  int
		ttl, renew   time.Duration
		wantInErrMsg string
	}{
		{"shards", 5, 0, a.TTL, a.Renew, "shard: Shards (5) differs from the group's 4"},
		{"TTL", 4, 0, time.Minute, a.Renew, "TTL (1m0s) differs from the group's 15s"},
		{"renew interval", 4, 0, a.TTL, time.Second, "RenewInterval (1s) differs from the group's 5.625s"},
		{"max per worker", 4, 1, a.TTL, a.Renew, "shard: MaxPerWorker (1) differs from the group's 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := a.checkGroup(tc.shards, tc.per, tc.ttl, tc.renew)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.wantInErrMsg) {
				t.Fatalf("checkGroup: %v, want an error containing %q", err, tc.wantInErrMsg)
			}
		})
	}
	if err := a.checkGroup(4, 0, a.TTL, a.Renew); err != nil {
		t.Fatalf("checkGroup of the group's own settings: %v", err)
	}
}
