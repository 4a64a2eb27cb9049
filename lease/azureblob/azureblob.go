package azureblob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
)

// RoleDefinitionName is the Azure built-in role the lease's identity needs,
// assigned with the lease's container as its scope. The Terraform module
// for Azure must assign this same role.
var RoleDefinitionName = "Storage Blob Data Contributor"

// The durations an Azure Blob lease can have, other than infinite.
const (
	MinTTL = 15 * time.Second
	MaxTTL = 60 * time.Second
)

// Options locate one lease blob and the client that reaches it.
type Options struct {
	// Container is the name of an existing container. Required; azureblob
	// never creates containers.
	Container string
	// Blob is the name of the lease blob in the container, such as
	// "leases/nightly-report". Required. Open creates the blob, empty,
	// on the first Acquire if it does not exist. It must be used for
	// nothing but this lease.
	Blob string

	// Exactly one of Client, ConnectionString and AccountURL says how to
	// reach the account.

	// Client is the client to use, as it is: build it with
	// policy.RetryOptions{MaxRetries: -1} so that the SDK does not retry.
	// (azureblob turns retries off for each of its calls anyway.)
	Client *azblob.Client
	// ConnectionString is an account's connection string, with an
	// AccountKey or a SharedAccessSignature. For Azurite, use the full
	// development connection string (DefaultEndpointsProtocol=http;
	// AccountName=devstoreaccount1;AccountKey=...;BlobEndpoint=
	// http://127.0.0.1:10000/devstoreaccount1;): the Go SDK does not
	// understand UseDevelopmentStorage=true.
	ConnectionString string
	// AccountURL is the account's Blob service URL, such as
	// https://NAME.blob.core.windows.net/, reached with
	// azidentity.NewDefaultAzureCredential: a managed identity on Azure
	// workers, workload identity, environment variables, or the Azure CLI's
	// login. It must be https.
	AccountURL string

	// InfiniteLease takes the Azure lease with an infinite duration instead
	// of the TTL. The store then never ends a term by itself: a holder that
	// crashes or is cut off keeps the lease until a person breaks it (az
	// storage blob lease break), and every other contender waits forever.
	// Use it only where a person watches the lease. The TTL then only sets
	// the runner's renewal and polling cadence, and may be any TTL package
	// lease accepts. All contenders of one lease must agree on this
	// setting. Default false: the lease lasts the TTL, which must be a
	// whole number of seconds from 15s to 60s.
	InfiniteLease bool
}

// Open returns a lease on the blob opts names, for the contender lopts
// describes. It checks the options, including the TTL, but sends no
// request: a missing container or refused credentials show up in the
// lease's first call, as lease.ErrNotFound or lease.ErrPermission.
func Open(ctx context.Context, opts Options, lopts lease.Options) (lease.Lease, error) {
	lopts, err := lopts.Validate()
	if err != nil {
		return nil, err
	}
	if err := opts.validate(lopts); err != nil {
		return nil, err
	}
	client, err := opts.client()
	if err != nil {
		return nil, err
	}
	bb := client.ServiceClient().NewContainerClient(opts.Container).NewBlockBlobClient(opts.Blob)
	duration := int32(lopts.TTL / time.Second)
	if opts.InfiniteLease {
		duration = -1
	}
	return &blobLease{
		opts:      lopts,
		blob:      bb,
		container: opts.Container,
		where:     redactedURL(bb.URL()),
		duration:  duration,
	}, nil
}

func invalid(field string, value any, reason string) error {
	return &lease.OptionError{Pkg: "azureblob", Field: field, Value: value, Reason: reason}
}

func (o Options) validate(lopts lease.Options) error {
	if err := validContainer(o.Container); err != nil {
		return err
	}
	switch {
	case o.Blob == "":
		return invalid("Blob", `""`, "must not be empty")
	case len(o.Blob) > 1024:
		return invalid("Blob", fmt.Sprintf("%q...", o.Blob[:64]), fmt.Sprintf("is %d bytes long; Azure allows at most 1024", len(o.Blob)))
	}
	ttl := lopts.TTL
	if !o.InfiniteLease && (ttl < MinTTL || ttl > MaxTTL || ttl%time.Second != 0) {
		return invalid("TTL", ttl, fmt.Sprintf("must be a whole number of seconds from %ds to %ds, the durations an Azure Blob lease can have (Options.InfiniteLease takes a lease that never lapses)", MinTTL/time.Second, MaxTTL/time.Second))
	}
	var set []string
	for name, ok := range map[string]bool{"Client": o.Client != nil, "ConnectionString": o.ConnectionString != "", "AccountURL": o.AccountURL != ""} {
		if ok {
			set = append(set, name)
		}
	}
	slices.Sort(set)
	switch len(set) {
	case 0:
		return invalid("Options", "no Client, ConnectionString or AccountURL", "must say how to reach the account: set exactly one of them")
	case 1:
		return nil
	}
	return invalid("Options", strings.Join(set, " and ")+" set", "must say how to reach the account once: set exactly one of Client, ConnectionString and AccountURL")
}

