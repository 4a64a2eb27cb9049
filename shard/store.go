package shard

import (
	"context"

	"github.com/leasehold/leasehold/lease"
)

// Store is what a group of workers needs from a storage service, beyond
// leases: plain objects written conditionally, and a listing. Every key a
// group uses starts with the group's prefix (Config.Group):
//
//	GROUP/members/ID   a worker's liveness lease (a lease.Lease record)
//	GROUP/assigner     the assigner's lease (a lease.Lease record)
//	GROUP/acks/ID      a worker's acknowledgement (a small object, Ack)
//	GROUP/assignment   who owns which shard (one object, N·7 bytes or so)
//
// memlease.Objects implements it. A backend's implementation must keep
// these promises, on which the safety argument in the package doc rests:
//
//   - Put is atomic and conditional, and the store enforces the condition:
//     version "" creates the object only if the key holds nothing; any other
//     version replaces it only if that is the stored version. A failed
//     condition returns an error wrapping driver.ErrConflict. The new
//     version differs from the stored one whenever the bytes differ. Objects
//     up to 1 MiB must be accepted (the assignment of 100,000 shards).
//   - Get returns the stored bytes and version, or, when the stored version
//     equals known, the version alone (a GET with If-None-Match, answered
//     304, which is what keeps a worker's steady state at one cheap read per
//     renew interval). A key that holds nothing is lease.ErrNoRecord.
//   - List returns the version of every key under prefix: each key's
//     version as of some instant between the listing's sending and its
//     return, reflecting every write that returned before that instant
//     (S3, Cloud Storage, Azure and DynamoDB's consistent Query list this
//     way, page by page), every key that existed throughout, or an error:
//     never a partial list. Paging is the implementation's business.
//   - Lease opens a lease on key for the contender opts describes, with the
//     guarantees of package lease.
//
// Every method returns promptly once ctx ends, and errors wrap package
// lease's sentinels (or driver.ErrConflict).
//
// How the services provide it:
//
//   - S3: PutObject with If-None-Match: * or If-Match: ETag; GetObject with
//     If-None-Match: ETag (304); ListObjectsV2 with Prefix, 1,000 keys and
//     their ETags a page, strongly consistent. IAM adds s3:ListBucket on
//     the bucket, conditioned on the group's prefix.
//   - Cloud Storage: objects.insert with ifGenerationMatch (0 for absent);
//     objects.get with ifGenerationNotMatch (304); objects.list with a
//     prefix, generations included, strongly consistent. The assignment
//     is written at most once per listing interval, within the one write
//     per second an object allows.
//   - DynamoDB (dynamolease.Objects): a table keyed (group, key), one
//     partition per group; PutItem conditional on a nonce attribute, the
//     version; Query with ConsistentRead for List (1 MB pages). GetItem
//     has no 304, so the item read is kept small: an object over 3 KiB
//     goes in parts of its own partition, written before the head item
//     that names them and keyed by its version.
//   - Azure Blob (azurelease.Objects): Put Blob with If-None-Match: * or
//     If-Match: ETag; Get Blob with If-None-Match (304); List Blobs with a
//     prefix (ETags). Its leases are native (lease.JudgedByStore) and
//     their renewals keep the ETag, so its List reports the lease state
//     that List Blobs shows instead (see StoreJudgedLeases).
type Store interface {
	Lease(key string, opts lease.Options) (lease.Lease, error)
	Get(ctx context.Context, key, known string) (data []byte, version string, err error)
	Put(ctx context.Context, key string, data []byte, version string) (newVersion string, err error)
	List(ctx context.Context, prefix string) (map[string]string, error)
}

// StoreJudgedLeases is implemented by a Store whose leases the store
// judges (lease.JudgedByStore, such as Azure's native leases, whose
// renewals keep the object's version) and whose List reports, for a key
// that holds such a lease, the lease's state as the store judges it at the
// listing's instant, as a version:
//
//   - while the store reports the lease held, a version that differs from
//     every version any earlier listing reported;
//   - while it reports it free (lapsed, released or broken), or the key
//     holds no lease, the object's own version, which changes only when
//     the object is written.
//
// The assigner's count (rule 2, see the package doc) then sees a held
// lease change at every listing, and runs a count only over listings at
// which the store said the lease was free. The store frees a lease only
// once its duration (the TTL) has passed since the last renewal it
// accepted, by which time the holder, which stops at sent + RenewDeadline
// of the last renewal it sent, had stopped; the count adds a full TTL on
// the assigner's clock. Run refuses a Store whose leases are judged by the
// store unless it implements StoreJudgedLeases and ListsLeaseState
// returns true.
type StoreJudgedLeases interface {
	Store
	// ListsLeaseState reports whether List reports the state of the
	// store's native leases as above.
	ListsLeaseState() bool
}

// listsLeaseState reports whether s's List shows its native leases' state.
func listsLeaseState(s Store) bool {
	n, ok := s.(StoreJudgedLeases)
	return ok && n.ListsLeaseState()
}

// The keys of a group.
func memberKey(group, id string) string { return group + "/members/" + id }
func ackKey(group, id string) string    { return group + "/acks/" + id }
func assignerKey(group string) string   { return group + "/assigner" }
func assignmentKey(group string) string { return group + "/assignment" }
