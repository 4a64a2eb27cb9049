// Package leasetest is the conformance suite that every lease backend runs,
// unchanged. A backend that passes it guarantees, through the portable API
// and the sentinel errors of package lease alone, that:
//
//   - a free lease is acquired with a fencing token of at least 1, and a
//     second contender (even one with the same identity) is refused with
//     lease.ErrHeld and a *lease.HeldError naming the holder and its token;
//   - a holder that keeps renewing is never deposed, and a renewal keeps the
//     token and moves Term.Sent forward;
//   - a holder that stops renewing is taken over, but not before half a TTL
//     after its last write, and within a TTL and a margin of the
//     contender's first look; where the contender judges expiry
//     (Lease.Judge is lease.JudgedByContender: compare-and-swap stores) not
//     before a full TTL after the contender's first sight of the record, so
//     expiry counts from first sight, never from the record's age, every
//     write changes the record's Version, every record carries its
//     holder's renew interval, and a gap between reads longer than it
//     starts the count again;
//   - a term a Lease's own Acquire returned is refused to a second Acquire
//     on that same Lease, naming the holder, and goes on;
//   - a deposed holder's Renew and Release fail with lease.ErrLost and leave
//     the new holder's term untouched;
//   - a released lease is acquired at once by the next contender;
//   - when N contenders race, exactly one term is issued per round, and
//     fencing tokens strictly increase across acquisitions, releases and
//     takeovers;
//   - a cancelled context makes every method return an error matching
//     context.Canceled and changes nothing;
//   - an object at the lease's key that leasehold did not write is reported
//     as lease.ErrCorrupt and never taken over, however long it sits there;
//   - with the harness deleting the record (it must implement Deleter): a
//     holder whose record is deleted finds its term lost (lease.ErrLost) at
//     its next renewal, a contender that saw the record held creates it
//     anew only after it has been gone the record's TTL (where contenders
//     judge expiry), and a contender that has seen token n writes a token
//     greater than n on the record created anew.
//
// It does not test how a backend resolves unknown outcomes (lost responses,
// timeouts): those depend on the engine and are tested with memlease's fault
// hooks in package lease/driver's own tests.
//
// A backend's test builds a Harness and calls RunConformanceTests:
//
//	func TestConformance(t *testing.T) {
//		leasetest.RunConformanceTests(t, leasetest.Config{
//			NewHarness: func(t *testing.T) leasetest.Harness { return newHarness(t) },
//			TTL:        2 * time.Second,
//		})
//	}
//
// The suite asks one lease of the backend for its Judge, and adds the
// properties of contender-judged expiry when it is lease.JudgedByContender.
//
// With FakeTime set, each subtest runs inside a testing/synctest bubble, so
// the suite's TTL waits take no real time; that suits in-memory backends
// only, as network I/O cannot run inside a bubble. Without it, subtests run
// in parallel in real time against a server (an emulator on loopback, or a
// cloud account); each waits a few TTLs, so choose the shortest TTL the
// backend allows. They spend that time waiting, not computing, but go test
// runs only -parallel of them at once (GOMAXPROCS by default): on a small
// machine, a backend with a long minimum TTL raises -parallel in its
// TestMain when it was not given (lease/azurelease does: with Azure's 15s,
// the suite takes about three TTLs instead of ten). Every subtest uses a
// lease name of its own, unique across runs, so state left on a server by
// earlier runs cannot interfere.
//
// CheckCallsGranted checks a backend's driver.Store against the requests
// the backend sends, recorded by the backend's test: every call a lease
// makes is allowed by a grant the Store declares, and every grant is
// called, so the permissions leasehold help prints and the Terraform
// modules grant are enough and no more.
package leasetest
