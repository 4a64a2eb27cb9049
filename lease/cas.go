package lease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// CASDriver is a compare-and-swap store holding one lease record at one key.
// Memory, S3 and DynamoDB implement it; NewCAS turns one into a Lease. A
// driver only moves records: it judges nothing. All timing, fencing and
// resolution of unknown outcomes lives once, in the engine.
//
// Every method must return promptly once ctx ends. Errors must wrap one of
// this package's sentinels: a driver maps its SDK's errors to them once.
// Records passed to Create and Replace have passed Record.Check.
type CASDriver interface {
	// Get returns the stored record with its Version set. It returns an
	// error wrapping ErrNoRecord when the key holds nothing, ErrCorrupt
	// when it holds something that is not a record, and ErrNotFound when
	// the bucket or table itself is missing.
	Get(ctx context.Context) (Record, error)
	// Create stores r only if the key holds nothing, and returns the new
	// version. It returns ErrConflict if the key holds anything.
	Create(ctx context.Context, r Record) (version string, err error)
	// Replace stores r only if the key's current version is version, and
	// returns the new version, which must differ from every version the key
	// has had, as long as r's Nonce is fresh. It returns ErrConflict if the
	// version differs or the key holds nothing.
	Replace(ctx context.Context, r Record, version string) (newVersion string, err error)
}

// NewCAS returns a Lease over a CAS driver. It is the single implementation
// of the safety rules for compare-and-swap stores:
//
//   - Expiry is judged on this contender's monotonic clock: it takes over a
//     held record only after one of its reads returned the same version,
//     unchanged, a full TTL (the holder's, as recorded) earlier, and only by
//     a conditional write on that version.
//   - Every write carries a fresh nonce, so every write changes the version.
//   - Every acquisition writes the previous token plus one, and records are
//     never deleted: release marks the record released and keeps its token.
//   - A write whose outcome is unknown (a timeout, a lost response, even a
//     failed condition, which a retried write can report although it
//     succeeded) is resolved by reading the record back and comparing
//     holder, token and nonce.
func NewCAS(d CASDriver, opts Options) (Lease, error) {
	if d == nil {
		return nil, &OptionError{Field: "driver", Value: nil, Reason: "must not be nil"}
	}
	opts, err := opts.Validate()
	if err != nil {
		return nil, err
	}
	return &casLease{d: d, opts: opts}, nil
}

type casLease struct {
	d    CASDriver
	opts Options

	mu sync.Mutex
	// seen is the version this contender's reads last returned, and when
	// the first read that returned it did.
	seen struct {
		version string
		at      time.Time
	}
	// lastWrite is the record this contender last tried to write. If a
	// read finds it current, this contender wrote it and nobody has written
	// since, so it may replace it without waiting a TTL.
	lastWrite Record
}

func (c *casLease) Options() Options { return c.opts }

func (c *casLease) Observe(ctx context.Context) (Record, error) {
	return c.read(ctx)
}

func (c *casLease) Acquire(ctx context.Context) (Term, error) {
	cur, err := c.read(ctx)
	if err != nil && !errors.Is(err, ErrNoRecord) {
		return Term{}, err
	}
	if cur.Held() && !c.wroteLast(cur) {
		if wait := c.wait(cur); wait > 0 {
			return Term{}, &HeldError{Record: cur, Wait: wait}
		}
	}
	if cur.Token == math.MaxUint64 {
		return Term{}, Corruptf("token %d cannot grow", cur.Token)
	}
	t, got, err := c.write(ctx, cur.Version, c.record(cur.Token+1, false))
	switch {
	case err == nil:
		return t, nil
	case got.Held() && got.Version != cur.Version: // another contender won
		return Term{}, &HeldError{Record: got, Wait: c.wait(got)}
	case got.Version != "": // unchanged, or changed and left free: try again
		return Term{}, transient(err)
	}
	return Term{}, err
}

func (c *casLease) Renew(ctx context.Context, t Term) (Term, error) {
	if err := c.issued(t); err != nil {
		return Term{}, err
	}
	return c.rewrite(ctx, t, false)
}

func (c *casLease) Release(ctx context.Context, t Term) error {
	if err := c.issued(t); err != nil {
		return err
	}
	_, err := c.rewrite(ctx, t, true)
	return err
}

