//go:build redteam

package shard

// Open (issue 34): a forged acknowledgement at the largest term token pins
// every later term of its worker at or below it, which then ends on
// finding it (a liveness halt); ending cannot raise the next term above the
// cap. Kept out of CI until fixed: go test -tags redteam -run TestRedTeam3 ./shard.

import "testing"

// TestRedTeam3TermTokenAboveForgedAck: an acknowledgement of this worker
// whose term token has the largest high part (maxToken) and low bits all
// ones decodes (it is below 2^63), and becomes the floor; the next term's
// token must go above it, or that term finds a "later term" in its own
// acknowledgement, ends, notes the same floor, and so does every later one.
func TestRedTeam3TermTokenAboveForgedAck(t *testing.T) {
	floor := uint64(maxToken)<<32 | 0xFFFFFFFF
	if _, err := decodeAck(ack{Format: 1, Token: floor}.encode()); err != nil {
		t.Fatalf("decode refuses the forged ack: %v", err)
	}
	for _, r := range []uint32{0, 1 << 31, 0xFFFFFFFF} {
		if got := termToken(1, floor, r); got <= floor {
			t.Errorf("termToken(1, %#x, %#x) = %#x, not above the floor: every term ends on its own acknowledgement (liveness halt)", floor, r, got)
		}
	}
}