// validContainer checks Azure's rules for container names: 3 to 63
// lower-case letters, digits and hyphens, starting and ending with a letter
// or digit, no two hyphens in a row.
func validContainer(name string) error {
	bad := len(name) < 3 || len(name) > 63 || strings.Contains(name, "--") ||
		strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			bad = true
		}
	}
	if bad {
		return invalid("Container", fmt.Sprintf("%q", name), "is not a container name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit")
	}
	return nil
}

// noRetries turns the SDK's retries off for one call: the caller (the
// runner) retries, within its own deadlines.
var noRetries = policy.RetryOptions{MaxRetries: -1}

func clientOptions() *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Retry: noRetries}}
}

// client builds the client o describes.
func (o Options) client() (*azblob.Client, error) {
	switch {
	case o.Client != nil:
		return o.Client, nil
	case o.ConnectionString != "":
		if isDevelopmentStorage(o.ConnectionString) {
			return nil, invalid("ConnectionString", fmt.Sprintf("%q", o.ConnectionString), "is not understood by the Go Azure SDK: use Azurite's full connection string, "+
				"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=<Azurite's well-known key>;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;")
		}
		c, err := azblob.NewClientFromConnectionString(o.ConnectionString, clientOptions())
		if err != nil {
			// The value holds a secret: name its keys only.
			return nil, invalid("ConnectionString", "keys "+connectionStringKeys(o.ConnectionString), "is not usable: "+err.Error())
		}
		return c, nil
	default:
		u, err := url.Parse(o.AccountURL)
		if err != nil || u.Host == "" || u.User != nil {
			return nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "is not a service URL such as https://NAME.blob.core.windows.net/")
		}
		if u.RawQuery != "" {
			return nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "has a query (a SAS token?): give the service URL alone; leasehold signs in with Entra ID")
		}
		if u.Scheme != "https" {
			return nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "must be https: Entra ID tokens are never sent over plain http (for Azurite, use a ConnectionString)")
		}
		cred, err := newCredential()
		if err != nil {
			return nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "has no credential: azidentity.NewDefaultAzureCredential: "+err.Error())
		}
		c, err := azblob.NewClient(o.AccountURL, cred, clientOptions())
		if err != nil {
			return nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "is not usable: "+err.Error())
		}
		return c, nil
	}
}

// isDevelopmentStorage reports whether cs is the shorthand
// UseDevelopmentStorage=true, which only the .NET and Python SDKs expand.
func isDevelopmentStorage(cs string) bool {
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(strings.TrimSpace(k), "UseDevelopmentStorage") && strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
	}
	return false
}

// connectionStringKeys lists cs's keys without their values, for errors.
func connectionStringKeys(cs string) string {
	var keys []string
	for part := range strings.SplitSeq(strings.TrimRight(cs, ";"), ";") {
		k, _, _ := strings.Cut(part, "=")
		keys = append(keys, strings.TrimSpace(k))
	}
	return strings.Join(keys, ",")
}

// redactedURL is u without its query, which may hold a SAS token.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable blob URL)"
	}
	u.RawQuery, u.Fragment, u.User, u.RawPath = "", "", nil, "" // RawPath: show "a/b", not "a%2Fb"
	return u.String()
}

// blobLease is the lease.Lease on one blob.
type blobLease struct {
	opts      lease.Options
	blob      *blockblob.Client
	container string
	where     string // the blob's URL, for messages
	duration  int32  // the Azure lease duration: TTL seconds, or -1

	mu sync.Mutex
	// current is the lease ID of this Lease's latest acquisition, until it
	// is released or found lost. A blob leased under it is held by this
	// Lease's latest term, which Acquire replaces at once.
	current string
}

func (l *blobLease) Options() lease.Options { return l.opts }

// call runs one request under CallTimeout, with the SDK's retries off.
func (l *blobLease) call(ctx context.Context, f func(context.Context) error) error {
	return lease.Call(ctx, l.opts.CallTimeout, func(ctx context.Context) error {
		return f(policy.WithRetryOptions(ctx, noRetries))
	})
}

