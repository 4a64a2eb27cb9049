package driver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/leasehold/leasehold/lease"
)

// Objects is what a group of workers (package shard) needs from a storage service, beyond
// leases: plain objects written conditionally, and a listing. Every key a
// group uses starts with the group's prefix (shard.Config.Group):
//
//	GROUP/members/ID   a worker's liveness lease (a lease.Lease record)
//	GROUP/assigner     the assigner's lease (a lease.Lease record)
//	GROUP/acks/ID      a worker's acknowledgement (a small object, Ack)
//	GROUP/assignment   who owns which shard (one object, N·7 bytes or so)
//
// memlease.Objects, s3lease.Objects, gcslease.Objects, dynamolease.Objects
// and azurelease.Objects implement it, and each runs the conformance suite
// shard/shardtest, which tests every promise below. A backend's implementation must keep these promises, on
// which the safety argument in package shard's doc rests:
//
//   - Put is atomic and conditional, and the store enforces the condition:
//     version "" creates the object only if the key holds nothing; any other
//     version replaces it only if that is the stored version. A failed
//     condition returns an error wrapping ErrConflict. The new
//     version differs from the stored one whenever the bytes differ. Objects
//     up to 1 MiB must be accepted (the assignment of 100,000 shards).
//   - Get returns the stored bytes and version, or, when the stored version
//     equals known, the version alone (a GET with If-None-Match, answered
//     304, which is what keeps a worker's steady state at one cheap read per
//     renew interval). A key that holds nothing is lease.ErrNoRecord. A key
//     whose object cannot be read whole, now or later (a DynamoDB head item
//     put back by a restore after a later write deleted its parts), is
//     lease.ErrCorrupt, as bytes that are not the caller's format are to
//     the caller: unreadable until a Put over the version List shows
//     replaces it. lease.ErrUnavailable says only that the store may answer
//     later, so a caller that retries it never writes over an object that
//     is merely slow.
//   - List returns the version of every key under prefix: each key's
//     version as of some instant between the listing's sending and its
//     return, reflecting every write that returned before that instant
//     (S3, Cloud Storage, Azure and DynamoDB's consistent Query list this
//     way, page by page), every key that existed throughout, or an error:
//     never a partial list. Paging is the implementation's business.
//   - Lease opens a lease on key for the contender opts describes, with the
//     guarantees of package lease, whose renewals show (lease.RenewalsShow):
//     each renewal that succeeds changes the version List shows for key, so
//     that the assigner judges a worker's liveness by rule 2 on listings.
//
// Every method returns promptly once ctx ends, and errors wrap package
// lease's sentinels (or ErrConflict).
//
// How the services provide it:
//
//   - S3: PutObject with If-None-Match: * or If-Match: ETag; GetObject with
//     If-None-Match: ETag (304); ListObjectsV2 with Prefix, 1,000 keys and
//     their ETags a page, strongly consistent. IAM adds s3:ListBucket on
//     the bucket, conditioned on the group's prefix (s3lease.Objects).
//   - Cloud Storage: objects.insert with ifGenerationMatch (0 for absent);
//     objects.get with ifGenerationNotMatch (304); objects.list with a
//     prefix, generations included, strongly consistent. The assignment
//     is written at most once per listing interval, within the one write
//     per second an object allows. IAM adds storage.objects.list on the
//     bucket (gcslease.Objects; fake-gcs-server ignores ifGenerationNotMatch
//     on reads, and the Store drops the bytes of the known generation).
//   - DynamoDB (dynamolease.Objects): a table keyed (group, key), one
//     partition per group; PutItem conditional on a nonce attribute, the
//     version; Query with ConsistentRead for List (1 MB pages). GetItem
//     has no 304, so the item read is kept small: an object over 3 KiB
//     goes in parts of its own partition, written before the head item
//     that names them and keyed by its version.
//   - Azure Blob (azurelease.Objects): Put Blob with If-None-Match: * or
//     If-Match: ETag; Get Blob with If-None-Match (304); List Blobs with a
//     prefix (ETags). Its leases are native (lease.JudgedByStore); each
//     renewal writes the record under the lease, which changes the ETag.
type Objects interface {
	// Lease opens a lease on key for the contender opts describes.
	Lease(key string, opts lease.Options) (lease.Lease, error)
	// Get reads key, or only its version when that is known.
	Get(ctx context.Context, key, known string) (data []byte, version string, err error)
	// Put writes key if its version is still version ("": absent).
	Put(ctx context.Context, key string, data []byte, version string) (newVersion string, err error)
	// List returns the version of every key under prefix.
	List(ctx context.Context, prefix string) (map[string]string, error)
}

