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
	driver.RegisterObjects(Scheme, &URLOpener{})
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

// GroupURLParams are the query parameters of a shard group's URL,
// dynamodb://TABLE/GROUP (shard.OpenStore): URLParams' AWS parameters, and
// the names of the group table's keys (ObjectsOptions):
//
//	group_attribute  the table's partition key attribute (default "group")
//	key_attribute    the table's sort key attribute (default "key")
//
// Any other parameter is rejected.
var GroupURLParams = awsdriver.Params("group_attribute", "key_attribute")

// urlForm checks dynamodb:// URLs of leases, groupForm those of shard
// groups.
var (
	urlForm   = &leaseurl.Form{Pkg: "dynamolease", Form: "dynamodb://TABLE/NAME", Host: "table", Path: "lease name", Params: URLParams, Credentials: awsdriver.Credentials, Endpoint: "?endpoint="}
	groupForm = &leaseurl.Form{Pkg: "dynamolease", Form: "dynamodb://TABLE/GROUP", Host: "table", Path: "group", Params: GroupURLParams, Credentials: awsdriver.Credentials, Endpoint: "?endpoint="}
)

// URLOpener is the lease.URLOpener of the "dynamodb" scheme: the URL's
// host is the table, its path without the leading slash is the lease's
// name ("dynamodb://leases/jobs/nightly" names the lease "jobs/nightly" in
// table "leases"), and URLParams lists the query parameters. It is also
// the scheme's driver.ObjectsOpener (shard.OpenStore): there the host is
// a shard group's table (ObjectsOptions.Table) and the path the group
// ("dynamodb://shards/orders" names the group "orders" in table "shards"),
// with GroupURLParams.
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
	keyAttr, err := attribute(urlForm, u, q, "key_attribute", DefaultKeyAttribute)
	if err != nil {
		return nil, err
	}
	client, err := awsdriver.URLClient(ctx, urlForm, u, q, o.Client, ddb.NewFromConfig)
	if err != nil {
		return nil, err
	}
	return Open(ctx, Options{Table: table, Name: name, KeyAttribute: keyAttr, Client: client}, lopts)
}

// OpenObjectsURL implements driver.ObjectsOpener: the group the URL's
// path names, in the table its host names (NewObjects, which describes
// the table once, within lopts.CallTimeout), and the path as the group.
func (o *URLOpener) OpenObjectsURL(ctx context.Context, u *url.URL, lopts lease.Options) (driver.Objects, string, error) {
	table, group, q, err := groupForm.Parse(u)
	if err != nil {
		return nil, "", err
	}
	groupAttr, err := attribute(groupForm, u, q, "group_attribute", DefaultGroupAttribute)
	if err != nil {
		return nil, "", err
	}
	keyAttr, err := attribute(groupForm, u, q, "key_attribute", DefaultObjectKeyAttribute)
	if err != nil {
		return nil, "", err
	}
	client, err := awsdriver.URLClient(ctx, groupForm, u, q, o.Client, ddb.NewFromConfig)
	if err != nil {
		return nil, "", err
	}
	store, err := NewObjects(ctx, ObjectsOptions{Table: table, Group: group, GroupAttribute: groupAttr, KeyAttribute: keyAttr, Client: client, CallTimeout: lopts.CallTimeout})
	if err != nil {
		return nil, "", err
	}
	return store, group, nil
}

// attribute takes the attribute name param out of q: "" when q has none,
// an error when it is empty.
func attribute(f *leaseurl.Form, u *url.URL, q url.Values, param, def string) (string, error) {
	v, empty := q.Get(param), q.Has(param) && q.Get(param) == ""
	if empty {
		return "", f.Invalid(u, "has an empty "+param+`; leave it out for the default "`+def+`"`)
	}
	q.Del(param)
	return v, nil
}
