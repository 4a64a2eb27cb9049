package lease

import "context"

// Breaker is implemented by leases that an operator may break: free a
// lease whose holder will never come back (a crashed fleet, a holder of an
// infinite Azure lease) without waiting for it, and without ever lowering
// the fencing counter. Every backend of this module implements it; check
// with a type assertion, as for any optional interface.
//
// Breaking is not part of an election: contenders never break each
// other's leases. Whoever breaks a lease must first decide that its holder
// is gone, as `leasehold break` does by watching the record; a holder that
// is alive after all loses the lease at its next renewal (Renew returns
// ErrLost) and must stop, and until then it may still act as leader, so
// systems downstream must fence it by its token.
type Breaker interface {
	// Break ends the term that rec, a record this Lease's Observe returned,
	// shows, at once. The stored record is marked released and keeps rec's
	// holder and token, so the next Acquire succeeds at once with a token
	// greater than every earlier one, and the holder's next Renew returns
	// ErrLost.
	//
	// It breaks only the lease as rec shows it: on a compare-and-swap store
	// it writes conditionally on rec's Version; on a native lease it breaks
	// the store's lease only if the blob is still at rec's Version (its
	// holder has not changed; renewals do not change it). When the lease
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
