package shardtest

import (
	"sync/atomic"
	"time"
)

// trouble is when the store last fell behind a group's workers: a
// renewal of a worker's liveness that failed, or a liveness that lapsed.
// How long a group takes to balance or take over on a store that load
// slows is the machine's figure; a wait counts only the time since.
type trouble struct{ at atomic.Int64 } // Unix nanoseconds

func (tr *trouble) mark() { tr.at.Store(time.Now().UnixNano()) }

// overdue reports whether a wait that began at began has lasted d since
// the store last fell behind (or since began), or limit in all; calm is
// when that d began.
func (tr *trouble) overdue(began time.Time, d, limit time.Duration) (over bool, calm time.Time) {
	calm = began
	if at := time.Unix(0, tr.at.Load()); at.After(calm) {
		calm = at
	}
	now := time.Now()
	return now.After(calm.Add(d)) || now.After(began.Add(limit)), calm
}
