package s3lease

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
	"github.com/leasehold/leasehold/lease/internal/leaseurl"
)

// Scheme is the URL scheme s3lease registers with lease.Open.
const Scheme = "s3"

func init() {
	lease.Register(Scheme, &URLOpener{})
	driver.RegisterObjects(Scheme, &URLOpener{})
	driver.RegisterStore(Description)
}

// OpenURL opens the lease urlstr names, such as
// "s3://bucket/key?region=eu-west-1", for the contender opts describes:
// lease.Open for s3:// URLs (see URLParams). Importing s3lease to call it
// registers the scheme with lease.Open as well.
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return driver.OpenURL(ctx, "s3lease", Scheme, urlstr, opts)
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
// configures the SDK's retries, which s3lease turns off) and awssdk (s3lease
// always uses SDK v2).
var URLParams = awsdriver.Params("request_checksum_calculation", "response_checksum_validation", "use_path_style")

// urlForm checks s3:// URLs.
var urlForm = &leaseurl.Form{Pkg: "s3lease", Form: "s3://BUCKET/KEY", Host: "bucket", Path: "key", Params: URLParams, Credentials: awsdriver.Credentials, Endpoint: "?endpoint="}

// URLOpener opens "s3://bucket/key?param=value" URLs; see URLParams for the
// parameters. The key is the URL's path without its leading slash. For
// shard.OpenStore (driver.OpenObjects), the URL names a shard group, "s3://bucket/group", whose
// keys start with the path.
type URLOpener struct {
	// Client, if set, is used for every URL, which may then carry only
	// use_path_style: the client's own configuration replaces the others.
	// If nil, each URL gets a client of its own, built from the default AWS
	// configuration chain and the URL's parameters.
	Client *s3.Client
}

// OpenLeaseURL implements lease.URLOpener.
func (o *URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, lopts lease.Options) (lease.Lease, error) {
	opts, err := o.parse(ctx, u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, opts, lopts)
}

// OpenObjectsURL implements driver.ObjectsOpener: the bucket as
// driver.Objects
// (OpenObjects), and the URL's path as the group.
func (o *URLOpener) OpenObjectsURL(ctx context.Context, u *url.URL, _ lease.Options) (driver.Objects, string, error) {
	opts, err := o.parse(ctx, u)
	if err != nil {
		return nil, "", err
	}
	store, err := OpenObjects(ctx, ObjectsOptions{Bucket: opts.Bucket, Client: opts.Client, UsePathStyle: opts.UsePathStyle})
	if err != nil {
		return nil, "", err
	}
	return store, opts.Key, nil
}

// parse returns the options u names, with a client for them.
func (o *URLOpener) parse(ctx context.Context, u *url.URL) (Options, error) {
	bucket, key, q, err := urlForm.Parse(u)
	if err != nil {
		return Options{}, err
	}
	opts := Options{Bucket: bucket, Key: key, Client: o.Client}
	if v := q.Get("use_path_style"); q.Has("use_path_style") {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return Options{}, urlForm.Invalid(u, fmt.Sprintf("has use_path_style=%q; want true or false", v))
		}
		opts.UsePathStyle = b
		q.Del("use_path_style")
	}
	if opts.Client, err = awsdriver.URLClient(ctx, urlForm, u, q, o.Client, s3.NewFromConfig); err != nil {
		return Options{}, err
	}
	return opts, nil
}
