package awsdriver

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	gcaws "gocloud.dev/aws"

	"github.com/leasehold/leasehold/lease"
)

// ConfigParams are the query parameters of gocloud.dev's AWS URLs that
// every AWS backend accepts: gocloud.dev/aws.V2ConfigFromURLParams reads
// them into the client's configuration.
//
//	region              the AWS region (else AWS_REGION or the profile's)
//	endpoint            the service's endpoint URL (else AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL)
//	hostname_immutable  true: send requests to endpoint exactly as given (with endpoint only)
//	profile             the shared config profile
//	role                an IAM role ARN to assume through STS
//	anonymous           true: send unsigned requests
//	dualstack, fips     true: use dual-stack or FIPS endpoints
//
// gocloud.dev's rate_limiter_capacity (it configures the SDK's retries,
// which the backends turn off) and awssdk (the backends always use SDK v2)
// are not among them.
var ConfigParams = []string{"anonymous", "dualstack", "endpoint", "fips", "hostname_immutable", "profile", "region", "role"}

// Params returns ConfigParams and a backend's own parameters, sorted: the
// query parameters its URLs accept.
func Params(own ...string) []string {
	return slices.Sorted(slices.Values(append(slices.Clone(ConfigParams), own...)))
}

// URLForm describes an AWS backend's lease URLs, SCHEME://HOST/PATH?query,
// for checking them and for the messages that say what is wrong.
type URLForm struct {
	// Pkg is the backend's package, the prefix of its errors: "s3cas".
	Pkg string
	// Form is the URL's shape: "s3://BUCKET/KEY".
	Form string
	// Host and Path say what the URL's host and path name: "bucket", "key".
	Host, Path string
	// Params are the query parameters the URLs accept (see Params).
	Params []string
}

// Invalid returns the *lease.OptionError for the URL u, which is invalid
// for reason. The error shows u without its password.
func (f *URLForm) Invalid(u *url.URL, reason string) error {
	return &lease.OptionError{Pkg: f.Pkg, Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())), Reason: reason}
}

// Parse checks u's shape and returns its host, its path without the leading
// slash, and its query. u must carry no credentials and no port, name a
// host and a path, and carry only known query parameters, each once.
func (f *URLForm) Parse(u *url.URL) (host, path string, q url.Values, err error) {
	host, path = u.Host, strings.TrimPrefix(u.Path, "/")
	switch {
	case u.User != nil:
		return "", "", nil, f.Invalid(u, "carries credentials; "+f.Pkg+" takes them from the default AWS configuration chain")
	case u.Port() != "":
		return "", "", nil, f.Invalid(u, "has a port; want "+f.Form+", with the endpoint in ?endpoint=")
	case host == "":
		return "", "", nil, f.Invalid(u, "names no "+f.Host+"; want "+f.Form)
	case path == "":
		return "", "", nil, f.Invalid(u, "names no "+f.Path+"; want "+f.Form)
	}
	q = u.Query()
	var unknown, repeated []string
	for name, values := range q {
		if !slices.Contains(f.Params, name) {
			unknown = append(unknown, name)
		} else if len(values) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return "", "", nil, f.Invalid(u, fmt.Sprintf("has unknown query parameter(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(f.Params, ", ")))
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		return "", "", nil, f.Invalid(u, fmt.Sprintf("repeats query parameter(s) %s", strings.Join(repeated, ", ")))
	}
	return host, path, q, nil
}

// URLClient returns the client a URL opener uses for u: client, the
// opener's own, if set, in which case q must hold no parameter left, as
// the client's configuration replaces them; else one that newClient
// (s3.NewFromConfig, dynamodb.NewFromConfig) builds from the configuration
// that q's parameters give, through gocloud.dev/aws.V2ConfigFromURLParams.
// q must hold only ConfigParams by now: the backend has taken its own out.
func URLClient[C, O any](ctx context.Context, f *URLForm, u *url.URL, q url.Values, client *C, newClient func(aws.Config, ...func(*O)) *C) (*C, error) {
	if client != nil {
		if len(q) > 0 {
			names := slices.Sorted(maps.Keys(q))
			return nil, f.Invalid(u, fmt.Sprintf("has query parameter(s) %s, but the URLOpener has a Client, whose configuration replaces them", strings.Join(names, ", ")))
		}
		return client, nil
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, f.Invalid(u, "has an unusable AWS configuration: "+err.Error())
	}
	return newClient(cfg), nil
}
