package awsdriver

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	gcaws "gocloud.dev/aws"

	"github.com/leasehold/leasehold/lease/internal/leaseurl"
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

// Credentials says where the AWS backends take their credentials from, for
// the message refusing a URL that carries some.
const Credentials = "the default AWS configuration chain"

// Params returns ConfigParams and a backend's own parameters, sorted: the
// query parameters its URLs accept.
func Params(own ...string) []string {
	return slices.Sorted(slices.Values(append(slices.Clone(ConfigParams), own...)))
}

// URLClient returns the client a URL opener uses for u: client, the
// opener's own, if set, in which case q must hold no parameter left, as
// the client's configuration replaces them; else one that newClient
// (s3.NewFromConfig, dynamodb.NewFromConfig) builds from the configuration
// that q's parameters give, through gocloud.dev/aws.V2ConfigFromURLParams.
// q must hold only ConfigParams by now: the backend has taken its own out.
func URLClient[C, O any](ctx context.Context, f *leaseurl.Form, u *url.URL, q url.Values, client *C, newClient func(aws.Config, ...func(*O)) *C) (*C, error) {
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
