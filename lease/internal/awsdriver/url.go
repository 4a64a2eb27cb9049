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
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
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
// The client does not log (see Quiet).
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
	if cfg, err = quieten(ctx, cfg, q); err != nil {
		return nil, f.Invalid(u, "has an unusable AWS configuration: "+err.Error())
	}
	return newClient(cfg), nil
}

// quieten makes cfg, which V2ConfigFromURLParams loaded with the SDK's
// default logger, log nothing (see Quiet). gocloud.dev takes no load
// options, and the credential providers of the default chain copy the
// logger when they are built, so when the URL leaves credentials to the
// default chain (neither anonymous nor role), the chain is resolved again,
// for the same profile, with Quiet. Assuming a role (role=) still resolves
// its base credentials through gocloud.dev's own chain, which may log.
func quieten(ctx context.Context, cfg aws.Config, q url.Values) (aws.Config, error) {
	cfg.Logger, cfg.ClientLogMode = logging.Nop{}, 0
	if anonymous, _ := strconv.ParseBool(q.Get("anonymous")); anonymous || q.Has("role") {
		return cfg, nil
	}
	opts := []func(*config.LoadOptions) error{Quiet, config.WithRegion(cfg.Region)}
	if q.Has("profile") {
		opts = append(opts, config.WithSharedConfigProfile(q.Get("profile")))
	}
	quiet, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, err
	}
	cfg.Credentials = quiet.Credentials
	return cfg, nil
}
