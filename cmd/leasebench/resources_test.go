package main

import (
	"testing"
	"time"
)

func TestWholeRenewals(t *testing.T) {
	for _, tc := range []struct {
		window, ttl, want time.Duration
	}{
		{30 * time.Second, 15 * time.Second, 33750 * time.Millisecond}, // six rounds of 5.625s
		{45 * time.Second, 15 * time.Second, 45 * time.Second},         // eight, exactly
		{time.Second, 2 * time.Second, 1500 * time.Millisecond},        // two of 750ms
	} {
		if got := wholeRenewals(tc.window, tc.ttl); got != tc.want {
			t.Errorf("wholeRenewals(%v, %v) = %v, want %v", tc.window, tc.ttl, got, tc.want)
		}
	}
}
