// Package watch is the one judgement of whether a lease's holder is gone:
// the watch of its record that leasehold status and leasehold break make,
// and the verdict on which break, without --force, frees the lease.
//
// It lives apart from the CLI (package main, which nothing can import) so
// that the engine simulation (sim) breaks leases with the very code an
// operator's break runs: a fault in this judgement is found there by seed,
// not by a copy of it that could stay right while this one goes wrong.
package watch

import (
	"context"
	"math"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// A Watch is what a watch of a lease saw.
type Watch struct {
	// First and Last are the records the first and the last read returned.
	First, Last lease.Record
	// For is how long the watch lasted after the first read: 0 when the
	// lease was read once.
	For time.Duration
	// Wait is how much longer the Lease that read Last would have to see
	// it unchanged before taking it over (lease.Watcher): the count
	// Acquire takes a lease over by, which a failed or late read, or a
	// restore, restarts. Last.TTL for a Lease that keeps no count.
	Wait time.Duration
	// Native says the store judges expiry itself (lease.JudgedByStore):
	// its renewals need not change the version, and a lapsed lease reads
	// as released.
	Native bool
}

// Changed reports whether the record's version changed during the watch.
func (w Watch) Changed() bool { return w.First.Version != w.Last.Version }

// Unchanged is how long the record was seen unchanged: the watch, when its
// version did not change; 0 otherwise.
func (w Watch) Unchanged() time.Duration {
	if w.For > 0 && !w.Changed() {
		return w.For
	}
	return 0
}

// Lapsed reports whether the holder Last names is gone: its record, on a
// store whose leases are judged by their contenders, was watched and not
// renewed for as long as a contender that watched it would wait before
// taking it over (Wait is 0). A record merely unchanged for its TTL is not
// lapsed when a read in between failed or came late: a renewal, hidden by
// a restore, may have fallen in the gap. Lapsed is the only verdict on
// which break frees a lease without --force.
func (w Watch) Lapsed() bool {
	return w.Last.Held() && !w.Changed() && !w.Native && w.For > 0 && w.Wait == 0
}

// UnknownHolder reports whether rec is a lease the store holds for someone
// no record names (lease.Lease.Observe): not released, no holder, and read
// from the store (a lease never acquired reads as the zero Record).
func UnknownHolder(rec lease.Record) bool {
	return rec.Holder == "" && !rec.Released && rec.Version != ""
}

// ToBreak is how long break watches rec before it judges its holder, on l:
// its TTL when rec is held on a store whose leases are judged by their
// contenders, so that the watch is long enough for Lapsed; 0 (read once)
// otherwise, where the store itself says whether its lease is live.
func ToBreak(l lease.Lease) func(rec lease.Record) time.Duration {
	return func(rec lease.Record) time.Duration {
		if !rec.Held() || l.Judge() != lease.JudgedByContender {
			return 0
		}
		return rec.TTL
	}
}

// Lease reads l with read and, for watchFor(first record) after that read
// returned (0: not at all), watches it: reads it again at a follower's pace
// (Pace) until the watch is over or a read returns another version. A
// read's error is returned as it is; ctx's end during a pause returns
// ctx.Err().
func Lease(ctx context.Context, l lease.Lease, read func(context.Context) (lease.Record, error), watchFor func(lease.Record) time.Duration) (Watch, error) {
	first, err := read(ctx)
	if err != nil {
		return Watch{}, err
	}
	w := Watch{First: first, Last: first, For: watchFor(first), Native: l.Judge() == lease.JudgedByStore}
	end := time.Now().Add(w.For)
	for w.For > 0 && !w.Changed() && time.Now().Before(end) {
		t := time.NewTimer(min(Pace(w.Last), time.Until(end)))
		select {
		case <-ctx.Done():
			t.Stop()
			return Watch{}, ctx.Err()
		case <-t.C:
		}
		if w.Last, err = read(ctx); err != nil {
			return Watch{}, err
		}
	}
	w.Wait = w.Last.TTL
	if c, ok := l.(lease.Watcher); ok {
		w.Wait = c.Wait(w.Last)
	}
	return w, nil
}

// Pace is how long a watch waits between two reads of rec: as often as a
// follower reads (runner.DefaultFollowerReads per renewal of the holder),
// well within the holder's renew interval, beyond which a gap restarts the
// count towards expiry; for ever when rec tells no interval (no record),
// so that the watch's end ends the pause.
func Pace(rec lease.Record) time.Duration {
	if iv := rec.HolderRenewInterval(); iv > 0 {
		return iv / runner.DefaultFollowerReads
	}
	return time.Duration(math.MaxInt64)
}