func (l *blobLease) leaseClient(id string) *azlease.BlobClient {
	c, err := azlease.NewBlobClient(l.blob, &azlease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		// NewBlobClient fails only for a nil ID it cannot generate.
		panic("azureblob: lease.NewBlobClient: " + err.Error())
	}
	return c
}

// state is the blob as one GetBlobProperties saw it.
type state struct {
	rec      *lease.Record // the metadata's record; nil if the blob has no metadata
	etag     azcore.ETag
	leased   bool // an Azure lease holds the blob (leased, or breaking)
	infinite bool // that lease is infinite
}

// stat reads the blob's properties and metadata. A missing blob is an
// error wrapping lease.ErrNoRecord, unless create is set: then stat creates
// the blob, empty, if it is still absent, and reads it again.
func (l *blobLease) stat(ctx context.Context, create bool) (state, error) {
	var p blob.GetPropertiesResponse
	err := l.call(ctx, func(ctx context.Context) (err error) {
		if p, err = l.blob.GetProperties(ctx, nil); err != nil {
			return l.classify(ctx, opGetProperties, err)
		}
		return nil
	})
	if create && errors.Is(err, lease.ErrNoRecord) {
		if err := l.create(ctx); err != nil {
			return state{}, err
		}
		st, err := l.stat(ctx, false)
		if errors.Is(err, lease.ErrNoRecord) { // deleted at once by someone
			return state{}, fmt.Errorf("%w: azureblob: %s vanished as soon as it was created: %v", lease.ErrUnavailable, l.where, err)
		}
		return st, err
	}
	if err != nil {
		return state{}, err
	}
	if p.ETag == nil {
		return state{}, fmt.Errorf("%w: azureblob: %s %s returned no ETag", lease.ErrUnavailable, opGetProperties, l.where)
	}
	st := state{etag: *p.ETag}
	if p.LeaseState != nil {
		st.leased = *p.LeaseState == azlease.StateTypeLeased || *p.LeaseState == azlease.StateTypeBreaking
	}
	st.infinite = st.leased && p.LeaseDuration != nil && *p.LeaseDuration == azlease.DurationTypeInfinite
	if p.ContentLength != nil && *p.ContentLength > 0 {
		return state{}, fmt.Errorf("%w (%s)", lease.Corruptf("the blob holds %d bytes; a leasehold lease blob is empty and keeps its record in metadata", *p.ContentLength), l.where)
	}
	if st.rec, err = decodeMetadata(p.Metadata); err != nil {
		return state{}, fmt.Errorf("%w (%s)", err, l.where)
	}
	if st.rec != nil {
		st.rec.Version = string(st.etag)
	}
	return st, nil
}

// create stores the blob, empty and without metadata, unless it exists.
func (l *blobLease) create(ctx context.Context) error {
	return l.call(ctx, func(ctx context.Context) error {
		_, err := l.blob.Upload(ctx, streaming.NopCloser(strings.NewReader("")), &blockblob.UploadOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: new(azcore.ETagAny)}},
		})
		if err == nil || bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet, bloberror.LeaseIDMissing) {
			return nil // it exists: another contender created it
		}
		return l.classify(ctx, opCreate, err)
	})
}

// view is the lease.Record that st shows. A blob that an Azure lease holds
// while its metadata names no current holder (a contender between its
// acquire and its metadata write, or a tool other than leasehold) has an
// unknown holder: Holder is empty, Token 0, and TTL this contender's own.
func (l *blobLease) view(st state) (lease.Record, error) {
	switch {
	case st.leased && st.rec != nil && !st.rec.Released:
		return *st.rec, nil
	case st.leased:
		return lease.Record{TTL: l.opts.TTL, Version: string(st.etag)}, nil
	case st.rec == nil:
		return lease.Record{}, fmt.Errorf("%w: azureblob: %s has never been acquired", lease.ErrNoRecord, l.where)
	}
	r := *st.rec
	r.Released = true // no Azure lease holds it: free, whatever the metadata says
	return r, nil
}

func (l *blobLease) Observe(ctx context.Context) (lease.Record, error) {
	st, err := l.stat(ctx, false)
	if err != nil {
		return lease.Record{}, err
	}
	return l.view(st)
}

