package dynamolease

import (
	"context"
	"net/url"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
	"github.com/leasehold/leasehold/lease/internal/leaseurl"
)

// Scheme is the URL scheme this package registers with lease.Open.
const Scheme = "dynamodb"

func init() {
	lease.Register(Scheme, &URLOpener{})
	driver.RegisterStore(Description)
}

// OpenURL opens the lease urlstr names, such as
// "dynamodb://table/name?region=eu-west-1", for the contender opts
// describes: lease.Open for dynamodb:// URLs (see URLParams). Importing
// dynamolease to call it registers the scheme with lease.Open as well.
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return driver.OpenURL(ctx, "dynamolease", Scheme, urlstr, opts)
}

// URLParams are the query parameters a dynamodb:// URL may carry. All but
// key_attribute are read by gocloud.dev/aws.V2ConfigFromURLParams, with the
// meanings gocloud.dev's own AWS URLs give them:
//
//	region              the AWS region (else AWS_REGION or the profile's)
//	endpoint            the DynamoDB endpoint URL (else AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL)
//	key_attribute       the table's partition key attribute (default "lease")
//	hostname_immutable  true: send requests to endpoint exactly as given (with endpoint only)
//	profile             the shared config profile
//	role                an IAM role ARN to assume through STS
//	anonymous           true: send unsigned requests
//	dualstack, fips     true: use dual-stack or FIPS endpoints
//
// Any other parameter is rejected, among them rate_limiter_capacity (it
// configures the SDK's retries, which this package turns off), awssdk (it
// always uses SDK v2) and S3's checksum parameters.
var URLParams = awsdriver.Params("key_attribute")

// urlForm checks dynamodb:// URLs.
var urlForm = &leaseurl.Form{Pkg: "dynamolease", Form: "dynamodb://TABLE/NAME", Host: "table", Path: "lease name", Params: URLParams, Credentials: awsdriver.Credentials, Endpoint: "?endpoint="}

// URLOpener is the lease.URLOpener of the "dynamodb" scheme: the URL's
// host is the table, its path without the leading slash is the lease's
// name ("dynamodb://leases/jobs/nightly" names the lease "jobs/nightly" in
// table "leases"), and URLParams lists the query parameters.
type URLOpener struct {
	// Client is the client for every URL this opener opens. Its own
	// configuration then stands in for the URL's AWS parameters, and a URL
	// carrying any is refused; key_attribute, a property of the table, is
	// still read. When Client is nil, every URL gets a new client from the
	// default AWS configuration chain and its parameters.
	Client *ddb.Client
}

// OpenLeaseURL implements lease.URLOpener. Like Open, it describes the
// table once.
func (o *URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, lopts lease.Options) (lease.Lease, error) {
	table, name, q, err := urlForm.Parse(u)
	if err != nil {
		return nil, err
	}
	keyAttr, empty := q.Get("key_attribute"), q.Has("key_attribute") && q.Get("key_attribute") == ""
	if empty {
		return nil, urlForm.Invalid(u, `has an empty key_attribute; leave it out for the default "`+DefaultKeyAttribute+`"`)
	}
	q.Del("key_attribute")
	client, err := awsdriver.URLClient(ctx, urlForm, u, q, o.Client, ddb.NewFromConfig)
	if err != nil {
		return nil, err
	}
	return Open(ctx, Options{Table: table, Name: name, KeyAttribute: keyAttr, Client: client}, lopts)
}
