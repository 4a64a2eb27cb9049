package lease

import (
	"context"
	"time"
)

// Breaker is implemented by leases that an operator may break: free a
// lease whose holder will never come back (a crashed fleet, a holder of an
// infinite Azure lease) without waiting for it, and without ever lowering
// the fencing counter. Every backend of this module implements it; check
// with a type assertion, as for any optional interface.
//
// Breaking is not part of an election: contenders never break each
// other's leases. Whoever breaks a lease must first decide that its holder
// is gone, as `leasehold break` does by watching the record until the
// Lease's own count says a contender would take it over (Watcher); a holder that
// is alive after all loses the lease at its next renewal (Renew returns
// ErrLost) and must stop, and until then it may still act as leader, so
// systems downstream must fence it by its token.
type Breaker interface {
	// Break ends the term that rec, a record this Lease's Observe returned,
	// shows, at once. The stored record is marked released and keeps rec's
	// holder, token and annotations (but a handoff's AnnotationSuccessor:
	// breaking a handoff frees the lease for every contender), so the next
	// Acquire succeeds at once
	// with a token greater than every earlier one, and the holder's next
	// Renew returns ErrLost. It is marked broken too (AnnotationBroken), so
	// that the term that takes it over knows its holder may still be
	// running; on a record whose annotations leave no room for the mark
	// (MaxAnnotations, MaxAnnotationsSize) Break writes nothing and returns
	// an *OptionError naming it.
	//
	// It breaks only the lease as rec shows it: on a compare-and-swap store
	// it writes conditionally on rec's Version; on a native lease it breaks
	// the store's lease only if the blob is still at rec's Version (its
	// holder has not changed, nor renewed, on a lease whose renewals show:
	// see RenewalShower). When the lease
	// has changed since rec was read it writes nothing and returns an error
	// matching ErrHeld, naming the current holder, if the lease is held (the
	// holder renewed it, or another took it), or the current record and nil
	// if it is free. A rec that is already released is returned as it is,
	// and nothing is written.
	//
	// It returns the record as it stands after the break, and otherwise
	// the errors of Lease's methods; like every write, it is refused on a
	// store found not to keep the contract (ErrUnsafeStore).
	Break(ctx context.Context, rec Record) (Record, error)
}

// Watcher is implemented by leases whose contender judges expiry
// (JudgedByContender): those of every compare-and-swap store. It tells,
// without a request, what Acquire would make of the record read last, by
// the one count Acquire takes a lease over by, so that whoever frees a
// lease by hand judges its holder gone exactly as a contender would
// (leasehold break watches with it before it breaks). Check with a type
// assertion.
type Watcher interface {
	// Wait returns how much longer rec must stay unchanged before Acquire
	// would take it over: 0 when Acquire would write at once (rec is free,
	// or its holder's TTL has passed in an unbroken run of this Lease's
	// reads of rec's version, as Acquire counts it), and the time left
	// otherwise, the holder's whole TTL when the count has just started. rec must
	// be the record this Lease's latest Observe (or Acquire) read, or the
	// zero Record when that read found none. A count ends with a read
	// that fails, one that returns more than the holder's renew interval
	// (Record.HolderRenewInterval) after the one before was sent, another
	// version, or a token lower than one this Lease has seen, or equal to
	// it under another holder (a restore): a caller that watches a record
	// to see it lapse reads it well within that interval. After a restore,
	// no record is free before the TTL of the holder it may have hidden
	// has passed since the restore was read.
	Wait(rec Record) time.Duration
}

// Keeper is implemented by leases whose record can keep other contenders
// out for a chosen time after its holder has gone: the compare-and-swap
// stores, where expiry is the record's TTL on each contender's own clock.
// A native lease (Azure Blob) lasts 15 to 60 seconds or forever, fixed when
// it is acquired, and does not implement it. Check with a type assertion.
type Keeper interface {
	// Keep ends term t without releasing the lease: it writes the record
	// once more, still held by t's holder with t's token and
	// Annotations, with TTL d, so that no other contender takes the lease
	// over until it has seen that record unchanged for d on its own clock.
	// The caller must have stopped acting as leader before calling it, and
	// must not renew t afterwards. d must be a positive whole number of
	// milliseconds. It returns ErrLost when the term had already ended,
	// and otherwise the errors of Renew.
	Keep(ctx context.Context, t Term, d time.Duration) error
}

// Handoffer is implemented by leases whose holder can hand the lease to a
// contender it names (a planned handoff): the compare-and-swap stores, and
// a quorum of them. Check with a type assertion.
type Handoffer interface {
	// ReleaseTo ends term t by handing the lease to the contender whose
	// Options.Identity is successor. It writes the record once more, still
	// held by t's holder with t's token, TTL and Annotations, and naming
	// successor (AnnotationSuccessor, Record.Successor): successor's next
	// Acquire takes it over at once, with a token greater than t's, as it
	// would a released record; every other contender sees it held, and
	// waits for it as for any held record, for its TTL on its own clock
	// from its first sight of it. So no third contender takes the lease in
	// between, and a successor that never comes (it crashed during the
	// handoff) leaves the lease to the others a TTL after the handoff, as a
	// holder that crashed right after a renewal would. A contender that
	// does not know the annotation (an earlier version of leasehold) sees a
	// held record too. Put back by a restore under a later holder, the
	// record is, for its successor, what a released record is for every
	// contender (lease/driver's doc: "Why a follower never takes over a
	// live holder").
	//
	// The caller must have stopped acting as leader before calling it, and
	// must not renew t afterwards: Renew and Keep of t then return ErrLost,
	// and Release of t returns nil and writes nothing, leaving the handoff
	// in place. successor must be a valid identity other than t's holder
	// (an *OptionError naming it otherwise). It returns ErrLost when the
	// term had already ended, and otherwise the errors of Renew.
	ReleaseTo(ctx context.Context, t Term, successor string) error
}

// Idler is implemented by leases that have work to do between a
// holder's renewals. The runner calls Idle, instead of sleeping, from when
// a renewal returns until the next is due: Idle returns by until, or once
// ctx ends, and must not write to the lease. If it returns sooner, the
// runner sleeps the rest of the wait: its writes of a term stay a renew
// interval apart. A quorum lease
// (lease/quorumlease) reads the members its term does not hold, so that
// its next renewal can take them back (a member's own Acquire counts
// expiry only over reads no further apart than the holder's renew
// interval, and renewals are always further apart). Check with a type
// assertion.
type Idler interface {
	Idle(ctx context.Context, until time.Time)
}
