package s3lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// IAMGroupActions are the actions a shard group's workers call beyond
// IAMActions: s3:ListBucket on the bucket, to list the group's keys
// (ListObjectsV2 with the group's prefix), which a least-privilege policy
// conditions on s3:prefix = GROUP/; IAMActions go on the group's keys,
// arn:aws:s3:::BUCKET/GROUP/*.
var IAMGroupActions = []string{"s3:ListBucket"}

// MaxPageSize is the most keys one page of ListObjectsV2 returns.
const MaxPageSize = 1000

// ObjectsOptions locate the bucket of a shard group and the client that
// reaches it.
type ObjectsOptions struct {
	// Bucket is the name of an existing bucket. Required.
	Bucket string
	// Client and UsePathStyle are as in Options.
	Client       *s3.Client
	UsePathStyle bool
	// PageSize is how many keys each ListObjectsV2 asks for, at most
	// MaxPageSize, the default; tests set fewer to list across pages
	// without writing thousands of keys.
	PageSize int
}

// Objects is a bucket as driver.Objects (a shard.Store): the objects of shard groups, with
// their ETags as versions, and their leases (Open's). Every request is one
// attempt: the SDK's retries are off, and the caller bounds each call
// (shard's workers do, by their CallTimeout).
type Objects struct {
	client    *s3.Client
	bucket    string
	pathStyle bool
	pageSize  int32
}

var _ driver.Objects = (*Objects)(nil)

// OpenObjects returns the bucket opts names as driver.Objects (a shard.Store). It checks
// the options but sends no request.
func OpenObjects(ctx context.Context, opts ObjectsOptions) (*Objects, error) {
	switch {
	case opts.Bucket == "":
		return nil, &lease.OptionError{Pkg: "s3lease", Field: "Bucket", Value: `""`, Reason: "must not be empty"}
	case opts.PageSize < 0 || opts.PageSize > MaxPageSize:
		return nil, &lease.OptionError{Pkg: "s3lease", Field: "PageSize", Value: opts.PageSize, Reason: fmt.Sprintf("must be between 0 (the default, %d) and %d", MaxPageSize, MaxPageSize)}
	}
	client, err := awsClient(ctx, opts.Client)
	if err != nil {
		return nil, err
	}
	o := &Objects{client: client, bucket: opts.Bucket, pathStyle: opts.UsePathStyle, pageSize: int32(opts.PageSize)}
	if o.pageSize == 0 {
		o.pageSize = MaxPageSize
	}
	return o, nil
}

// conn returns the driver of key, for its requests' options and its error
// mapping.
func (o *Objects) conn(key string) *conn {
	return &conn{client: o.client, bucket: o.bucket, key: key, pathStyle: o.pathStyle}
}

// Lease opens the lease at key, as Open does.
func (o *Objects) Lease(key string, opts lease.Options) (lease.Lease, error) {
	return Open(context.Background(), Options{Bucket: o.bucket, Key: key, Client: o.client, UsePathStyle: o.pathStyle}, opts)
}

// Get reads key with GetObject, with If-None-Match: known when known is
// set; S3's 304 Not Modified returns known and no bytes.
func (o *Objects) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	d := o.conn(key)
	in := &s3.GetObjectInput{Bucket: &o.bucket, Key: &key}
	if known != "" {
		in.IfNoneMatch = &known
	}
	out, err := o.client.GetObject(ctx, in, d.callOptions)
	if err != nil {
		var re *awshttp.ResponseError
		if known != "" && errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotModified {
			return nil, known, nil
		}
		return nil, "", d.classify(ctx, opGet, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, "", d.classify(ctx, opGet, err)
	}
	if out.ETag == nil || *out.ETag == "" {
		return nil, "", fmt.Errorf("%w: s3lease: GetObject %s returned no ETag", lease.ErrUnavailable, d.url())
	}
	return data, *out.ETag, nil
}

// Put writes key with PutObject, If-None-Match: * when version is "" and
// If-Match: version otherwise, and returns the new ETag.
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	if version == "" {
		return o.conn(key).put(ctx, opCreate, data, "application/octet-stream", &s3.PutObjectInput{IfNoneMatch: aws.String("*")})
	}
	return o.conn(key).put(ctx, opReplace, data, "application/octet-stream", &s3.PutObjectInput{IfMatch: &version})
}

// List lists the keys under prefix with ListObjectsV2, page by page, and
// returns their ETags: all of them, or an error.
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	d := o.conn(prefix)
	out := map[string]string{}
	pages := s3.NewListObjectsV2Paginator(o.client, &s3.ListObjectsV2Input{Bucket: &o.bucket, Prefix: &prefix, MaxKeys: &o.pageSize})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx, d.callOptions)
		if err != nil {
			return nil, d.classify(ctx, opList, err)
		}
		for _, obj := range page.Contents {
			if obj.Key == nil || obj.ETag == nil || *obj.ETag == "" {
				return nil, fmt.Errorf("%w: s3lease: ListObjectsV2 %s listed an object without a key or an ETag", lease.ErrUnavailable, d.url())
			}
			out[*obj.Key] = *obj.ETag
		}
	}
	return out, nil
}
