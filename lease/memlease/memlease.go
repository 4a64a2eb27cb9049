// Package memlease is an in-memory lease backend: a driver of the CAS engine
// in package lease/driver, for the demo, for fast tests, and for tests that need the
// store to fail on demand.
//
// A Store holds named records with real compare-and-swap semantics. Like
// S3's ETag, a record's version is a digest of its bytes, so the engine's
// rule that every write changes the version is tested here too. Faults are
// set per contender identity: fail the next calls, lose the responses of
// writes that were applied, delay requests, partition a contender, or hang
// its calls until they are cancelled. Put and Delete change a record behind
// the engine's back, as a foreign tool, a lifecycle rule or a person would.
// Objects is one client's view of the store as plain objects (conditional
// puts, reads that answer "unchanged", listings by prefix), with the same
// faults: the shard.Store that package shard runs on.
//
// The scheme "mem" opens leases in a process-wide store, Default:
//
//	l, err := memlease.OpenURL(ctx, "mem://jobs", lease.Options{Identity: "worker-1"})
package memlease

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Scheme is the URL scheme memlease registers with lease.Open.
const Scheme = "mem"

// Default is the store behind "mem://" URLs.
var Default = NewStore()

func init() {
	opener := &URLOpener{Store: Default}
	lease.Register(Scheme, opener)
	driver.RegisterObjects(Scheme, opener)
	driver.RegisterStore(Description)
}

// OpenURL opens the lease urlstr names, such as "mem://name", in Default,
// for the contender opts describes: lease.Open for mem:// URLs. Importing
// memlease to call it registers the scheme with lease.Open as well.
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return driver.OpenURL(ctx, "memlease", Scheme, urlstr, opts)
}

// URLOpener opens "mem://name" URLs in Store. It refuses any query
// parameter.
type URLOpener struct {
	// Store holds the records of the leases it opens: Default for the
	// registered "mem" scheme.
	Store *Store
}

// OpenLeaseURL implements lease.URLOpener.
func (o *URLOpener) OpenLeaseURL(_ context.Context, u *url.URL, opts lease.Options) (lease.Lease, error) {
	name := u.Host + u.Path
	if _, err := driver.Query("memlease", u, nil); err != nil {
		return nil, err
	}
	return o.Store.Open(name, opts)
}

// Store is a set of named lease records shared by the contenders of one
// process. The zero value is not usable; call NewStore.
type Store struct {
	mu      sync.Mutex
	objects map[string]object
	faults  map[string]*faults
}

type object struct {
	data    []byte
	version string
	torn    bool // see Tear
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{objects: map[string]object{}, faults: map[string]*faults{}}
}

// Open returns a lease on the record called name, for the contender opts
// describes.
func (s *Store) Open(name string, opts lease.Options) (lease.Lease, error) {
	return s.open(name, opts.Identity, opts)
}

// open opens the lease name for a client whose calls the faults set for
// client reach.
func (s *Store) open(name, client string, opts lease.Options) (lease.Lease, error) {
	if name == "" {
		return nil, &lease.OptionError{Field: "name", Value: `""`, Reason: "must not be empty"}
	}
	return driver.NewCAS(&conn{store: s, name: name, identity: client}, opts)
}

// Put stores data under name as it is, bypassing the lease engine: a foreign
// or corrupt object for tests.
func (s *Store) Put(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[name] = object{data: append([]byte(nil), data...), version: digest(data)}
}

// Delete removes the record called name, bypassing the lease engine, as a
// lifecycle rule, a person or a restore from backup would, even under a
// live holder.
func (s *Store) Delete(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objects, name)
}

// Tear puts back the object called name at version, bypassing the lease
// engine, as one that cannot be read: what a restore of a DynamoDB head
// item leaves when a later write deleted its parts. List shows version;
// Get returns lease.ErrCorrupt, or version alone when it is known, and a
// lease's read finds no record of its own, until a write replaces it.
func (s *Store) Tear(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[name] = object{version: version, torn: true}
}

// Bytes returns the stored bytes of name and whether it exists.
func (s *Store) Bytes(name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[name]
	return append([]byte(nil), o.data...), ok
}

// digest is the version of data: its MD5, as S3's ETag of a single-part PUT.
func digest(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// conn is one contender's connection to the store: a driver.CAS.
type conn struct {
	store    *Store
	name     string
	identity string
}

func (d *conn) Get(ctx context.Context) (lease.Record, error) {
	var o object
	var ok bool
	err := d.store.do(ctx, d.identity, false, func() error {
		o, ok = d.store.objects[d.name]
		return nil
	})
	switch {
	case err != nil:
		return lease.Record{}, err
	case !ok:
		return lease.Record{}, fmt.Errorf("%w: mem://%s", lease.ErrNoRecord, d.name)
	}
	r, err := driver.DecodeJSON(o.data)
	if err != nil {
		return lease.Record{}, fmt.Errorf("mem://%s: %w", d.name, err)
	}
	r.Version = o.version
	return r, nil
}

func (d *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return d.put(ctx, r, func(_ object, exists bool) bool { return !exists })
}

func (d *conn) Replace(ctx context.Context, r lease.Record, version string) (string, error) {
	return d.put(ctx, r, func(o object, exists bool) bool { return exists && o.version == version })
}

// put stores r if cond holds for the current object, atomically.
func (d *conn) put(ctx context.Context, r lease.Record, cond func(object, bool) bool) (string, error) {
	data := driver.EncodeJSON(r)
	o := object{data: data, version: digest(data)}
	err := d.store.do(ctx, d.identity, true, func() error {
		cur, exists := d.store.objects[d.name]
		if !cond(cur, exists) {
			return fmt.Errorf("%w: mem://%s", driver.ErrConflict, d.name)
		}
		d.store.objects[d.name] = o
		return nil
	})
	return o.version, err
}

// do runs op under the store's lock, after applying identity's faults.
func (s *Store) do(ctx context.Context, identity string, write bool, op func() error) error {
	f := s.takeFault(identity, write)
	if f.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.fail {
		return fmt.Errorf("%w: mem: injected failure for %q", lease.ErrUnavailable, identity)
	}
	if f.delay > 0 {
		t := time.NewTimer(f.delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	err := op()
	s.mu.Unlock()
	if f.loseResponse {
		return fmt.Errorf("%w: mem: injected lost response for %q (write applied: %t)", lease.ErrUnavailable, identity, err == nil)
	}
	return err
}
