package driver

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

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

// Query returns the query parameters of u, a URL given to a backend's
// opener (lease.URLOpener, ObjectsOpener), once it has found that every
// pair of its query parses, that each parameter is one of params (none
// when params is empty), and that none is given twice. Otherwise it
// returns a *lease.OptionError of package pkg (the backend's, the prefix of
// its errors) for the field URL, naming the parameter. Every opener reads
// its query through it: url.URL.Query drops the pairs it cannot parse, so
// that "s3://b/k?endpoint=http://host/%zz" would open the lease on AWS's
// own endpoint instead of the one named, and "mem://x?x=%zz" would open
// although mem URLs take no parameters.
func Query(pkg string, u *url.URL, params []string) (url.Values, error) {
	bad := func(reason string) error {
		return &lease.OptionError{Pkg: pkg, Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())), Reason: reason}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, bad(unparsable(u.RawQuery, err))
	}
	var unknown, repeated []string
	for name, values := range q {
		if !slices.Contains(params, name) {
			unknown = append(unknown, name)
		} else if len(values) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		known := "none"
		if len(params) > 0 {
			known = strings.Join(params, ", ")
		}
		return nil, bad(fmt.Sprintf("has unknown query parameter(s) %s (known: %s)", strings.Join(unknown, ", "), known))
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		return nil, bad(fmt.Sprintf("repeats query parameter(s) %s", strings.Join(repeated, ", ")))
	}
	return q, nil
}

// unparsable says which pair of the query raw url.ParseQuery refused with
// err, naming its parameter.
func unparsable(raw string, err error) string {
	for pair := range strings.SplitSeq(raw, "&") {
		if _, perr := url.ParseQuery(pair); perr != nil {
			name, _, _ := strings.Cut(pair, "=")
			if n, uerr := url.QueryUnescape(name); uerr == nil {
				name = n
			}
			return fmt.Sprintf("has query parameter %q, which cannot be parsed (%v)", name, perr)
		}
	}
	return "has a query that cannot be parsed (" + err.Error() + ")"
}
