package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Unreachable checks how a backend meets an endpoint that does not answer:
// try, given a test and an endpoint URL, makes the backend's first request
// there (bounded by callTimeout) and returns its error. In a parallel
// subtest each, against a closed port (ClosedPort, which fails at once) and
// a server that never answers (SilentServer, which fails at callTimeout),
// the error must match lease.ErrUnavailable and be retryable, and come
// within callTimeout and a margin for the race detector.
func Unreachable(t *testing.T, callTimeout time.Duration, try func(t *testing.T, ctx context.Context, endpoint string) error) {
	t.Helper()
	for _, row := range []struct {
		name, endpoint string
		wantAtLeast    time.Duration
	}{
		{"ClosedPort", ClosedPort(t), 0},
		{"NoAnswer", SilentServer(t), callTimeout},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			err := try(t, t.Context(), row.endpoint)
			took := time.Since(start)
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
			if !errors.Is(err, lease.ErrUnavailable) || !lease.Retryable(err) {
				t.Errorf("at %s: %v, want lease.ErrUnavailable, retryable", row.endpoint, err)
			}
			if took < row.wantAtLeast || took > callTimeout+250*time.Millisecond {
				t.Errorf("at %s: took %v, want between %v and CallTimeout (%v) and a margin", row.endpoint, took, row.wantAtLeast, callTimeout)
			}
		})
	}
}