// heldError reports the lease that st shows held by someone else.
func (l *blobLease) heldError(st state) error {
	r, err := l.view(st)
	if err != nil { // not held after all: a race with a release
		r = lease.Record{TTL: l.opts.TTL, Version: string(st.etag)}
	}
	held := &lease.HeldError{Record: r, Wait: r.TTL}
	switch {
	case st.infinite && r.Holder == "":
		return fmt.Errorf("azureblob: %s has an infinite Azure lease whose holder did not write its name: another tool, or a person, holds it, and it never lapses; break it (az storage blob lease break) to let contenders in: %w", l.where, held)
	case r.Holder == "":
		return fmt.Errorf("azureblob: %s is leased by a holder that has not written its name yet (a contender acquiring it, or another tool): %w", l.where, held)
	case st.infinite && l.duration != -1:
		return fmt.Errorf("azureblob: %s: %w under an infinite Azure lease, which never lapses (was it opened with InfiniteLease?)", l.where, held)
	}
	return held
}

func (l *blobLease) currentID() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

func (l *blobLease) setCurrent(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = id
}

// forget clears current if it is id.
func (l *blobLease) forget(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == id {
		l.current = ""
	}
}

func (l *blobLease) Acquire(ctx context.Context) (lease.Term, error) {
	// Another round only when the blob changed between this contender's
	// read and its acquire (another contender acquired and released it in
	// between).
	var err error
	for range 3 {
		var st state
		if st, err = l.stat(ctx, true); err != nil {
			return lease.Term{}, err
		}
		if st.rec != nil && st.rec.Token == math.MaxUint64 {
			return lease.Term{}, fmt.Errorf("%w (%s)", lease.Corruptf("token %d cannot grow", st.rec.Token), l.where)
		}
		var t lease.Term
		if st.leased {
			id := l.currentID()
			if id == "" {
				return lease.Term{}, l.heldError(st)
			}
			t, err = l.replace(ctx, st, id)
		} else {
			t, err = l.acquireFree(ctx, st)
		}
		if !errors.Is(err, errChanged) {
			return t, err
		}
	}
	return lease.Term{}, fmt.Errorf("%w: azureblob: %s changed under every attempt to acquire it: %w", lease.ErrUnavailable, l.where, err)
}

// errChanged: the blob changed between the read and the acquire.
var errChanged = errors.New("the blob changed since it was read")

// acquireFree takes the lease on a blob that st shows free, conditional on
// the blob being unchanged since st was read, and writes the record with
// the next token under the new lease.
func (l *blobLease) acquireFree(ctx context.Context, st state) (lease.Term, error) {
	id := newLeaseID()
	sent := time.Now()
	err := l.call(ctx, func(ctx context.Context) error {
		_, err := l.leaseClient(id).AcquireLease(ctx, l.duration, &azlease.BlobAcquireOptions{
			ModifiedAccessConditions: &azlease.ModifiedAccessConditions{IfMatch: &st.etag},
		})
		switch {
		case err == nil:
			return nil
		case bloberror.HasCode(err, heldCodes...):
			return errHeldNow
		case bloberror.HasCode(err, bloberror.ConditionNotMet):
			return errChanged
		}
		return l.classify(ctx, opAcquire, err)
	})
	switch {
	case errors.Is(err, errHeldNow):
		// Someone else won the race: tell who, if a read says.
		if now, rerr := l.stat(ctx, false); rerr == nil && now.leased {
			return lease.Term{}, l.heldError(now)
		}
		st.leased = true
		st.rec = nil
		return lease.Term{}, l.heldError(st)
	case errors.Is(err, errChanged):
		return lease.Term{}, err
	case err != nil:
		if !isDefinite(err) {
			// The lease may have been taken with id: give it back.
			l.abandon(ctx, id)
		}
		return lease.Term{}, err
	}
	return l.writeTerm(ctx, st, id, sent)
}

// errHeldNow: the acquire found the blob leased.
var errHeldNow = errors.New("the blob is leased")

