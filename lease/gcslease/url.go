package gcslease

import (
	"context"
	"net/url"

	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/leaseurl"
)

// Scheme is the URL scheme gcslease registers with lease.Open, gsutil's and
// gcloud storage's own.
const Scheme = "gs"

func init() {
	lease.Register(Scheme, &URLOpener{})
	driver.RegisterObjects(Scheme, &URLOpener{})
	driver.RegisterStore(Description)
}

// OpenURL opens the lease urlstr names, such as "gs://bucket/object", for
// the contender opts describes: lease.Open for gs:// URLs. Importing
// gcslease to call it registers the scheme with lease.Open as well.
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return driver.OpenURL(ctx, "gcslease", Scheme, urlstr, opts)
}

// urlForm checks gs:// URLs. They take no query parameters: credentials
// are Application Default Credentials, the emulator is named by
// STORAGE_EMULATOR_HOST, and the TTL is a lease option.
var urlForm = &leaseurl.Form{Pkg: "gcslease", Form: "gs://BUCKET/OBJECT", Host: "bucket", Path: "object",
	Credentials: "Application Default Credentials", Endpoint: "STORAGE_EMULATOR_HOST (host:port) for an emulator"}

// URLOpener opens "gs://bucket/object" URLs, as gcloud storage names
// objects. The object's name is the URL's path without its leading slash.
// Any query parameter is rejected. For shard.OpenStore, the URL names a
// shard group, "gs://bucket/group", whose objects' names start with the
// path.
type URLOpener struct {
	// Client, if set, is used for every URL. If nil, each URL gets a client
	// of its own, built as Open builds one (Options.Client).
	Client *storage.Service
}

// OpenLeaseURL implements lease.URLOpener.
func (o *URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, lopts lease.Options) (lease.Lease, error) {
	bucket, object, _, err := urlForm.Parse(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, Options{Bucket: bucket, Object: object, Client: o.Client}, lopts)
}

// OpenObjectsURL implements driver.ObjectsOpener: the bucket as
// driver.Objects
// (OpenObjects), and the URL's path as the group.
func (o *URLOpener) OpenObjectsURL(ctx context.Context, u *url.URL, _ lease.Options) (driver.Objects, string, error) {
	bucket, group, _, err := urlForm.Parse(u)
	if err != nil {
		return nil, "", err
	}
	store, err := OpenObjects(ctx, ObjectsOptions{Bucket: bucket, Client: o.Client})
	if err != nil {
		return nil, "", err
	}
	return store, group, nil
}
