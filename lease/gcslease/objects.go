package gcslease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// IAMGroupPermissions are the permissions a shard group's workers need
// beyond IAMPermissions: storage.objects.list on the bucket, to list the
// group's objects (objects.list with the group's prefix; Cloud Storage
// grants listing per bucket, not per prefix, unless an IAM condition on
// the object name's prefix narrows it). IAMPermissions go on the group's
// objects, projects/_/buckets/BUCKET/objects/GROUP/*.
var IAMGroupPermissions = []string{"storage.objects.list"}

// MaxPageSize is the most objects one page of objects.list returns.
const MaxPageSize = 1000

// ObjectsOptions locate the bucket of a shard group and the client that
// reaches it.
type ObjectsOptions struct {
	// Bucket is the name of an existing bucket. Required.
	Bucket string
	// Client is as in Options.
	Client *storage.Client
	// PageSize is how many objects each objects.list asks for, at most
	// MaxPageSize, the default; tests set fewer to list across pages
	// without writing thousands of objects.
	PageSize int
}

// Objects is a bucket as driver.Objects (a shard.Store): the objects of shard groups, with
// their generations as versions, and their leases (Open's). Every request
// is one attempt: the client's retries are off, and the caller bounds each
// call (shard's workers do, by their CallTimeout). Cloud Storage allows
// about one write per second to one object; a group writes its
// assignment at most once per listing (a third of a renew interval).
type Objects struct {
	c        client
	bucket   string
	pageSize int
}

var _ driver.Objects = (*Objects)(nil)

// OpenObjects returns the bucket opts names as driver.Objects (a shard.Store). It checks
// the options but sends no request.
func OpenObjects(ctx context.Context, opts ObjectsOptions) (*Objects, error) {
	switch {
	case opts.Bucket == "":
		return nil, &lease.OptionError{Pkg: "gcslease", Field: "Bucket", Value: `""`, Reason: "must not be empty"}
	case opts.PageSize < 0 || opts.PageSize > MaxPageSize:
		return nil, &lease.OptionError{Pkg: "gcslease", Field: "PageSize", Value: opts.PageSize, Reason: fmt.Sprintf("must be between 0 (the default, %d) and %d", MaxPageSize, MaxPageSize)}
	}
	c, err := newClient(ctx, opts.Client)
	if err != nil {
		return nil, err
	}
	o := &Objects{c: c, bucket: opts.Bucket, pageSize: opts.PageSize}
	if o.pageSize == 0 {
		o.pageSize = MaxPageSize
	}
	return o, nil
}

// Lease opens the lease at key, as Open does.
func (o *Objects) Lease(key string, opts lease.Options) (lease.Lease, error) {
	if err := (Options{Bucket: o.bucket, Object: key}).validate(); err != nil {
		return nil, err
	}
	if err := checkTTL(&opts); err != nil {
		return nil, err
	}
	return o.c.open(o.bucket, key, opts)
}

// Get reads key, with ifGenerationNotMatch: known when known is set;
// Cloud Storage's 304 Not Modified returns known and no bytes. A store
// that ignores the condition on reads (fake-gcs-server v1.56 does) sends
// the bytes of generation known, which Get drops, as the 304 would have.
func (o *Objects) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	d := newConn(o.c.Client, o.bucket, key, 0)
	obj := d.obj
	if known != "" {
		gen, err := strconv.ParseInt(known, 10, 64)
		if err != nil || gen <= 0 {
			return nil, "", &lease.OptionError{Pkg: "gcslease", Field: "known", Value: strconv.Quote(known), Reason: "is not a generation this store returned"}
		}
		obj = obj.If(storage.Conditions{GenerationNotMatch: gen})
	}
	rd, err := obj.NewReader(ctx)
	if err != nil {
		var apiErr *googleapi.Error
		if known != "" && errors.As(err, &apiErr) && apiErr.Code == http.StatusNotModified {
			return nil, known, nil
		}
		return nil, "", d.classify(ctx, opGet, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, "", d.classify(ctx, opGet, err)
	}
	if rd.Attrs.Generation <= 0 {
		return nil, "", fmt.Errorf("%w: gcslease: reading %s returned no generation", lease.ErrUnavailable, d.url())
	}
	version := strconv.FormatInt(rd.Attrs.Generation, 10)
	if version == known {
		return nil, known, nil
	}
	return data, version, nil
}

// Put writes key with ifGenerationMatch: 0 when version is "", version
// otherwise, and returns the new generation.
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	d := newConn(o.c.Client, o.bucket, key, 0)
	if version == "" {
		return d.upload(ctx, opCreate, data, "application/octet-stream", storage.Conditions{DoesNotExist: true})
	}
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil || gen <= 0 {
		return "", &lease.OptionError{Pkg: "gcslease", Field: "version", Value: strconv.Quote(version), Reason: "is not a generation this store returned"}
	}
	return d.upload(ctx, opReplace, data, "application/octet-stream", storage.Conditions{GenerationMatch: gen})
}

// List lists the objects under prefix with objects.list, page by page,
// and returns their generations: all of them, or an error.
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	d := newConn(o.c.Client, o.bucket, prefix, 0)
	q := &storage.Query{Prefix: prefix}
	if err := q.SetAttrSelection([]string{"Name", "Generation"}); err != nil {
		return nil, fmt.Errorf("%w: gcslease: %w", lease.ErrInvalid, err)
	}
	it := o.c.Bucket(o.bucket).Retryer(storage.WithPolicy(storage.RetryNever)).Objects(ctx, q)
	it.PageInfo().MaxSize = o.pageSize
	out := map[string]string{}
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, d.classify(ctx, opList, err)
		}
		if attrs.Generation <= 0 {
			return nil, fmt.Errorf("%w: gcslease: listing gs://%s/%s* returned %q without a generation", lease.ErrUnavailable, o.bucket, prefix, attrs.Name)
		}
		out[attrs.Name] = strconv.FormatInt(attrs.Generation, 10)
	}
}