// replace is Acquire of a blob that st shows leased, by a Lease whose latest
// acquisition had lease ID id. If the blob is leased under id, that is this
// Lease's latest term: it moves the lease to a new ID (so that the old
// term's Renew and Release find it lost), restarts its duration, and writes
// the next token. Otherwise someone else holds the blob.
func (l *blobLease) replace(ctx context.Context, st state, id string) (lease.Term, error) {
	next := newLeaseID()
	err := l.call(ctx, func(ctx context.Context) error {
		_, err := l.leaseClient(id).ChangeLease(ctx, next, nil)
		if err != nil {
			return l.leaseError(ctx, opChange, err)
		}
		return nil
	})
	switch {
	case errors.Is(err, lease.ErrLost): // not ours
		l.forget(id)
		return lease.Term{}, l.heldError(st)
	case err != nil:
		if !isDefinite(err) {
			l.abandon(ctx, next)
		}
		return lease.Term{}, err
	}
	l.forget(id)
	// A change keeps the lease's expiry; a renewal restarts its duration
	// from when it was sent.
	sent := time.Now()
	err = l.call(ctx, func(ctx context.Context) error {
		if _, err := l.leaseClient(next).RenewLease(ctx, nil); err != nil {
			return l.leaseError(ctx, opRenew, err)
		}
		return nil
	})
	if err != nil {
		l.abandon(ctx, next)
		return lease.Term{}, l.notLost(err)
	}
	return l.writeTerm(ctx, st, next, sent)
}

// writeTerm writes the record of a new term under lease id, on the blob as
// st read it, and returns the term. If the write fails and a read does not
// show it landed, it gives the lease back and returns the error: the
// acquisition is reported only once its token is stored.
func (l *blobLease) writeTerm(ctx context.Context, st state, id string, sent time.Time) (lease.Term, error) {
	var token uint64 = 1
	if st.rec != nil {
		token = st.rec.Token + 1
	}
	rec := lease.Record{Holder: l.opts.Identity, Token: token, TTL: l.opts.TTL, Nonce: newNonce()}
	err := l.setMetadata(ctx, rec, id, &st.etag)
	if err != nil && ctx.Err() == nil {
		if now, rerr := l.stat(ctx, false); rerr == nil && now.rec != nil && sameWrite(*now.rec, rec) {
			err = nil // it landed; its response was lost
		}
	}
	if err != nil {
		l.abandon(ctx, id)
		return lease.Term{}, l.notLost(err)
	}
	l.setCurrent(id)
	return lease.Term{Holder: rec.Holder, Token: rec.Token, TTL: rec.TTL, Sent: sent, Version: id}, nil
}

// setMetadata writes rec as the blob's metadata under lease id, and, if
// ifMatch is not nil, only if the blob's ETag is *ifMatch.
func (l *blobLease) setMetadata(ctx context.Context, rec lease.Record, id string, ifMatch *azcore.ETag) error {
	return l.call(ctx, func(ctx context.Context) error {
		cond := &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: &id}}
		if ifMatch != nil {
			cond.ModifiedAccessConditions = &blob.ModifiedAccessConditions{IfMatch: ifMatch}
		}
		_, err := l.blob.SetMetadata(ctx, encodeMetadata(rec), &blob.SetMetadataOptions{AccessConditions: cond})
		if err != nil {
			return l.leaseError(ctx, opSetMetadata, err)
		}
		return nil
	})
}

// leaseError classifies err from a request made under a lease ID: the
// codes saying the ID no longer holds the blob are lease.ErrLost.
func (l *blobLease) leaseError(ctx context.Context, o op, err error) error {
	if ctx.Err() == nil && bloberror.HasCode(err, lostCodes...) {
		return fmt.Errorf("%w: azureblob: %s %s: %w", lease.ErrLost, o, l.where, err)
	}
	if ctx.Err() == nil && bloberror.HasCode(err, bloberror.BlobNotFound) {
		return fmt.Errorf("%w: azureblob: %s %s: the blob was deleted: %w", lease.ErrLost, o, l.where, err)
	}
	return l.classify(ctx, o, err)
}

// notLost turns lease.ErrLost, which Acquire never returns, into
// lease.ErrUnavailable: a lease taken moments ago was lost (broken by
// someone) before its record was written, so the attempt failed.
func (l *blobLease) notLost(err error) error {
	if !errors.Is(err, lease.ErrLost) {
		return err
	}
	return fmt.Errorf("%w: azureblob: %s: the new Azure lease was lost before its record was written: %v", lease.ErrUnavailable, l.where, err)
}

// isDefinite reports whether err is an answer that the request was not
// carried out, rather than an unknown outcome.
func isDefinite(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode >= 400 && re.StatusCode < 500 && re.StatusCode != 408 && re.StatusCode != 429
}

// abandon releases lease id, best effort, with a context of its own (ctx
// may have ended), so that a term that was never reported does not keep
// others waiting for its TTL.
func (l *blobLease) abandon(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.opts.CallTimeout)
	defer cancel()
	_, _ = l.leaseClient(id).ReleaseLease(policy.WithRetryOptions(ctx, noRetries), nil)
}

