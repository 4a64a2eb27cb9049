package driver

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/leasehold/leasehold/lease"
)

// OpenURL is each backend's OpenURL: lease.Open for URLs of the one scheme
// the backend registered, so that a program imports the backend it uses by
// name, and opens its lease through it, rather than importing it for its
// side effect. pkg is the backend's package, the prefix of its errors. A
// URL of another scheme is refused with a *lease.OptionError that names it;
// every other error is lease.Open's.
func OpenURL(ctx context.Context, pkg, scheme, urlstr string, opts lease.Options) (lease.Lease, error) {
	if u, err := url.Parse(urlstr); err == nil && u.Scheme != scheme {
		return nil, &lease.OptionError{Pkg: pkg, Field: "URL", Value: strconv.Quote(lease.RedactURL(urlstr)),
			Reason: fmt.Sprintf("has scheme %q; %s.OpenURL opens %s:// URLs (lease.Open opens those of every backend imported)", u.Scheme, pkg, scheme)}
	}
	return lease.Open(ctx, urlstr, opts)
}
