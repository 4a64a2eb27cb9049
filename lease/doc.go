// Package lease is leasehold's portable API for leader-election leases on
// storage services that have no coordination server.
//
// A Lease is one contender's handle on one lease: Acquire, Renew, Release,
// Observe. Its doc comments are the contract every backend meets, and the
// conformance suite in lease/leasetest checks it. Backends register URL
// schemes, so that code names a lease by URL and imports only the backend it
// needs:
//
//	import _ "github.com/leasehold/leasehold/lease/memlease"
//	l, err := lease.Open(ctx, "mem://jobs", lease.Options{Identity: "worker-1"})
//
// # What it guarantees
//
// For compare-and-swap stores, NewCAS is the one implementation of the
// safety rules, over a three-method CASDriver:
//
//   - Expiry is judged on the contender's own monotonic clock: a held
//     record is taken over only after the contender has seen the same
//     version, unchanged, for the holder's full TTL, and only by a write
//     conditional on that version. Clocks must tick at nearly the same rate;
//     they need not agree on the time.
//   - Every write carries a fresh nonce, so it changes the stored version.
//   - Fencing tokens strictly increase: each acquisition writes the previous
//     token plus one, and records are never deleted.
//   - A write whose outcome is unknown is resolved by reading the record
//     back, never by guessing.
//   - A record that leasehold did not write is reported as ErrCorrupt and
//     never taken over.
//
// A Term's Sent time is when its acquire or renew was sent; the holder must
// stop acting as leader before Sent+TTL. Package runner does that, and
// everything else a leader needs (renewal, health checks, release).
package lease
