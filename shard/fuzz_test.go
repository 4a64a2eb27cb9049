package shard

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// hostileAssignment returns an assignment object with the right magic,
// one member, and that member's identity length set to n: what crashed
// every worker and the assigner (makeslice: len out of range, or out of
// memory), after every restart, when decodeAssignment allocated before it
// checked the length.
func hostileAssignment(n uint64) []byte {
	b := append([]byte(nil), assignmentMagic...)
	for _, v := range []uint64{1 << 32, 0, 1, 15_000, 5_625, 1, n} {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// TestAssignmentHostileLengths: lengths and counts beyond the bytes that
// follow them are lease.ErrCorrupt, found before anything is allocated
// for them.
func TestAssignmentHostileLengths(t *testing.T) {
	huge := func(field string, v uint64) []byte {
		b := append([]byte(nil), assignmentMagic...)
		fields := map[string][]uint64{
			"shards":  {1 << 32, 0, v, 15_000, 5_625, 0},
			"members": {1 << 32, 0, 1, 15_000, 5_625, v},
		}[field]
		for _, f := range fields {
			b = binary.AppendUvarint(b, f)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"identity length 2^62", hostileAssignment(1 << 62)},
		{"identity length 2^40", hostileAssignment(1 << 40)},
		{"identity length beyond the bytes left", append(hostileAssignment(200), "w1"...)},
		{"shards beyond the bytes left", huge("shards", MaxShards)},
		{"members beyond the bytes left", huge("members", MaxShards)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeAssignment(tc.data); !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("decodeAssignment: %v, want lease.ErrCorrupt", err)
			}
		})
	}
}

// FuzzDecodeAssignment: whatever bytes sit at GROUP/assignment,
// decodeAssignment must not panic, nor allocate for a length the bytes do
// not hold, must report what it does not accept as lease.ErrCorrupt, and
// must accept only assignments that encode reads back as the same: every
// slot's owner a member, as many slots as shards. Seeds:
// testdata/fuzz/FuzzDecodeAssignment, with the hostile lengths.
func FuzzDecodeAssignment(f *testing.F) {
	f.Add(sample().encode())
	fenced := sample()
	fenced.Fence, fenced.Expect = true, time.UnixMilli(1_795_000_000_123)
	f.Add(fenced.encode())
	f.Add(hostileAssignment(1 << 62))
	f.Add([]byte("not an assignment"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeAssignment(b)
		if err != nil {
			if !errors.Is(err, lease.ErrCorrupt) || a != nil {
				t.Fatalf("decodeAssignment(%q) = %v, %v; want nil and lease.ErrCorrupt", b, a, err)
			}
			return
		}
		if len(a.Slots) != a.Shards {
			t.Fatalf("decodeAssignment(%q): %d slots for %d shards", b, len(a.Slots), a.Shards)
		}
		for s := range a.Slots {
			if o := a.Slots[s].Owner; o < -1 || o >= len(a.Members) {
				t.Fatalf("decodeAssignment(%q): shard %d's owner %d is not one of %d members", b, s, o, len(a.Members))
			}
		}
		again, err := decodeAssignment(a.encode())
		if err != nil || !reflect.DeepEqual(again, a) {
			t.Fatalf("decodeAssignment(%q) = %+v, but its encoding reads back as %+v, %v", b, a, again, err)
		}
	})
}

// FuzzDecodeAck: whatever bytes sit at GROUP/acks/ID, decodeAck must not
// panic, must report what it does not accept as lease.ErrCorrupt, and must
// accept only acknowledgements of a term (a token) that encode reads back
// as the same. Seeds: testdata/fuzz/FuzzDecodeAck.
func FuzzDecodeAck(f *testing.F) {
	for _, s := range []string{
		`{"leasehold_shard_ack":1,"token":3,"applied":12884901889,"nonce":"4f1c9a0b7e22d3c5"}`,
		`{"leasehold_shard_ack":1,"token":3,"applied":0,"left":true,"restarting":true,"nonce":"n"}`,
		`{"leasehold_shard_ack":2,"token":3,"applied":1,"nonce":"n"}`,
		`{"leasehold_shard_ack":1,"token":0,"applied":1,"nonce":"n"}`,
		`{"leasehold":1,"holder":"w1","token":7}`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := decodeAck(b)
		if err != nil {
			if !errors.Is(err, lease.ErrCorrupt) || k != (ack{}) {
				t.Fatalf("decodeAck(%q) = %+v, %v; want nothing and lease.ErrCorrupt", b, k, err)
			}
			return
		}
		if k.Token == 0 {
			t.Fatalf("decodeAck(%q) accepted %+v, of no term", b, k)
		}
		again, err := decodeAck(k.encode())
		k.Nonce, again.Nonce = "", ""
		if err != nil || again != k {
			t.Fatalf("decodeAck(%q) = %+v, but its encoding reads back as %+v, %v", b, k, again, err)
		}
	})
}

// FuzzParseTermAnnotation: whatever the assigner lease's record carries
// in its shard/term annotation, parseTermAnnotation must not panic, and
// must accept only a term (a token and an identity) that term.annotation
// writes back as the same. Seeds: testdata/fuzz/FuzzParseTermAnnotation.
func FuzzParseTermAnnotation(f *testing.F) {
	for _, s := range []string{"7 worker-1", "18446744073709551615 w", "0 w", "7", " w", "18446744073709551616 w", "-1 w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := parseTermAnnotation(v)
		if !ok {
			if got != (term{}) {
				t.Fatalf("parseTermAnnotation(%q) = %+v, false; want no term", v, got)
			}
			return
		}
		if got.Token == 0 || got.ID == "" {
			t.Fatalf("parseTermAnnotation(%q) accepted %+v", v, got)
		}
		if again, ok := parseTermAnnotation(got.annotation()); !ok || again != got {
			t.Fatalf("parseTermAnnotation(%q) = %+v, but its annotation reads back as %+v, %v", v, got, again, ok)
		}
	})
}
