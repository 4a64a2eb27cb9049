// Package ctxtime holds the one wait that runner, shard and leasebench
// share: a sleep that a context cuts short.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits for d, or until ctx ends, whichever comes first.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
