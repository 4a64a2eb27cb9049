package lease

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// URLOpener opens a lease from a URL. Backends register one per scheme in
// their init function, so that importing a backend, by name for its
// OpenURL or for its side effect alone, makes its scheme available to Open:
//
//	import _ "github.com/leasehold/leasehold/lease/s3lease"
type URLOpener interface {
	// OpenLeaseURL opens the lease u names. opts has been validated, its
	// defaults filled in. It must reject query parameters it does not know,
	// and a query it cannot parse (u.Query drops such pairs), with an error
	// wrapping ErrInvalid that names the parameter: the backends of this
	// module read their queries with package driver's Query, which does.
	OpenLeaseURL(ctx context.Context, u *url.URL, opts Options) (Lease, error)
}

var registry = struct {
	sync.RWMutex
	openers map[string]URLOpener
}{openers: map[string]URLOpener{}}

// Register makes opener available to Open for URLs with the given scheme. It
// panics if the scheme is registered twice, as that is a programming error
// caught at start-up.
func Register(scheme string, opener URLOpener) {
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.openers[scheme]; dup {
		panic("lease: scheme " + scheme + " registered twice")
	}
	registry.openers[scheme] = opener
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	registry.RLock()
	defer registry.RUnlock()
	schemes := make([]string, 0, len(registry.openers))
	for s := range registry.openers {
		schemes = append(schemes, s)
	}
	slices.Sort(schemes)
	return schemes
}

// Open opens the lease named by urlstr, such as "s3://bucket/key" or
// "mem://name", for the contender opts describes. The scheme's backend must
// have been imported. Errors wrap ErrInvalid for a malformed URL, an unknown
// scheme (the message lists the registered ones) or invalid options.
func Open(ctx context.Context, urlstr string, opts Options) (Lease, error) {
	u, err := url.Parse(urlstr)
	if err != nil {
		// url.Error repeats the URL, password and all: keep only its reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &OptionError{Field: "URL", Value: quote(RedactURL(urlstr)), Reason: "is malformed: " + err.Error()}
	}
	registry.RLock()
	opener, ok := registry.openers[u.Scheme]
	registry.RUnlock()
	if !ok {
		return nil, &OptionError{Field: "URL", Value: quote(RedactURL(u.String())), Reason: fmt.Sprintf("has unknown scheme %q (registered: %s)", u.Scheme, strings.Join(Schemes(), ", "))}
	}
	opts, err = opts.Validate()
	if err != nil {
		return nil, err
	}
	return opener.OpenLeaseURL(ctx, u, opts)
}
