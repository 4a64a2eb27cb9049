package sim_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// store is the simulation's one lease record: a driver.CAS whose version
// is the MD5 of the stored bytes (as an S3 ETag), with faults per
// contender identity and a history of every body stored, for restores.
type store struct {
	mu     sync.Mutex
	data   []byte // nil: no record
	bodies [][]byte
	faults map[string]*faults
	// slow counts the slow calls still under way, which outlive their
	// callers.
	slow sync.WaitGroup
	// hits are the calls that met a fault, for the oracle: a contender cut
	// off from the store cannot see what the record says.
	hits []hit
}

type hit struct {
	id string
	at time.Time
}

// hitIn reports whether a call of id met a fault within [from, to].
func (s *store) hitIn(id string, from, to time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hits {
		if h.id == id && !h.at.Before(from) && !h.at.After(to) {
			return true
		}
	}
	return false
}

// faults are what the next calls of one identity meet.
type faults struct {
	failReads, failWrites int           // fail before reaching the store
	lose                  int           // writes applied, answers lost
	slow                  int           // calls held for slowFor, past CallTimeout
	slowFor               time.Duration //
	hungUntil             time.Time     // every call hangs until then
}

func newStore() *store { return &store{faults: map[string]*faults{}} }

func version(b []byte) string {
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

func (s *store) fault(id string, change func(*faults)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.faults[id]
	if f == nil {
		f = &faults{}
		s.faults[id] = f
	}
	change(f)
}

// put stores b as it is, bypassing the engine: a restore, a foreign
// object; nil deletes the record, and with it the history that restores
// draw from (tokens may start again after a delete: an earlier body with
// the same holder and token belongs to another term).
func (s *store) put(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = b
	if b == nil {
		s.bodies = nil
	}
}

// current returns the stored bytes and the record they decode to.
func (s *store) current() ([]byte, lease.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return nil, lease.Record{}, lease.ErrNoRecord
	}
	r, err := driver.DecodeJSON(s.data)
	return s.data, r, err
}

// termBodies returns the bodies stored earlier for the term of r (same
// holder and token), other than r's own.
func (s *store) termBodies(r lease.Record, cur []byte) [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][]byte
	for _, b := range s.bodies {
		old, err := driver.DecodeJSON(b)
		if err == nil && old.Holder == r.Holder && old.Token == r.Token && version(b) != version(cur) {
			out = append(out, b)
		}
	}
	return out
}

// lastValid returns the latest body the engine stored since the record
// was last deleted, or nil.
func (s *store) lastValid() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) == 0 {
		return nil
	}
	return s.bodies[len(s.bodies)-1]
}

// conn is one contender identity's connection.
type conn struct {
	s  *store
	id string
}

// call applies id's faults to one call, op, which runs under the store's
// lock. A slow call is applied when its delay ends, whether or not its
// caller still waits.
func (c *conn) call(ctx context.Context, write bool, op func() error) error {
	s := c.s
	s.mu.Lock()
	f := s.faults[c.id]
	if f == nil {
		f = &faults{}
		s.faults[c.id] = f
	}
	hung, fail, lose, slow := time.Until(f.hungUntil), false, false, time.Duration(0)
	switch {
	case hung > 0:
	case !write && f.failReads > 0:
		f.failReads--
		fail = true
	case write && f.failWrites > 0:
		f.failWrites--
		fail = true
	case f.slow > 0:
		f.slow--
		slow = f.slowFor
	case write && f.lose > 0:
		f.lose--
		lose = true
	}
	if hung > 0 || fail || slow > 0 {
		s.hits = append(s.hits, hit{c.id, time.Now()})
	}
	s.mu.Unlock()
	switch {
	case hung > 0:
		t := time.NewTimer(hung)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("%w: sim: the store did not answer %s", lease.ErrUnavailable, c.id)
		}
	case fail:
		return fmt.Errorf("%w: sim: injected failure for %s", lease.ErrUnavailable, c.id)
	case slow > 0:
		done := make(chan error, 1)
		s.slow.Go(func() {
			time.Sleep(slow)
			s.mu.Lock()
			defer s.mu.Unlock()
			done <- op()
		})
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-done:
			return err
		}
	}
	s.mu.Lock()
	err := op()
	s.mu.Unlock()
	if lose {
		return fmt.Errorf("%w: sim: answer lost for %s (applied: %t)", lease.ErrUnavailable, c.id, err == nil)
	}
	return err
}

func (c *conn) Get(ctx context.Context) (lease.Record, error) {
	var b []byte
	err := c.call(ctx, false, func() error { b = c.s.data; return nil })
	switch {
	case err != nil:
		return lease.Record{}, err
	case b == nil:
		return lease.Record{}, fmt.Errorf("%w: sim", lease.ErrNoRecord)
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		return lease.Record{}, err
	}
	r.Version = version(b)
	return r, nil
}

func (c *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return c.write(ctx, r, func() bool { return c.s.data == nil })
}

func (c *conn) Replace(ctx context.Context, r lease.Record, v string) (string, error) {
	return c.write(ctx, r, func() bool { return c.s.data != nil && version(c.s.data) == v })
}

func (c *conn) write(ctx context.Context, r lease.Record, cond func() bool) (string, error) {
	b := driver.EncodeJSON(r)
	err := c.call(ctx, true, func() error {
		if !cond() {
			return fmt.Errorf("%w: sim", driver.ErrConflict)
		}
		c.s.data = b
		c.s.bodies = append(c.s.bodies, b)
		return nil
	})
	return version(b), err
}

// noKeep hides a lease's Keep (and Break): a store shaped as Azure's,
// whose record cannot stay held without its holder.
type noKeep struct{ lease.Lease }