func (l *blobLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if err := l.issued(t); err != nil {
		return lease.Term{}, err
	}
	sent := time.Now()
	err := l.call(ctx, func(ctx context.Context) error {
		if _, err := l.leaseClient(t.Version).RenewLease(ctx, nil); err != nil {
			return l.leaseError(ctx, opRenew, err)
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, lease.ErrLost) {
			l.forget(t.Version)
			return lease.Term{}, fmt.Errorf("%w (token %d)", err, t.Token)
		}
		return lease.Term{}, err
	}
	t.Sent = sent
	return t, nil
}

func (l *blobLease) Release(ctx context.Context, t lease.Term) error {
	if err := l.issued(t); err != nil {
		return err
	}
	rec := lease.Record{Holder: t.Holder, Token: t.Token, TTL: t.TTL, Released: true, Nonce: newNonce()}
	err := l.setMetadata(ctx, rec, t.Version, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// Lost, or an unknown outcome: the record decides.
		st, rerr := l.stat(ctx, false)
		switch {
		case rerr != nil && !errors.Is(rerr, lease.ErrNoRecord):
			if errors.Is(err, lease.ErrUnavailable) {
				return fmt.Errorf("%w; reading the blob back failed too: %v", err, rerr)
			}
			return fmt.Errorf("%w: azureblob: release of token %d: %v; reading the blob back failed: %v", lease.ErrUnavailable, t.Token, err, rerr)
		case rerr != nil || st.rec == nil || st.rec.Holder != t.Holder || st.rec.Token != t.Token:
			l.forget(t.Version)
			return l.lostTo(st, t, err)
		case st.rec.Released && !st.leased:
			// Released by this term, and no Azure lease holds the blob.
			l.forget(t.Version)
			return nil
		case st.rec.Released:
			// Released by this term (by this call, whose response was lost,
			// or by an earlier one), and the Azure lease may still be ours:
			// release it below.
		case !errors.Is(err, lease.ErrLost):
			return err // the outcome is unknown, and the record not released
		case !st.leased:
			// The term lapsed and nobody has taken the lease since: it is
			// free, which is what Release is for.
			l.forget(t.Version)
			return nil
		default:
			l.forget(t.Version)
			return l.lostTo(st, t, err)
		}
	}
	err = l.call(ctx, func(ctx context.Context) error {
		if _, err := l.leaseClient(t.Version).ReleaseLease(ctx, nil); err != nil {
			return l.leaseError(ctx, opRelease, err)
		}
		return nil
	})
	if err == nil || errors.Is(err, lease.ErrLost) {
		// The record says released; the Azure lease is gone either way.
		l.forget(t.Version)
		return nil
	}
	return fmt.Errorf("%w: azureblob: the record of token %d says released, but the Azure lease is held until it lapses: %w", lease.ErrUnavailable, t.Token, err)
}

// lostTo returns lease.ErrLost for term t, which st shows ended.
func (l *blobLease) lostTo(st state, t lease.Term, cause error) error {
	r, err := l.view(st)
	switch {
	case err != nil:
		return fmt.Errorf("%w: azureblob: %s: token %d ended: %w", lease.ErrLost, l.where, t.Token, cause)
	case r.Holder == "":
		return fmt.Errorf("%w: azureblob: %s: token %d ended; the blob is leased by a holder that has not written its name yet", lease.ErrLost, l.where, t.Token)
	case r.Released:
		return fmt.Errorf("%w: azureblob: %s: token %d ended; released by %q (token %d)", lease.ErrLost, l.where, t.Token, r.Holder, r.Token)
	}
	return fmt.Errorf("%w: azureblob: %s: token %d ended; now held by %q (token %d)", lease.ErrLost, l.where, t.Token, r.Holder, r.Token)
}

// issued checks that t could have come from this lease.
func (l *blobLease) issued(t lease.Term) error {
	if t.Holder != l.opts.Identity || t.Token == 0 || t.Version == "" {
		return invalid("Term", fmt.Sprintf("%q/%d", t.Holder, t.Token), fmt.Sprintf("was not issued to %q", l.opts.Identity))
	}
	return nil
}

// sameWrite reports whether r is the record written as w.
func sameWrite(r, w lease.Record) bool {
	return r.Nonce == w.Nonce && r.Holder == w.Holder && r.Token == w.Token && r.Released == w.Released
}

// newLeaseID returns a random (version 4) UUID, the form Azure lease IDs
// take.
func newLeaseID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newNonce returns 16 random hex digits.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
