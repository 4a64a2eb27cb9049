package s3lease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// IAMActions are the only S3 actions the driver calls, each on the lease's
// object only (arn:aws:s3:::BUCKET/KEY). A least-privilege policy grants
// exactly these on the object, and IAMBucketActions on the bucket.
var IAMActions = []string{"s3:GetObject", "s3:PutObject"}

// IAMBucketActions are the actions a least-privilege policy grants on the
// lease's bucket (arn:aws:s3:::BUCKET). The driver never calls them, but
// without s3:ListBucket Amazon S3 answers a GetObject of a missing object
// with 403 AccessDenied instead of 404 NoSuchKey, and a lease that was
// never acquired could not be acquired.
var IAMBucketActions = []string{"s3:ListBucket"}

// maxKeyLen is S3's limit on an object key, in bytes.
const maxKeyLen = 1024

// Options locate one lease object and the client that reaches it.
type Options struct {
	// Bucket is the name of an existing bucket. Required.
	Bucket string
	// Key is the object key of the lease record, such as "leases/jobs".
	// Required; at most 1008 bytes, so that the key of its probe object
	// (KEY.leasehold-probe, 16 bytes more) fits S3's limit of 1024; not
	// ending with .leasehold-probe, another lease's probe object.
	Key string
	// Client is the S3 client to use. If nil, Open builds one from the
	// default AWS configuration chain: credentials from the environment, the
	// shared config and credentials files, or the ECS/EC2 role; region from
	// AWS_REGION or the profile; endpoint from AWS_ENDPOINT_URL_S3 or
	// AWS_ENDPOINT_URL when set (LocalStack, MinIO). Whichever client is
	// used, the driver turns the SDK's own retries off for its calls, so
	// that they do not multiply with the caller's.
	Client *s3.Client
	// UsePathStyle addresses the bucket in the URL's path
	// (http://endpoint/bucket/key) instead of its host name, as MinIO and
	// LocalStack usually need. It applies to Client too. Default false.
	UsePathStyle bool
}

// Open returns a lease on the object opts names, for the contender lopts
// describes. It checks the options but sends no request: a missing bucket
// or refused credentials show up in the lease's first call, as
// lease.ErrNotFound or lease.ErrPermission.
func Open(ctx context.Context, opts Options, lopts lease.Options) (lease.Lease, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	client, err := awsClient(ctx, opts.Client)
	if err != nil {
		return nil, err
	}
	d := &conn{client: client, bucket: opts.Bucket, key: opts.Key, pathStyle: opts.UsePathStyle, callTimeout: lopts.WithDefaults().CallTimeout}
	return driver.NewCAS(d, lopts)
}

// awsClient returns client, or, if it is nil, one built from the default
// AWS configuration chain.
func awsClient(ctx context.Context, client *s3.Client) (*s3.Client, error) {
	return awsdriver.Client(ctx, "s3lease", client, s3.NewFromConfig, func(c *s3.Client) string { return c.Options().Region })
}

func (o Options) validate() error {
	switch {
	case o.Bucket == "":
		return &lease.OptionError{Pkg: "s3lease", Field: "Bucket", Value: `""`, Reason: "must not be empty"}
	case o.Key == "":
		return &lease.OptionError{Pkg: "s3lease", Field: "Key", Value: `""`, Reason: "must not be empty"}
	}
	return driver.CheckProbeKey("s3lease", "Key", o.Key, maxKeyLen, "S3")
}

// conn is the driver.CAS for one object. A record's version is the
// object's ETag, exactly as S3 returns it (quotes included), and goes back
// to S3 unchanged in If-Match.
type conn struct {
	client    *s3.Client
	bucket    string
	key       string
	pathStyle bool
	// probe: the object is the probe object of Verify, not a lease's.
	probe bool
	// callTimeout bounds each request of Verify (the engine bounds the
	// others): the lease's CallTimeout.
	callTimeout time.Duration
}

// callOptions apply to every request: no SDK retries (the caller retries,
// within its own deadlines), request bodies that cannot close a connection
// under an answered request (see awsdriver.PlainBodies: every PutObject has
// a body), and path-style addressing when asked for.
func (d *conn) callOptions(o *s3.Options) {
	awsdriver.NoRetries(&o.Retryer, &o.RetryMaxAttempts)
	o.HTTPClient = awsdriver.PlainBodies(o.HTTPClient)
	if d.pathStyle {
		o.UsePathStyle = true
	}
}

func (d *conn) Get(ctx context.Context) (lease.Record, error) {
	out, err := d.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &d.bucket, Key: &d.key}, d.callOptions)
	if err != nil {
		return lease.Record{}, d.classify(ctx, opGet, err)
	}
	defer out.Body.Close()
	// One byte more than a record may have, so that DecodeJSON sees an
	// oversized object as such, without reading all of it.
	b, err := io.ReadAll(io.LimitReader(out.Body, driver.MaxRecordSize+1))
	if err != nil {
		return lease.Record{}, d.classify(ctx, opGet, err)
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		return lease.Record{}, fmt.Errorf("%w (%s)", err, d.url())
	}
	if out.ETag == nil || *out.ETag == "" {
		return lease.Record{}, fmt.Errorf("%w: s3lease: GetObject %s returned no ETag", lease.ErrUnavailable, d.url())
	}
	r.Version = *out.ETag
	return r, nil
}

func (d *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return d.put(ctx, opCreate, driver.EncodeJSON(r), "application/json", &s3.PutObjectInput{IfNoneMatch: aws.String("*")})
}

func (d *conn) Replace(ctx context.Context, r lease.Record, version string) (string, error) {
	return d.put(ctx, opReplace, driver.EncodeJSON(r), "application/json", &s3.PutObjectInput{IfMatch: &version})
}

// put writes body, of contentType, with in's condition and returns the
// new ETag.
func (d *conn) put(ctx context.Context, op op, body []byte, contentType string, in *s3.PutObjectInput) (string, error) {
	in.Bucket, in.Key = &d.bucket, &d.key
	in.Body = bytes.NewReader(body)
	in.ContentLength = aws.Int64(int64(len(body)))
	in.ContentType = &contentType
	out, err := d.client.PutObject(ctx, in, d.callOptions)
	if err != nil {
		return "", d.classify(ctx, op, err)
	}
	if out.ETag == nil || *out.ETag == "" {
		// The write landed but its version is unknown: an unknown outcome,
		// which the engine resolves by reading the record back.
		return "", fmt.Errorf("%w: s3lease: PutObject %s returned no ETag", lease.ErrUnavailable, d.url())
	}
	return *out.ETag, nil
}

// url names the object.
func (d *conn) url() string { return "s3://" + d.bucket + "/" + d.key }

// Credentials implements driver.CredentialSource: where the client's
// credentials come from, or that none were found and where the SDK looked.
func (d *conn) Credentials(ctx context.Context) (string, error) {
	return awsdriver.CredentialSource(ctx, d.client.Options().Credentials)
}
