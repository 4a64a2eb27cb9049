package gcslease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// IAMPermissions are the only Cloud Storage permissions the driver needs,
// each on the lease's object only: storage.objects.get to read the record,
// storage.objects.create to write it, and storage.objects.delete because
// Cloud Storage requires it, with create, to overwrite an object (every
// renewal, release and takeover does). A least-privilege custom role holds
// exactly these (terraform/modules/gcp-gcs-lease makes one).
var IAMPermissions = []string{"storage.objects.create", "storage.objects.delete", "storage.objects.get"}

// MinTTL is the shortest TTL a lease accepts. Cloud Storage allows about one
// write per second to one object name and answers faster writes with 429;
// the runner renews every 3/8 of the TTL by default, every 1.125s at a TTL
// of 3s, just under that rate.
const MinTTL = 3 * time.Second

// maxObjectLen is Cloud Storage's limit on an object name, in bytes.
const maxObjectLen = 1024

// Options locate one lease object and the client that reaches it.
type Options struct {
	// Bucket is the name of an existing bucket. Required.
	Bucket string
	// Object is the name of the lease's object, such as "leases/jobs".
	// Required; valid UTF-8 without carriage returns or line feeds, as
	// Cloud Storage requires, and at most 1008 bytes, so that the name of
	// its probe object (OBJECT.leasehold-probe, 16 bytes more) fits Cloud
	// Storage's limit of 1024; not ending with .leasehold-probe, another
	// lease's probe object.
	Object string
	// Client is the Cloud Storage client to use. If nil, Open builds one
	// with Application Default Credentials (the attached service account on
	// Cloud Run, GKE workload identity or Compute Engine;
	// GOOGLE_APPLICATION_CREDENTIALS; gcloud auth application-default
	// login), or, when STORAGE_EMULATOR_HOST is set, one that talks to that
	// emulator without credentials; either reads with the JSON API
	// (storage.WithJSONReads), which a client of your own should do too for
	// fake-gcs-server behind a proxy. Whichever client is used, the driver
	// turns the client's own retries off for its calls, so that they do not
	// multiply with the caller's.
	Client *storage.Client
}

// Open returns a lease on the object opts names, for the contender lopts
// describes. It checks the options, including a TTL of at least MinTTL,
// but sends no request: a missing bucket or refused credentials show up
// in the lease's first call, as lease.ErrNotFound or lease.ErrPermission.
func Open(ctx context.Context, opts Options, lopts lease.Options) (lease.Lease, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := checkTTL(&lopts); err != nil {
		return nil, err
	}
	c, err := newClient(ctx, opts.Client)
	if err != nil {
		return nil, err
	}
	return c.open(opts.Bucket, opts.Object, lopts)
}

// checkTTL validates lopts, filling in its defaults, and refuses a TTL
// shorter than MinTTL.
func checkTTL(lopts *lease.Options) error {
	valid, err := lopts.Validate()
	if err != nil {
		return err
	}
	if valid.TTL < MinTTL {
		return &lease.OptionError{Pkg: "gcslease", Field: "TTL", Value: valid.TTL,
			Reason: fmt.Sprintf("must be at least %v: Cloud Storage allows about one write per second to one object, and the runner renews every 3/8 of the TTL by default (every 1.125s at 3s)", MinTTL)}
	}
	*lopts = valid
	return nil
}

// client is a Cloud Storage client as the driver got it.
type client struct {
	*storage.Client
	// adc: the driver built the client, with Application Default
	// Credentials; emulator is then STORAGE_EMULATOR_HOST as it found it.
	adc      bool
	emulator string
}

// newClient returns c, or, if it is nil, a client built with Application
// Default Credentials.
func newClient(ctx context.Context, c *storage.Client) (client, error) {
	if c != nil {
		return client{Client: c}, nil
	}
	// JSON API reads (GET /storage/v1/b/BUCKET/o/OBJECT?alt=media), as the
	// writes are JSON API uploads: fake-gcs-server serves XML API reads of
	// names with a slash only when the request's Host is its -public-host,
	// so through a proxy (toxiproxy, a counting proxy) they would find no
	// object.
	c, err := storage.NewClient(ctx, storage.WithJSONReads(), option.WithUserAgent("leasehold"))
	if err != nil {
		return client{}, &lease.OptionError{Pkg: "gcslease", Field: "Client", Value: "nil", Reason: "could not be built with Application Default Credentials: " + err.Error()}
	}
	return client{Client: c, adc: true, emulator: os.Getenv(emulatorHostEnv)}, nil
}

// open returns the lease on object in bucket, for lopts, checked.
func (c client) open(bucket, object string, lopts lease.Options) (lease.Lease, error) {
	d := newConn(c.Client, bucket, object, lopts.CallTimeout)
	d.adc, d.emulator = c.adc, c.emulator
	return driver.NewCAS(d, lopts)
}

