// Package lease is leasehold's portable API for leader-election leases on
// storage services that have no coordination server.
//
// A Lease is one contender's handle on one lease: Acquire, Renew, Release,
// Observe. Its doc comments are the contract every backend meets, and the
// conformance suite in lease/leasetest checks it. Code names a lease by URL
// and imports only the backend it needs, whose OpenURL opens it;
// DefaultIdentity names this instance:
//
//	l, err := s3lease.OpenURL(ctx, "s3://bucket/key", lease.Options{Identity: lease.DefaultIdentity()})
//
// Each backend also registers its URL scheme when imported, so that Open
// opens the URLs of every backend the program imports, such as a URL from
// its configuration:
//
//	l, err := lease.Open(ctx, os.Getenv("LEASE_URL"), lease.Options{Identity: lease.DefaultIdentity()})
//
// # What it guarantees
//
// Every backend keeps the same rules (package lease/driver holds what
// backends share, and applications never need):
//
//   - At most one contender holds the lease at any instant, assuming only
//     that clocks tick at nearly the same rate; they need not agree on the
//     time. Who judges that a holder's term has lapsed depends on the store
//     (Lease.Judge): on compare-and-swap stores (S3, DynamoDB, Cloud
//     Storage, memory) the
//     contender does, on its own monotonic clock, by seeing the same record
//     version unchanged for the holder's full TTL; on native leases (Azure
//     Blob) the store does.
//   - Every write changes the stored version.
//   - Fencing tokens strictly increase: each acquisition's token is greater
//     than every earlier one, and records are never deleted.
//   - A write whose outcome is unknown is resolved by reading the record
//     back, never by guessing.
//   - A record that leasehold did not write is reported as ErrCorrupt and
//     never taken over.
//   - A store known not to keep the contract is refused, never trusted,
//     with ErrUnsafeStore saying what the store failed: S3, DynamoDB and
//     Cloud Storage check that the store enforces conditional writes,
//     on a probe record beside the lease's, before this process first
//     writes to it (Acquire returns the error), and DynamoDB that the table
//     is not an eventually consistent global table (Open returns it).
//
// A Term's Sent time is when its acquire or renew was sent; the holder must
// stop acting as leader before Sent+TTL. Package runner does that, and
// everything else a leader needs (renewal, health checks, release).
//
// # Annotations
//
// A Record (and a Term) carries Annotations: the one place where the layers
// above this package keep state of their own in the lease's record (the
// runner's scheduled period and minimum hold; shard assignments), a few
// namespaced keys ("runner/period") with text values, bounded so that every
// backend stores them. The lease carries them over from write to write,
// compares them as part of the record, and never reads their meaning; a
// holder changes them with Term.Annotate and a renewal.
//
// Operators free a lease whose holder will never come back with Breaker
// (leasehold break): it ends the term at once, keeps the fencing counter,
// and marks the record broken (AnnotationBroken) for the term that takes
// it over.
package lease
