package lease_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

func TestHeldError(t *testing.T) {
	var err error = &lease.HeldError{Record: lease.Record{Holder: "worker-2", Token: 9}, Wait: time.Second}
	wrapped := fmt.Errorf("campaign: %w", err)
	if !errors.Is(wrapped, lease.ErrHeld) {
		t.Errorf("errors.Is(%v, ErrHeld) = false, want true", wrapped)
	}
	for _, other := range []error{lease.ErrLost, lease.ErrCorrupt, lease.ErrUnavailable, lease.ErrInvalid} {
		if errors.Is(wrapped, other) {
			t.Errorf("errors.Is(%v, %v) = true, want false", wrapped, other)
		}
	}
	var he *lease.HeldError
	if !errors.As(wrapped, &he) || he.Record.Holder != "worker-2" {
		t.Errorf("errors.As(%v, *HeldError) = %v, want the holder worker-2", wrapped, he)
	}
	if want := `lease: held by "worker-2" (token 9)`; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

func TestOptionError(t *testing.T) {
	err := &lease.OptionError{Field: "TTL", Value: 5 * time.Second, Reason: "must be at least 15s"}
	if !errors.Is(err, lease.ErrInvalid) || errors.Is(err, lease.ErrHeld) {
		t.Errorf("OptionError matches ErrInvalid: %t, ErrHeld: %t; want true, false", errors.Is(err, lease.ErrInvalid), errors.Is(err, lease.ErrHeld))
	}
	if want := "lease: TTL (5s) must be at least 15s"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "held", err: &lease.HeldError{}, want: true},
		{name: "lost", err: lease.ErrLost, want: true},
		{name: "unavailable", err: fmt.Errorf("get: %w", lease.ErrUnavailable), want: true},
		{name: "unclassified", err: errors.New("connection reset"), want: true},
		{name: "deadline", err: context.DeadlineExceeded, want: true},
		{name: "invalid", err: &lease.OptionError{Field: "TTL"}, want: false},
		{name: "not found", err: fmt.Errorf("no bucket: %w", lease.ErrNotFound), want: false},
		{name: "permission", err: fmt.Errorf("403: %w", lease.ErrPermission), want: false},
		{name: "corrupt", err: fmt.Errorf("%w: garbage", lease.ErrCorrupt), want: false},
		{name: "unsafe store", err: fmt.Errorf("%w: a global table", lease.ErrUnsafeStore), want: false},
		{name: "corrupt found while unavailable", err: fmt.Errorf("%w (reading back: %w)", lease.ErrUnavailable, lease.ErrCorrupt), want: false},
	} {
		if got := lease.Retryable(tc.err); got != tc.want {
			t.Errorf("%s: Retryable(%v) = %t, want %t", tc.name, tc.err, got, tc.want)
		}
	}
}
