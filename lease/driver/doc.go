// Package driver is what leasehold's backends need and applications never
// call, as gocloud.dev keeps blob/driver apart from blob. Application code
// uses package lease: lease.Open, the Lease interface, its Record and Term,
// and its errors.
//
// A backend on a compare-and-swap store implements CAS, three methods that
// only move records, and NewCAS turns it into a lease.Lease: NewCAS is the
// one implementation of the safety rules for such stores.
//
//   - Expiry is judged on the contender's own monotonic clock: a held
//     record is taken over only after the contender has seen the same
//     version, unchanged, for the holder's full TTL, and only by a write
//     conditional on that version. Clocks must tick at nearly the same rate;
//     they need not agree on the time.
//   - Every write carries a fresh nonce (NewNonce), so it changes the stored
//     version.
//   - Fencing tokens strictly increase: each acquisition writes the previous
//     token plus one (NextToken), and records are never deleted. A record
//     deleted all the same ends its holder's term at its next renewal
//     (lease.ErrLost), and no contender writes a token at or below the
//     highest it has read or written (Highest), so a record created anew
//     continues the count of every running process; a process started
//     after the delete starts from what it reads.
//   - A write whose outcome is unknown is resolved by reading the record
//     back (ReadBack, SameWrite), never by guessing.
//   - A record that leasehold did not write is reported as lease.ErrCorrupt
//     (Check, DecodeJSON) and never taken over.
//   - A store that can be checked for keeping the contract (conditional
//     writes whose condition fails are refused) is checked before the first
//     write: a driver that can do so implements Verifier, with one call of
//     VerifyStore, which runs Probe on a probe key beside the lease's
//     (KEY.leasehold-probe, ProbeSuffix) once per store and process, and
//     a store that fails twice in a row is refused with
//     lease.ErrUnsafeStore naming the step it failed.
//
// A backend on a store's native lease (Azure Blob) implements lease.Lease
// itself, and uses the same helpers for the rules it shares with the
// engine: CheckTerm, NextToken, Highest, NewNonce, SameWrite, ReadBack,
// LostTo.
// Every backend bounds each request with Call and maps its SDK's errors to
// package lease's sentinels (and ErrConflict) once.
package driver
