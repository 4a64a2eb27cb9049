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
//     version, unchanged, for the holder's full TTL, over an unbroken run
//     of reads, and only by a write conditional on that version. Clocks
//     must tick at nearly the same rate; they need not agree on the time.
//     The argument is below.
//   - Every write carries a fresh nonce (NewNonce), so it changes the stored
//     version.
//   - Fencing tokens strictly increase: each acquisition writes one more
//     than the greater of the previous token and the highest its Lease has
//     read or tried to write (NextToken, Highest), and records are never
//     deleted. A write that failed may have landed, so its token is never
//     written again (a gap in the tokens, not a repeat). A record
//     deleted all the same ends its holder's term at its next renewal
//     (lease.ErrLost), and no contender writes a token at or below the
//     highest it has read or tried to write, so a record created anew
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
//     lease.ErrUnsafeStore naming the step it failed. Probe writes over
//     no record but its own kind (released, token 1, ProbeHolder), and a
//     driver refuses at Open a lease key that ends with ProbeSuffix
//     (CheckProbeKey), so no probe writes over a lease.
//
// Every backend's URL openers (lease.URLOpener, ObjectsOpener) read the
// URL's query with Query, which refuses a pair that does not parse (where
// url.URL.Query drops it), a parameter the backend does not know and one
// given twice, naming the parameter.
//
// Every backend describes its store with a Store, registered with
// RegisterStore beside its lease.Register: who judges expiry, how the store
// is probed, the grants of least privilege its calls need (the probe's
// included) and its price labels; leasehold check and help, and the
// Terraform modules' tests, read it rather than keep tables by scheme.
//
// A backend on a store's native lease (Azure Blob) implements lease.Lease
// itself, and uses the same helpers for the rules it shares with the
// engine: CheckTerm, NextToken, Highest, NewNonce, SameWrite, ReadBack,
// LostTo.
// Every backend bounds each request with Call and maps its SDK's errors to
// package lease's sentinels (and ErrConflict) once.
//
// # Why a follower never takes over a live holder
//
// Versions can repeat: an S3 ETag is the MD5 of the body, and a restore or
// a replayed object brings an earlier body, and its version, back. So a
// version seen twice does not prove that nothing was written between. The
// rules, with R the holder's renew interval (written in every record,
// lease.Record.RenewInterval), D its renew deadline and T its TTL, and
// R + D <= T (the runner refuses more):
//
//  1. The follower counts a version V from the moment the first read of an
//     unbroken run returned it (e1); the run is broken by a read that
//     fails, by a read that returns more than R after the previous one was
//     sent, and by a record whose token is below one this Lease has seen.
//     It takes over only by a write conditional on V, at e1 + T or later.
//  2. The holder sends a renewal R after the previous one returned, so two
//     successful writes of a term are applied at least R apart; its term
//     counts from when a renewal was sent, or from when it was due (the
//     previous one's sending plus R), whichever is earlier; it stops acting
//     as leader D after that, on a timer that fires even while a call
//     hangs.
//  3. A renewal whose condition fails and whose read-back shows an earlier
//     write of its own term (not its latest successful write, nor one whose
//     answer was lost since) ends the term: the record was put back.
//
// Suppose the follower's reads all returned V from e1 to its takeover, and
// the holder wrote in between. Every such write was hidden by a restore
// of V before the follower's next read. After a restore the holder's next
// write conflicts and, by 3, ends its term, so its hidden writes follow
// each other without a restore between, and all lie between two
// consecutive reads of the follower, which are less than R apart (1): by
// 2, that is at most one successful write, W, sent no later than one
// renew interval after the holder's previous successful write W0. W0 was
// applied before the follower's first read returned V (V is a body of the
// holder's term, written after W0 or being W0), so W0 was sent before e1,
// W counts from no later than e1 + R, and the holder stops by e1 + R + D
// <= e1 + T: before the follower can take over. That is the narrowest
// case too: a restore that lands between two successful reads, just after
// the holder's write, while the holder's next renewal hangs.
//
// The argument assumes that a restore the holder's next write does not
// meet is not undone: three restores back to back, the second putting the
// holder's own hidden write back just before its next renewal (which then
// lands on it, as in 3 it cannot tell), the third hiding both, leave a
// follower two hidden writes (red team 11's
// TestRedteam11RestoreUndoneHidesTwoRenewals, build tag redteam11open).
// No design that reads only the object tells that apart; a restore from
// backup is one restore, and the simulation's restores are each one.
//
// A record that vanishes is a change as well: a contender that saw it held
// creates it anew only after it has stayed absent for its TTL, counted the
// same way; the holder's next renewal finds it gone and stops. A released
// record, or one of another term, put back under a live holder cannot be
// told by a contender that never saw the newer record: the holder learns
// it at its next renewal, and the seeded simulation (package sim) restores
// only bodies of the current term for that reason. A handoff's record
// (lease.Handoffer) is such a record for its successor, which takes it at
// once as others take a released one: put back under a later holder, it
// is taken by a successor that never saw the later term (red team 27,
// TestRedTeam27RestoredHandoffUnderALiveHolder, build tag redteam27open),
// while every other contender waits it out as a held record. A term that
// ended by a handoff instead of a release narrows that exposure, from
// every contender to one.
package driver
