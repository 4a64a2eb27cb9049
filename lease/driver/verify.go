package driver

import (
	"context"
	"errors"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// Verifier is implemented by a CAS driver whose store can be checked for
// the one promise the engine cannot do without: a conditional write whose
// condition does not hold is refused, never applied. A store that accepts
// such writes and ignores their conditions elects several leaders, with
// every request answered 200.
//
// The engine calls Verify before its first write (Create or Replace), and
// writes nothing until Verify has returned nil once. A lease that NewCAS
// returns implements Verifier too, so that a command checking a store
// before it is used can ask, through a type assertion on the lease.Lease.
//
// Verify returns nil when the store keeps the promise; an error wrapping
// lease.ErrUnsafeStore, saying what the store failed and why that matters,
// when it does not; and, when it could not tell, any other error of the
// lease package (lease.ErrUnavailable, lease.ErrPermission, ...), or ctx's
// own error, unwrapped, when ctx ended. It must never write over the
// lease's record, nor anything else the lease depends on, to find out, and
// it bounds each of its requests as Call does. A driver may keep its
// verdict for a store (nil or ErrUnsafeStore) for the life of the process.
type Verifier interface {
	Verify(ctx context.Context) error
}

// Verify implements Verifier: it has the driver check its store, if the
// driver is a Verifier, until the driver's answer is nil once.
func (c *casLease) Verify(ctx context.Context) error {
	v, ok := c.d.(Verifier)
	if !ok || c.verified.Load() {
		return nil
	}
	if err := v.Verify(ctx); err != nil {
		return err
	}
	c.verified.Store(true)
	return nil
}

// Verdicts keeps, per store, the outcome of a Verifier's check once it is
// known (nil, or an error wrapping lease.ErrUnsafeStore), for the life of
// the process, so that a store is checked once however many leases live
// in it. The zero value is ready to use; a driver keeps one in a package
// variable.
type Verdicts struct {
	mu sync.Mutex
	m  map[string]*verdict
}

// verdict is one store's check: lock is held by the one goroutine
// checking; known says that err is final.
type verdict struct {
	lock  chan struct{}
	known bool
	err   error
}

// Check returns the verdict kept for the store called id, or, when none is
// known yet, runs probe (one goroutine at a time per store) and keeps its
// answer if it is one: nil or lease.ErrUnsafeStore. Any other answer
// (throttling, refused credentials, a timeout) is returned and not kept, so
// the next call checks again.
func (vs *Verdicts) Check(ctx context.Context, id string, probe func(context.Context) error) error {
	vs.mu.Lock()
	if vs.m == nil {
		vs.m = map[string]*verdict{}
	}
	v := vs.m[id]
	if v == nil {
		v = &verdict{lock: make(chan struct{}, 1)}
		vs.m[id] = v
	}
	vs.mu.Unlock()
	select {
	case v.lock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-v.lock }()
	if v.known {
		return v.err
	}
	err := probe(ctx)
	if err == nil || errors.Is(err, lease.ErrUnsafeStore) {
		v.known, v.err = true, err
	}
	return err
}
