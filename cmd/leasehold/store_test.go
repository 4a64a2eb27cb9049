package main

import (
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestStartTimeoutIsWaitedOut: a store that never answers is tried until
// --start-timeout has passed, the last try at its end, before leasehold
// says it could not reach it "within --start-timeout": with 3s it gave up
// after 1.5s, when the next doubled wait would have passed it.
func TestStartTimeoutIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 3 * time.Second
		start := time.Now()
		var tries []time.Duration
		_, err := atStart(t.Context(), "mem://unreachable", timeout, slog.New(slog.DiscardHandler), func() (struct{}, error) {
			tries = append(tries, time.Since(start))
			return struct{}{}, lease.ErrUnavailable
		})
		if took := time.Since(start); took != timeout || tries[len(tries)-1] != timeout {
			t.Errorf("gave up after %v, tries at %v; want the last try at --start-timeout (%v)", took, tries, timeout)
		}
		if code, _ := exitCode(err); code != exitUnavailable || !strings.Contains(err.Error(), "within --start-timeout (3s)") {
			t.Errorf("error %v (exit %d); want exit %d, within --start-timeout (3s)", err, code, exitUnavailable)
		}
	})
}
