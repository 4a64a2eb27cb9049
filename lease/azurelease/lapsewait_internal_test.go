package azurelease

import (
	"testing"
	"time"
)

// TestLapseWait: a follower waits until a TTL after its first sight of the
// holder's latest renewal, then tries every fiftieth of the TTL for a tenth
// of it, then waits a TTL, as for a holder whose renewals do not show.
func TestLapseWait(t *testing.T) {
	const ttl = 15 * time.Second
	for _, tc := range []struct {
		name       string
		left, want time.Duration
	}{
		{"just seen", ttl - time.Millisecond, ttl - time.Millisecond},
		{"before the lapse", 2 * time.Second, 2 * time.Second},
		{"at the lapse", 0, ttl / 50},
		{"just after the lapse", -time.Second, ttl / 50},
		{"late by a tenth", -ttl / 10, ttl},
		{"long after the lapse", -ttl, ttl},
	} {
		if got := lapseWait(tc.left, ttl); got != tc.want {
			t.Errorf("%s: lapseWait(%v, %v) = %v, want %v", tc.name, tc.left, ttl, got, tc.want)
		}
	}
}
