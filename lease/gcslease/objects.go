package gcslease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"google.golang.org/api/googleapi"
	storage "google.golang.org/api/storage/v1"

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
	Client *storage.Service
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
	d := newConn(o.c.Service, o.bucket, key, 0)
	var notMatch int64
	if known != "" {
		gen, err := strconv.ParseInt(known, 10, 64)
		if err != nil || gen <= 0 {
			return nil, "", &lease.OptionError{Pkg: "gcslease", Field: "known", Value: strconv.Quote(known), Reason: "is not a generation this store returned"}
		}
		notMatch = gen
	}
	body, gen, err := d.download(ctx, notMatch)
	if err != nil {
		var apiErr *googleapi.Error
		if known != "" && errors.As(err, &apiErr) && apiErr.Code == http.StatusNotModified {
			return nil, known, nil
		}
		return nil, "", d.classify(ctx, opGet, err)
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, "", d.classify(ctx, opGet, err)
	}
	version := strconv.FormatInt(gen, 10)
	if version == known {
		return nil, known, nil
	}
	return data, version, nil
}

// Put writes key with ifGenerationMatch: 0 when version is "", version
// otherwise, and returns the new generation.
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	d := newConn(o.c.Service, o.bucket, key, 0)
	if version == "" {
		return d.upload(ctx, opCreate, data, "application/octet-stream", 0)
	}
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil || gen <= 0 {
		return "", &lease.OptionError{Pkg: "gcslease", Field: "version", Value: strconv.Quote(version), Reason: "is not a generation this store returned"}
	}
	return d.upload(ctx, opReplace, data, "application/octet-stream", gen)
}

// List lists the objects under prefix with objects.list, page by page
// (asking for each object's name and generation only), and returns their
// generations: all of them, or an error (also when the store names a page
// token it named before, which would make the listing loop).
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	d := newConn(o.c.Service, o.bucket, prefix, 0)
	call := o.c.Objects.List(o.bucket).Prefix(prefix).MaxResults(int64(o.pageSize)).
		Fields("nextPageToken", "items(name,generation)").Context(ctx)
	out, tokens := map[string]string{}, map[string]bool{}
	for {
		page, err := call.Do()
		if err != nil {
			return nil, d.classify(ctx, opList, err)
		}
		for _, obj := range page.Items {
			if obj.Generation <= 0 {
				return nil, fmt.Errorf("%w: gcslease: listing gs://%s/%s* returned %q without a generation", lease.ErrUnavailable, o.bucket, prefix, obj.Name)
			}
			out[obj.Name] = strconv.FormatInt(obj.Generation, 10)
		}
		if page.NextPageToken == "" {
			return out, nil
		}
		if tokens[page.NextPageToken] { // asked for again, it would loop for ever
			return nil, fmt.Errorf("%w: gcslease: listing gs://%s/%s* named page token %q a second time", lease.ErrUnavailable, o.bucket, prefix, page.NextPageToken)
		}
		tokens[page.NextPageToken] = true
		call = call.PageToken(page.NextPageToken)
	}
}