// rewrite writes a new record for term t's tenure (a renewal, or a release
// when released is set). If the write fails and a re-read shows the tenure
// continuing at another version (an earlier write of this contender landed
// unseen), it writes once more on that version.
func (c *casLease) rewrite(ctx context.Context, t Term, released bool) (Term, error) {
	version := t.Version
	for retried := false; ; retried = true {
		nt, got, err := c.write(ctx, version, c.record(t.Token, released))
		switch {
		case err == nil:
			return nt, nil
		case got.Version == "": // not re-read: the outcome is unknown
			return Term{}, err
		case released && got.Released && got.Holder == t.Holder && got.Token == t.Token:
			return Term{}, nil
		case got.Holder != t.Holder || got.Token != t.Token || got.Released:
			return Term{}, lostTo(got)
		case got.Version == version || retried:
			return Term{}, transient(err)
		}
		version = got.Version
	}
}

// write stores want: created when version is empty, else replacing version.
// On failure it reads the record back; got is that record when the read
// succeeded, and if it is want the write succeeded after all.
func (c *casLease) write(ctx context.Context, version string, want Record) (t Term, got Record, err error) {
	c.mu.Lock()
	prev := c.lastWrite
	c.lastWrite = want
	c.mu.Unlock()
	sent := time.Now()
	err = c.call(ctx, func(ctx context.Context) (err error) {
		if version == "" {
			want.Version, err = c.d.Create(ctx, want)
		} else {
			want.Version, err = c.d.Replace(ctx, want, version)
		}
		return err
	})
	if err == nil {
		return termOf(want, sent), want, nil
	}
	if ctx.Err() != nil {
		return Term{}, Record{}, ctx.Err()
	}
	got, rerr := c.read(ctx)
	switch {
	case rerr != nil:
		return Term{}, Record{}, fmt.Errorf("%w: outcome unknown: %w; reading back failed: %v", ErrUnavailable, err, rerr)
	case sameWrite(got, want):
		return termOf(got, sent), got, nil
	case sameWrite(got, prev): // this write did not land; the record is still our last one
		c.mu.Lock()
		c.lastWrite = prev
		c.mu.Unlock()
	}
	return Term{}, got, err
}

// read gets and checks the record, and notes its version for expiry.
func (c *casLease) read(ctx context.Context) (Record, error) {
	var r Record
	err := c.call(ctx, func(ctx context.Context) (err error) {
		r, err = c.d.Get(ctx)
		return err
	})
	if err == nil {
		err = r.Check()
	}
	if err != nil {
		return Record{}, err
	}
	c.mu.Lock()
	if r.Version != c.seen.version {
		c.seen.version, c.seen.at = r.Version, time.Now()
	}
	c.mu.Unlock()
	return r, nil
}

// wait returns how much longer r must stay unchanged before this contender
// may take it over. r must be the record read last.
func (c *casLease) wait(r Record) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Version != c.seen.version {
		return r.TTL
	}
	return max(r.TTL-time.Since(c.seen.at), 0)
}

func (c *casLease) wroteLast(r Record) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sameWrite(r, c.lastWrite)
}

// sameWrite reports whether r is the record written as w.
func sameWrite(r, w Record) bool {
	return w.Nonce != "" && r.Nonce == w.Nonce && r.Holder == w.Holder && r.Token == w.Token
}

// call runs one driver call under CallTimeout.
func (c *casLease) call(ctx context.Context, f func(context.Context) error) error {
	return Call(ctx, c.opts.CallTimeout, f)
}

func (c *casLease) record(token uint64, released bool) Record {
	return Record{Holder: c.opts.Identity, Token: token, TTL: c.opts.TTL, Released: released, Nonce: newNonce()}
}

// issued checks that t could have come from this lease.
func (c *casLease) issued(t Term) error {
	if t.Holder != c.opts.Identity || t.Token == 0 || t.Version == "" {
		return &OptionError{Field: "Term", Value: fmt.Sprintf("%s/%d", quote(t.Holder), t.Token), Reason: "was not issued to " + quote(c.opts.Identity)}
	}
	return nil
}

func termOf(r Record, sent time.Time) Term {
	return Term{Holder: r.Holder, Token: r.Token, TTL: r.TTL, Sent: sent, Version: r.Version}
}

// transient marks err, a failure whose cause may pass, as ErrUnavailable.
func transient(err error) error {
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// lostTo returns ErrLost describing the record that ended the term.
func lostTo(r Record) error {
	if r.Released {
		return fmt.Errorf("%w: released by %q (token %d)", ErrLost, r.Holder, r.Token)
	}
	return fmt.Errorf("%w: now held by %q (token %d)", ErrLost, r.Holder, r.Token)
}
