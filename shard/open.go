package shard

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// URLOpener opens a group's Store from a URL, as lease.URLOpener opens a
// lease. Backends register one per scheme in their init function, beside
// their lease.URLOpener; import a backend for its side effect to make its
// scheme available to OpenStore:
//
//	import _ "github.com/leasehold/leasehold/lease/s3lease"
type URLOpener interface {
	// OpenStoreURL opens the store u names, and returns it with the
	// group's prefix (Config.Group) that u names: for
	// "s3://bucket/jobs", the bucket's store and "jobs". It sends no
	// request. It must reject query parameters it does not know with an
	// error wrapping lease.ErrInvalid.
	OpenStoreURL(ctx context.Context, u *url.URL) (store Store, group string, err error)
}

var registry = struct {
	sync.RWMutex
	openers map[string]URLOpener
}{openers: map[string]URLOpener{}}

// Register makes opener available to OpenStore for URLs with the given
// scheme. It panics if the scheme is registered twice, as that is a
// programming error caught at start-up.
func Register(scheme string, opener URLOpener) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.openers[scheme]; dup {
		panic("shard: scheme " + scheme + " registered twice")
	}
	registry.openers[scheme] = opener
}

// Schemes returns the schemes registered with Register, sorted.
func Schemes() []string {
	registry.RLock()
	defer registry.RUnlock()
	return slices.Sorted(func(yield func(string) bool) {
		for s := range registry.openers {
			if !yield(s) {
				return
			}
		}
	})
}

// OpenStore opens the Store of the group named by urlstr, a lease URL
// whose key is the group's prefix, such as "s3://bucket/jobs" (the group
// "jobs" in the bucket) or "mem://jobs", and returns it with the group's
// prefix, for Config.Store and Config.Group. The scheme's backend must have
// been imported. Errors wrap lease.ErrInvalid for a malformed URL or an
// unknown scheme (the message lists the registered ones).
func OpenStore(ctx context.Context, urlstr string) (store Store, group string, err error) {
	u, err := url.Parse(urlstr)
	if err != nil {
		// url.Error repeats the URL, password and all: keep only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(urlstr)), Reason: "is malformed: " + err.Error()}
	}
	registry.RLock()
	opener, ok := registry.openers[u.Scheme]
	registry.RUnlock()
	if !ok {
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())),
			Reason: fmt.Sprintf("has unknown scheme %q (registered for shard groups: %s)", u.Scheme, strings.Join(Schemes(), ", "))}
	}
	return opener.OpenStoreURL(ctx, u)
}
