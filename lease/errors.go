package lease

import (
	"errors"
	"fmt"
	"time"
)

// The error taxonomy. Every error a Lease returns wraps one of these (test
// with errors.Is), or is the context's own error, unwrapped. A write whose
// outcome stayed unknown wraps ErrUnavailable, and may also wrap the failed
// write's own error. Backends wrap their SDK's error too, so errors.As
// still reaches it.
var (
	// ErrHeld: another contender holds the lease. The error is a *HeldError.
	ErrHeld = errors.New("lease: held")
	// ErrLost: the caller's term has ended; it must stop acting as leader.
	ErrLost = errors.New("lease: lost")
	// ErrCorrupt: the object at the lease's key is not a lease record (it was
	// written by someone else, or by hand). It is never taken over.
	ErrCorrupt = errors.New("lease: not a lease record")
	// ErrUnavailable: the store did not answer, timed out, or throttled; the
	// call may be retried.
	ErrUnavailable = errors.New("lease: store unavailable")
	// ErrNotFound: the bucket, table or container the lease lives in does not
	// exist, or does not have the expected shape.
	ErrNotFound = errors.New("lease: store not found")
	// ErrPermission: the store refused the caller's credentials.
	ErrPermission = errors.New("lease: permission denied")
	// ErrInvalid: an option or URL is invalid. The error is an *OptionError
	// when a single option is at fault.
	ErrInvalid = errors.New("lease: invalid option")
	// ErrUnsafeStore: the store does not keep the contract leader election
	// needs (conditional writes that it enforces atomically, in one place),
	// so it could elect several leaders at once. It is refused, never
	// trusted; the message says what the store failed.
	ErrUnsafeStore = errors.New("lease: store does not keep the contract")
)

// ErrNoRecord: the lease has never been acquired: its key holds nothing yet.
// Observe returns it; Acquire treats it as a free lease.
var ErrNoRecord = errors.New("lease: no record")

// HeldError is returned by Acquire when another contender holds the lease.
type HeldError struct {
	// Record is the holder's record as this contender last read it.
	Record Record
	// Wait is how much longer this contender must see Record unchanged
	// before it may take the lease over. A native lease whose expiry the
	// store judges reports how long until the store's lease can have
	// lapsed, as far as this contender can tell (a TTL after it first saw
	// the holder's latest renewal, on a lease whose renewals show: see
	// RenewalShower), or the record's TTL when it cannot tell.
	Wait time.Duration
}

// Error names the holder and its token: `lease: held by "worker-2" (token 7)`.
func (e *HeldError) Error() string {
	return fmt.Sprintf("lease: held by %q (token %d)", e.Record.Holder, e.Record.Token)
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// OptionError reports an invalid option, naming the field and its value:
// "runner: RenewDeadline (10s) must be less than TTL (8s)".
type OptionError struct {
	// Pkg is the package whose option it is; "" means "lease".
	Pkg string
	// Field is the invalid option's name: "TTL", "URL".
	Field string
	// Value is the invalid value, as the message shows it.
	Value any
	// Reason says what is wrong with it: "must be positive".
	Reason string
}

// Error says which field of which package is invalid, with its value and
// why: "lease: TTL (0s) must be a positive whole number of milliseconds".
func (e *OptionError) Error() string {
	pkg := e.Pkg
	if pkg == "" {
		pkg = "lease"
	}
	return fmt.Sprintf("%s: %s (%v) %s", pkg, e.Field, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *OptionError) Is(target error) bool { return target == ErrInvalid }

// Retryable reports whether err is worth retrying: the lease is held (it may
// be released or lapse), or the store is unavailable or answered something
// this package does not classify. Invalid options, a missing store, refused
// credentials, a foreign object at the key and a store that does not keep
// the contract are not retryable: they need a person.
func Retryable(err error) bool {
	for _, permanent := range []error{ErrInvalid, ErrNotFound, ErrPermission, ErrCorrupt, ErrUnsafeStore} {
		if errors.Is(err, permanent) {
			return false
		}
	}
	return err != nil
}
