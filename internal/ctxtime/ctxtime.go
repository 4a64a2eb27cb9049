// Package ctxtime holds the one wait that runner, shard and leasebench
// share: a sleep that a context cuts short.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx ends, whichever comes first. A d of
// zero or less makes no timer: a timer already due, read in a select
// inside a testing/synctest bubble, crashed the Go runtime (go1.26.8,
// SIGSEGV in runtime.(*timer).maybeRunChan, once in a few hundred runs of
// quorumlease's tests under -race, at Idle's last, empty wait).
func Sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