func (o Options) validate() error {
	invalid := func(field, value, reason string) error {
		return &lease.OptionError{Pkg: "gcslease", Field: field, Value: strconv.Quote(value), Reason: reason}
	}
	switch {
	case o.Bucket == "":
		return invalid("Bucket", "", "must not be empty")
	case o.Object == "":
		return invalid("Object", "", "must not be empty")
	case !utf8.ValidString(o.Object) || strings.ContainsAny(o.Object, "\r\n"):
		return invalid("Object", o.Object, "must be valid UTF-8 without carriage returns or line feeds, as Cloud Storage requires")
	}
	return driver.CheckProbeKey("gcslease", "Object", o.Object, maxObjectLen, "Cloud Storage")
}

// conn is the driver.CAS for one object. A record's version is the
// object's generation, in decimal: every write of an object makes a new
// generation, greater than all earlier ones, so every write changes it.
type conn struct {
	client         *storage.Client
	obj            *storage.ObjectHandle // with the client's retries off
	bucket, object string
	callTimeout    time.Duration // bounds each of Verify's requests
	// adc: Open built the client, with Application Default Credentials;
	// emulator is then STORAGE_EMULATOR_HOST as Open found it.
	adc      bool
	emulator string
}

// newConn returns the driver.CAS of the object in bucket, through client,
// with the client's retries off: each call is then one request, bounded by
// the lease's CallTimeout, and the caller (the runner) retries within its
// own deadlines.
func newConn(client *storage.Client, bucket, object string, callTimeout time.Duration) *conn {
	obj := client.Bucket(bucket).Object(object).Retryer(storage.WithPolicy(storage.RetryNever))
	return &conn{client: client, obj: obj, bucket: bucket, object: object, callTimeout: callTimeout}
}

func (d *conn) Get(ctx context.Context) (lease.Record, error) {
	rd, err := d.obj.NewReader(ctx)
	if err != nil {
		return lease.Record{}, d.classify(ctx, opGet, err)
	}
	defer rd.Close()
	// One byte more than a record may have, so that DecodeJSON sees an
	// oversized object as such, without reading all of it.
	b, err := io.ReadAll(io.LimitReader(rd, driver.MaxRecordSize+1))
	if err != nil {
		return lease.Record{}, d.classify(ctx, opGet, err)
	}
	r, err := driver.DecodeJSON(b)
	if err != nil {
		return lease.Record{}, fmt.Errorf("%w (%s)", err, d.url())
	}
	if rd.Attrs.Generation <= 0 {
		return lease.Record{}, fmt.Errorf("%w: gcslease: reading %s returned no generation", lease.ErrUnavailable, d.url())
	}
	r.Version = strconv.FormatInt(rd.Attrs.Generation, 10)
	return r, nil
}

func (d *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return d.write(ctx, opCreate, r, storage.Conditions{DoesNotExist: true})
}

func (d *conn) Replace(ctx context.Context, r lease.Record, version string) (string, error) {
	gen, err := strconv.ParseInt(version, 10, 64)
	if err != nil || gen <= 0 {
		return "", &lease.OptionError{Pkg: "gcslease", Field: "version", Value: strconv.Quote(version), Reason: "is not a generation this driver returned"}
	}
	return d.write(ctx, opReplace, r, storage.Conditions{GenerationMatch: gen})
}

// write stores r under cond in one request and returns the new
// generation.
func (d *conn) write(ctx context.Context, op op, r lease.Record, cond storage.Conditions) (string, error) {
	return d.upload(ctx, op, driver.EncodeJSON(r), "application/json", cond)
}

// upload stores body, of contentType, under cond in one request (an upload
// of ChunkSize 0 is one multipart upload) and returns the new generation.
func (d *conn) upload(ctx context.Context, op op, body []byte, contentType string, cond storage.Conditions) (string, error) {
	w := d.obj.If(cond).NewWriter(ctx)
	w.ChunkSize = 0
	w.ContentType = contentType
	if _, err := io.Copy(w, bytes.NewReader(body)); err != nil {
		_ = w.Close()
		return "", d.classify(ctx, op, err)
	}
	if err := w.Close(); err != nil {
		return "", d.classify(ctx, op, err)
	}
	attrs := w.Attrs()
	if attrs == nil || attrs.Generation <= 0 {
		// The write landed but its version is unknown: an unknown outcome,
		// which the engine resolves by reading the record back.
		return "", fmt.Errorf("%w: gcslease: writing %s returned no generation", lease.ErrUnavailable, d.url())
	}
	return strconv.FormatInt(attrs.Generation, 10), nil
}

func (d *conn) url() string { return "gs://" + d.bucket + "/" + d.object }
