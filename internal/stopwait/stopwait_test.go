package stopwait

import (
	"testing"
	"time"
)

func TestKillDeadline(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name             string
		graceEnd, expiry time.Time
		margin           time.Duration
		want             time.Time
	}{
		{"grace ends first", t0.Add(10 * time.Second), t0.Add(15 * time.Second), time.Second, t0.Add(10 * time.Second)},
		{"the lease expires first", t0.Add(10 * time.Second), t0.Add(5 * time.Second), time.Second, t0.Add(4 * time.Second)},
		{"lost: expired already", t0.Add(10 * time.Second), t0, time.Second, t0.Add(-time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KillDeadline(tc.graceEnd, tc.expiry, tc.margin); !got.Equal(tc.want) {
				t.Fatalf("killDeadline = %v, want %v", got.Sub(t0), tc.want.Sub(t0))
			}
		})
	}
}
