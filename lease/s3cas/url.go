package s3cas

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	gcaws "gocloud.dev/aws"

	"github.com/leasehold/leasehold/lease"
)

// Scheme is the URL scheme s3cas registers with lease.Open.
const Scheme = "s3"

func init() {
	lease.Register(Scheme, &URLOpener{})
}

// URLParams are the query parameters an s3:// URL may carry. All but
// use_path_style are read by gocloud.dev/aws.V2ConfigFromURLParams, with the
// meanings gocloud.dev's own s3:// URLs give them:
//
//	region                        the AWS region (else AWS_REGION or the profile's)
//	endpoint                      the S3 endpoint URL (else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL)
//	use_path_style                true: address the bucket in the path, as MinIO and LocalStack need
//	hostname_immutable            true: send requests to endpoint exactly as given (with endpoint only)
//	profile                       the shared config profile
//	role                          an IAM role ARN to assume through STS
//	anonymous                     true: send unsigned requests
//	dualstack, fips               true: use dual-stack or FIPS endpoints
//	request_checksum_calculation  when_supported (default) or when_required
//	response_checksum_validation  when_supported (default) or when_required
//
// Any other parameter is rejected, among them rate_limiter_capacity (it
// configures the SDK's retries, which s3cas turns off) and awssdk (s3cas
// always uses SDK v2).
var URLParams = []string{
	"anonymous", "dualstack", "endpoint", "fips", "hostname_immutable", "profile", "region",
	"request_checksum_calculation", "response_checksum_validation", "role", "use_path_style",
}

// URLOpener opens "s3://bucket/key?param=value" URLs; see URLParams for the
// parameters. The key is the URL's path without its leading slash.
type URLOpener struct {
	// Client, if set, is used for every URL, which may then carry only
	// use_path_style: the client's own configuration replaces the others.
	// If nil, each URL gets a client of its own, built from the default AWS
	// configuration chain and the URL's parameters.
	Client *s3.Client
}

// OpenLeaseURL implements lease.URLOpener.
func (o *URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, lopts lease.Options) (lease.Lease, error) {
	invalid := func(reason string) error {
		return &lease.OptionError{Pkg: "s3cas", Field: "URL", Value: strconv.Quote(u.Redacted()), Reason: reason}
	}
	opts := Options{Bucket: u.Host, Key: strings.TrimPrefix(u.Path, "/"), Client: o.Client}
	switch {
	case u.User != nil:
		return nil, invalid("carries credentials; s3cas takes them from the default AWS configuration chain")
	case u.Port() != "":
		return nil, invalid("has a port; want s3://BUCKET/KEY, with the endpoint in ?endpoint=")
	case opts.Bucket == "":
		return nil, invalid("names no bucket; want s3://BUCKET/KEY")
	case opts.Key == "":
		return nil, invalid("names no key; want s3://BUCKET/KEY")
	}
	q := u.Query()
	var unknown, repeated []string
	for name, values := range q {
		if !slices.Contains(URLParams, name) {
			unknown = append(unknown, name)
		} else if len(values) > 1 {
			repeated = append(repeated, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, invalid(fmt.Sprintf("has unknown query parameter(s) %s (known: %s)", strings.Join(unknown, ", "), strings.Join(URLParams, ", ")))
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		return nil, invalid(fmt.Sprintf("repeats query parameter(s) %s", strings.Join(repeated, ", ")))
	}
	if v := q.Get("use_path_style"); q.Has("use_path_style") {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, invalid(fmt.Sprintf("has use_path_style=%q; want true or false", v))
		}
		opts.UsePathStyle = b
		q.Del("use_path_style")
	}
	if opts.Client == nil {
		cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
		if err != nil {
			return nil, invalid("has an unusable AWS configuration: " + err.Error())
		}
		opts.Client = s3.NewFromConfig(cfg)
	} else if len(q) > 0 {
		names := slices.Sorted(maps.Keys(q))
		return nil, invalid(fmt.Sprintf("has query parameter(s) %s, but the URLOpener has a Client, whose configuration replaces them", strings.Join(names, ", ")))
	}
	return Open(ctx, opts, lopts)
}
