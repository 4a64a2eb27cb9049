package azurelease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Objects is a shard group's store (shard.Store) in one container: every
// key is a blob of that name, written with Put Blob conditional on its ETag
// (If-None-Match: * to create, If-Match to replace), read with Get Blob
// (If-None-Match: the version the caller has, answered 304 when it is
// still the stored one), and listed with List Blobs, 5,000 a page. A
// version is the blob's ETag, without quotes.
//
// Leases (Objects.Lease) are this package's native Azure leases on the
// key's blob, which the service judges. Each renewal writes the record
// under the lease, which changes the blob's ETag, and a renewal whose write
// fails is a failed renewal (lease.RenewalsShow): so the assigner judges a
// worker's liveness by rule 2 on listed ETags, as on every store.
//
// Objects needs no data action beyond DataActions: List Blobs and Get Blob
// are blobs/read, Put Blob is blobs/write.
type Objects struct {
	opts      Options
	container *container.Client
	pageSize  *int32
}

// MaxPageSize is the most blobs one page of List Blobs returns.
const MaxPageSize = 5000

// ObjectsOptions locate a shard group's container and the client that
// reaches it.
type ObjectsOptions struct {
	// Options names the container and how to reach the account (exactly
	// one of Client, ConnectionString and AccountURL). Its Blob must be
	// empty: each key names its blob. Its InfiniteLease must be false: a
	// worker's liveness must lapse when it stops renewing.
	Options
	// PageSize is how many blobs each List Blobs asks for, at most
	// MaxPageSize, the default; tests set fewer to list across pages
	// without writing thousands of blobs.
	PageSize int
}

// NewObjects returns the store in opts.Container, reached as opts says.
// It sends no request.
func NewObjects(opts ObjectsOptions) (*Objects, error) {
	if err := validContainer(opts.Container); err != nil {
		return nil, err
	}
	switch {
	case opts.Blob != "":
		return nil, invalid("Blob", strconv.Quote(opts.Blob), "must be empty for Objects: each key names its blob")
	case opts.InfiniteLease:
		return nil, invalid("InfiniteLease", true, "must be false for Objects: a worker's liveness must lapse when the worker stops renewing it")
	case opts.PageSize < 0 || opts.PageSize > MaxPageSize:
		return nil, invalid("PageSize", opts.PageSize, fmt.Sprintf("must be between 0 (the default, %d) and %d", MaxPageSize, MaxPageSize))
	}
	if err := opts.validateAccount(); err != nil {
		return nil, err
	}
	c, _, err := opts.client()
	if err != nil {
		return nil, err
	}
	o := &Objects{opts: opts.Options, container: c.ServiceClient().NewContainerClient(opts.Container)}
	if opts.PageSize > 0 {
		o.pageSize = to.Ptr(int32(opts.PageSize))
	}
	return o, nil
}

// Lease opens this package's lease on the blob key for the contender
// lopts describes (see Open).
func (o *Objects) Lease(key string, lopts lease.Options) (lease.Lease, error) {
	opts := o.opts
	opts.Blob = key
	return Open(context.Background(), opts, lopts)
}

// where names a blob in errors.
func (o *Objects) where(key string) string {
	return redactedURL(o.container.NewBlobClient(key).URL())
}

// Get returns the bytes of the blob key and its version, or only the
// version when it is known (Azure answers 304). A missing blob is
// lease.ErrNoRecord.
func (o *Objects) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	ctx = policy.WithRetryOptions(ctx, noRetries)
	opts := &blob.DownloadStreamOptions{}
	if known != "" {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: quoted(known)}}
	}
	resp, err := o.container.NewBlobClient(key).DownloadStream(ctx, opts)
	if err != nil {
		return nil, "", classify(ctx, opGetBlob, o.where(key), o.opts.Container, err)
	}
	if resp.Body == nil { // the SDK's answer to a 304
		return nil, known, nil
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", classify(ctx, opGetBlob, o.where(key), o.opts.Container, err)
	}
	if resp.ETag == nil {
		return nil, "", fmt.Errorf("%w: azurelease: %s %s returned no ETag", lease.ErrUnavailable, opGetBlob, o.where(key))
	}
	return data, unquoted(*resp.ETag), nil
}

// Put writes data to the blob key if it does not exist (version "") or
// its ETag is version, and returns its new version. A failed condition
// (412, or 409 for a blob that exists) wraps driver.ErrConflict, as does a
// blob under a lease (a lease's blob, never written with Put).
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	ctx = policy.WithRetryOptions(ctx, noRetries)
	cond := &blob.ModifiedAccessConditions{IfMatch: quoted(version)}
	if version == "" {
		cond = &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}
	}
	resp, err := o.container.NewBlockBlobClient(key).Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), &blockblob.UploadOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: cond},
	})
	if bloberror.HasCode(err, bloberror.ConditionNotMet, bloberror.BlobAlreadyExists, bloberror.LeaseIDMissing) {
		return "", fmt.Errorf("%w: azurelease: %s %s: %w", driver.ErrConflict, opPutBlob, o.where(key), err)
	}
	if err != nil {
		return "", classify(ctx, opPutBlob, o.where(key), o.opts.Container, err)
	}
	if resp.ETag == nil {
		return "", fmt.Errorf("%w: azurelease: %s %s returned no ETag", lease.ErrUnavailable, opPutBlob, o.where(key))
	}
	return unquoted(*resp.ETag), nil
}

// List returns the version (ETag) of every blob whose name starts with
// prefix, page by page (List Blobs), or an error: never part of the list.
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	ctx = policy.WithRetryOptions(ctx, noRetries)
	out := map[string]string{}
	pager := o.container.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &prefix, MaxResults: o.pageSize})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, classify(ctx, opListBlobs, o.where(prefix)+"*", o.opts.Container, err)
		}
		for _, b := range page.Segment.BlobItems {
			if b.Name == nil || b.Properties == nil || b.Properties.ETag == nil {
				return nil, fmt.Errorf("%w: azurelease: %s %s*: a blob without a name or ETag", lease.ErrUnavailable, opListBlobs, o.where(prefix))
			}
			out[*b.Name] = unquoted(*b.Properties.ETag)
		}
	}
	return out, nil
}

// quoted is the ETag header value of version.
func quoted(version string) *azcore.ETag {
	e := azcore.ETag(`"` + version + `"`)
	return &e
}

// unquoted is an ETag as a version: List Blobs gives ETags without the
// quotes that the ETag header has.
func unquoted(e azcore.ETag) string {
	return strings.Trim(string(e), `"`)
}