// ObjectsOpener opens a group's Objects from a URL, as lease.URLOpener opens a
// lease: the lease URL of the group's prefix (s3://BUCKET/PREFIX,
// dynamodb://TABLE/GROUP, mem://NAME). Backends register one per scheme in their init function,
// beside their lease.URLOpener; import a backend for its side effect to make
// its scheme available to OpenObjects (and shard.OpenStore):
//
//	import _ "github.com/leasehold/leasehold/lease/s3lease"
type ObjectsOpener interface {
	// OpenObjectsURL opens the Objects that hold the group u names, and
	// returns it with the group's prefix in it (shard.Config.Group): for
	// "s3://bucket/jobs", the bucket's store and "jobs". Every call of the
	// Objects act for the client opts.Identity. It sends no request, but
	// where the backend's lease opener checks its store at Open too
	// (dynamolease describes the group's table, within opts.CallTimeout).
	// It must reject query parameters it does not know, and a query it
	// cannot parse, with an error wrapping lease.ErrInvalid that names the
	// parameter (Query does both).
	OpenObjectsURL(ctx context.Context, u *url.URL, opts lease.Options) (store Objects, group string, err error)
}

var openers = struct {
	sync.RWMutex
	m map[string]ObjectsOpener
}{m: map[string]ObjectsOpener{}}

// RegisterObjects makes opener available to OpenObjects for URLs with the given scheme.
// It panics if the scheme is registered twice, as that is a programming
// error caught at start-up.
func RegisterObjects(scheme string, opener ObjectsOpener) {
	openers.Lock()
	defer openers.Unlock()
	if _, dup := openers.m[scheme]; dup {
		panic("driver: objects scheme " + scheme + " registered twice")
	}
	openers.m[scheme] = opener
}

// ObjectSchemes returns the schemes OpenObjects knows, sorted.
func ObjectSchemes() []string {
	openers.RLock()
	defer openers.RUnlock()
	out := make([]string, 0, len(openers.m))
	for s := range openers.m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// OpenObjects opens the Objects of the group named by urlstr, such as
// "s3://bucket/jobs" or "mem://jobs", for the worker opts.Identity, and
// returns it with the group's prefix, for shard.Config.Store and shard.Config.Group.
// The scheme's backend must have been imported. Errors wrap
// lease.ErrInvalid for a malformed URL or an unknown scheme (the message
// lists the registered ones).
func OpenObjects(ctx context.Context, urlstr string, opts lease.Options) (store Objects, group string, err error) {
	u, err := url.Parse(urlstr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // url.Error repeats the URL, password and all
			err = ue.Err
		}
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(urlstr)), Reason: "is malformed: " + err.Error()}
	}
	openers.RLock()
	opener, ok := openers.m[u.Scheme]
	openers.RUnlock()
	if !ok {
		return nil, "", &lease.OptionError{Pkg: "shard", Field: "URL", Value: strconv.Quote(lease.RedactURL(u.String())),
			Reason: fmt.Sprintf("has unknown scheme %q (registered for shard groups: %s)", u.Scheme, strings.Join(ObjectSchemes(), ", "))}
	}
	return opener.OpenObjectsURL(ctx, u, opts)
}
