package memlease

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Objects is one client's view of a Store as a plain object store: the
// operations package shard needs beside leases (driver.Objects). Every
// call is counted and faulted under the client's identity, as its leases'
// calls are, so one identity's faults cut off all of a worker's traffic.
// Objects share the Store's names with lease records; versions are the
// MD5 of the bytes, as S3's ETags are.
type Objects struct {
	store    *Store
	identity string
}

var _ driver.Objects = (*Objects)(nil)

// Objects returns the object-store view of s for the client identity.
func (s *Store) Objects(identity string) *Objects {
	return &Objects{store: s, identity: identity}
}

// OpenObjectsURL implements driver.ObjectsOpener for "mem://GROUP" URLs:
// the group GROUP in the opener's Store (Default for the registered
// opener), for the client opts.Identity.
func (o *URLOpener) OpenObjectsURL(_ context.Context, u *url.URL, opts lease.Options) (driver.Objects, string, error) {
	group := u.Host + u.Path
	if _, err := driver.Query("memlease", u, nil); err != nil {
		return nil, "", err
	}
	if group == "" {
		return nil, "", &lease.OptionError{Pkg: "memlease", Field: "URL", Value: strconv.Quote(u.String()), Reason: "names no group: want mem://NAME"}
	}
	return o.Store.Objects(opts.Identity), group, nil
}

// Lease opens the lease record called key for the contender opts
// describes, whose calls meet the faults set for this client (the identity
// given to Store.Objects), which tests may name apart from opts.Identity:
// a second process of one worker.
func (o *Objects) Lease(key string, opts lease.Options) (lease.Lease, error) {
	return o.store.open(key, o.identity, opts)
}

// Get returns the bytes stored at key and their version. When the stored
// version is known (a version the caller already has), it returns no bytes,
// only the version, as a GET with If-None-Match answers 304. It returns an
// error wrapping lease.ErrNoRecord when key holds nothing, and one wrapping
// lease.ErrCorrupt when it holds an object torn by Store.Tear.
func (o *Objects) Get(ctx context.Context, key, known string) (data []byte, version string, err error) {
	err = o.store.do(ctx, o.identity, false, func() error {
		obj, ok := o.store.objects[key]
		switch {
		case !ok:
			return fmt.Errorf("%w: mem://%s", lease.ErrNoRecord, key)
		case obj.torn && obj.version != known:
			return fmt.Errorf("%w (mem://%s)", driver.Corruptf("the object at version %q cannot be read whole (Store.Tear)", obj.version), key)
		case obj.version != known:
			data = append([]byte(nil), obj.data...)
		}
		version = obj.version
		return nil
	})
	return data, version, err
}

// Put stores data at key if the key holds nothing (version "") or holds
// version, atomically, and returns the new version. A failed condition
// returns an error wrapping driver.ErrConflict.
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	obj := object{data: append([]byte(nil), data...), version: digest(data)}
	err := o.store.do(ctx, o.identity, true, func() error {
		cur, exists := o.store.objects[key]
		if exists != (version != "") || exists && cur.version != version {
			return fmt.Errorf("%w: mem://%s", driver.ErrConflict, key)
		}
		o.store.objects[key] = obj
		return nil
	})
	return obj.version, err
}

// List returns the version of every object whose key starts with prefix,
// by key: the whole list, in one consistent view, or an error.
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := o.store.do(ctx, o.identity, false, func() error {
		for k, obj := range o.store.objects {
			if strings.HasPrefix(k, prefix) {
				out[k] = obj.version
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
