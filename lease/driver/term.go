package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// The rules every backend applies to the terms and records it writes, once
// for all of them: the CAS engine uses these, and so does a backend that
// implements lease.Lease itself on a store's native lease.

// CheckTerm reports, as a *lease.OptionError, a term t that could not have
// come from an Acquire or Renew of a lease opened with opts, or whose
// annotations cannot be stored (see lease.Annotations.Validate).
func CheckTerm(t lease.Term, opts lease.Options) error {
	switch {
	case t.Holder != opts.Identity || t.Token == 0 || t.Version == "":
		return &lease.OptionError{Field: "Term", Value: fmt.Sprintf("%q/%d", t.Holder, t.Token), Reason: fmt.Sprintf("was not issued to %q", opts.Identity)}
	}
	return t.Annotations.Validate()
}

// NextToken returns the fencing token of the acquisition that follows the
// record prev (the zero Record when the key holds none), by a Lease that
// has read or written tokens up to highest: one more than the greater of
// prev's token and highest. So a record that was deleted and created anew
// (a lifecycle rule, a person, a restore from backup) continues the count
// of every running process that saw it before; a process started after
// the delete knows only what it reads, and starts again from there. A
// token that cannot grow is reported as lease.ErrCorrupt: no writer
// reaches it, and wrapping round would give a token lower than every
// earlier one.
func NextToken(prev lease.Record, highest uint64) (uint64, error) {
	last := max(prev.Token, highest)
	if last == math.MaxUint64 {
		return 0, Corruptf("token %d cannot grow", last)
	}
	return last + 1, nil
}

// Highest remembers the highest fencing token one Lease has read or
// written, for NextToken. The zero value is ready to use; it is safe for
// concurrent use.
type Highest struct {
	mu sync.Mutex
	n  uint64
}

// Note records token as read or written.
func (h *Highest) Note(token uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n = max(h.n, token)
}

// Next returns NextToken(prev, the highest token noted).
func (h *Highest) Next(prev lease.Record) (uint64, error) {
	h.mu.Lock()
	n := h.n
	h.mu.Unlock()
	return NextToken(prev, n)
}

// NewNonce returns 16 random hex digits: the fresh text every write
// carries, so that every write changes the stored bytes, and so that a
// record read back can be matched to the write that stored it (SameWrite).
func NewNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// SameWrite reports whether r is the record that was written as w: the
// same nonce (fresh for every write, so no other write has it), holder,
// token, released flag and annotations. A w without a nonce matches
// nothing.
func SameWrite(r, w lease.Record) bool {
	return w.Nonce != "" && r.Nonce == w.Nonce && r.Holder == w.Holder && r.Token == w.Token && r.Released == w.Released && r.Annotations == w.Annotations
}

// ReadBack resolves a write of want that failed with werr, whose outcome
// is unknown until the record is read: a timeout, a lost response, even a
// failed condition (a retried write can report one although it
// succeeded). It reads the record with read and returns it as got, with:
//
//   - nil when got is want: the write landed after all;
//   - ctx's error, unwrapped, when ctx has ended (got is then zero);
//   - an error wrapping lease.ErrUnavailable and werr when the read failed
//     too (got is then zero), and wrapping lease.ErrNoRecord too when the
//     read found no record: the record was deleted, or never written;
//   - werr otherwise: the write did not land, and got says what did.
func ReadBack(ctx context.Context, werr error, want lease.Record, read func(context.Context) (lease.Record, error)) (got lease.Record, err error) {
	if ctx.Err() != nil {
		return lease.Record{}, ctx.Err()
	}
	got, rerr := read(ctx)
	switch {
	case rerr != nil && ctx.Err() != nil:
		return lease.Record{}, ctx.Err()
	case errors.Is(rerr, lease.ErrNoRecord):
		return lease.Record{}, fmt.Errorf("%w: %w, and reading back found no record: %w", lease.ErrUnavailable, werr, rerr)
	case rerr != nil:
		return lease.Record{}, fmt.Errorf("%w: outcome unknown: %w; reading back failed: %v", lease.ErrUnavailable, werr, rerr)
	case SameWrite(got, want):
		return got, nil
	}
	return got, werr
}

// BreakNeeded reports whether rec, the record a lease.Breaker is asked to
// break, needs breaking: not when it is released already. A record that
// no Observe returned (it has no Version) is a *lease.OptionError.
func BreakNeeded(rec lease.Record) (bool, error) {
	if rec.Version == "" {
		return false, &lease.OptionError{Field: "Record", Value: fmt.Sprintf("%q/%d", rec.Holder, rec.Token), Reason: "has no Version: pass a record that Observe returned"}
	}
	return !rec.Released, nil
}
