// Package leaseurl checks the shape of leasehold's cloud lease URLs,
// SCHEME://HOST/PATH?query, for the backends whose URLs name a container
// (bucket, table) and an object in it (lease/s3lease, lease/dynamolease,
// lease/gcslease), so that each backend's messages say the same things the
// same way.
package leaseurl

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Form describes a backend's lease URLs, for checking them and for the
// messages that say what is wrong.
type Form struct {
	// Pkg is the backend's package, the prefix of its errors: "s3lease".
	Pkg string
	// Form is the URL's shape: "s3://BUCKET/KEY".
	Form string
	// Host and Path say what the URL's host and path name: "bucket", "key".
	Host, Path string
	// Params are the query parameters the URLs accept; none if empty.
	Params []string
	// Credentials says where the backend takes its credentials from, for a
	// URL that carries some: "the default AWS configuration chain".
	Credentials string
	// Endpoint says where an endpoint is named instead, for a URL with a
	// port: "?endpoint=", "STORAGE_EMULATOR_HOST".
	Endpoint string
}

// Invalid returns the *lease.OptionError for the URL u, which is invalid
// for reason. The error shows u without its password.
func (f *Form) Invalid(u *url.URL, reason string) error {
	return &lease.OptionError{Pkg: f.Pkg, Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())), Reason: reason}
}

// Parse checks u's shape and returns its host, its path without the leading
// slash, and its query. u must carry no credentials and no port, name a
// host and a path, and carry only known query parameters, each once, that
// parse (driver.Query).
func (f *Form) Parse(u *url.URL) (host, path string, q url.Values, err error) {
	host, path = u.Host, strings.TrimPrefix(u.Path, "/")
	switch {
	case u.User != nil:
		return "", "", nil, f.Invalid(u, "carries credentials; "+f.Pkg+" takes them from "+f.Credentials)
	case u.Port() != "":
		return "", "", nil, f.Invalid(u, "has a port; want "+f.Form+", with the endpoint in "+f.Endpoint)
	case host == "":
		return "", "", nil, f.Invalid(u, "names no "+f.Host+"; want "+f.Form)
	case path == "":
		return "", "", nil, f.Invalid(u, "names no "+f.Path+"; want "+f.Form)
	}
	if q, err = driver.Query(f.Pkg, u, f.Params); err != nil {
		return "", "", nil, err
	}
	return host, path, q, nil
}
