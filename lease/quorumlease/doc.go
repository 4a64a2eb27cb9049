// Package quorumlease is a lease held on a majority of independent member
// leases: three or five buckets, tables or containers, in different
// regions or clouds, any backends mixed. Its leader outlives the outage of
// any minority of them (a store, a region, a cloud), with no leaderless
// instant, and steps down, as on a single store, only when a majority is
// out of its reach. It is a lease.Lease, so package runner, RunOnce
// (periods, done marks, minimum holds) and leasehold run use it unchanged.
//
// # Opening one
//
// From a URL, "quorum:" and the members' URLs joined by commas (a comma
// inside a member's URL is written %2C), with lease.Open (which knows the
// scheme once this package is imported) or OpenURL:
//
//	quorum:s3://jobs-use1/nightly?region=us-east-1,s3://jobs-euw1/nightly?region=eu-west-1,s3://jobs-aps1/nightly?region=ap-south-1
//	quorum:s3://jobs/nightly,dynamodb://leases/nightly,gs://jobs/nightly
//
// From Go, with New over leases opened for one contender with the same
// lease.Options. Every contender must list the same members in the same
// order: the order decides which of several contenders that start
// together goes on (see below). Open refuses, naming the member, an even
// number of members or fewer than three, a member that is a quorum, and
// two URLs that name one store's key; New refuses members opened with
// different options (one TTL for all). Two members that turn out to hold
// one record (two spellings of one bucket, or a bucket and its replica)
// are refused when first read, by the record's nonce, which every write
// draws afresh. A quorum given its members' names (from a URL, or New's
// names) writes a digest of its list into every member's record
// ("quorum/members"), and Acquire refuses with lease.ErrInvalid, naming
// it, a member another contender holds over another list or order: two
// lists can have majorities that share no member. A record released or
// lapsed is taken over whatever list wrote it, so that the members can be
// changed once every contender over the old list has stopped.
//
// # Why at most one leader
//
// A contender leads only while it holds a term on a majority of the
// members, each member judged by its own rules: on compare-and-swap stores
// by the contender, clock-free, after watching a record unchanged for its
// holder's TTL; on Azure by the store. Its quorum Term's Sent is the m-th
// latest Sent of its member terms (m the majority), so until Sent plus the
// TTL at least m of its member terms are live, each of which the member
// keeps from every other contender until its own Sent plus the TTL. A
// second leader would hold m members at the same instant; any two
// majorities of n share a member; so one member would be held by two
// contenders at once, which that member's contract forbids. The runner
// steps down at Sent plus RenewDeadline, as on any lease.
//
// One member's contract rests on its holder's writes landing at least a
// renew interval apart (lease/driver's rule 2: a follower's reads, no
// further apart, then miss at most one write hidden by a restore). A
// renewal does not wait for a member slower than its majority, so that
// member's write lands late, and the next renewal's may land less than a
// renew interval after it (red team 21's RT21-2, open). A restore of that
// member could then hide two writes from a follower, which takes the
// member over while the holder still counts it. A second leader then
// needs another member of the holder's majority too: either one whose
// record is also restored, or, with the holder's majority down to that
// member and one more, a third member cut off from the holder and taken
// by the follower. That is a restore and an outage at once, of two of
// three members: more than the minority whose restores, deletes and
// outages a quorum survives (below), and beyond the seeded simulation's
// fault modes, which found no such schedule.
//
// # Why tokens increase
//
// The quorum's fencing token is its own: each member's record carries it
// in an annotation ("quorum/token"), whatever the member's own counter
// says (the members' counters differ, and a replaced member starts
// again). A contender that takes a majority writes a token greater than
// every quorum token it has read, in those members and any other record,
// and in any earlier term of its own, to every member it holds, and leads
// only once a majority took it. Every earlier leader wrote its token to a
// majority before it led, and a member's record carries its annotations
// over from write to write (a takeover, a release, a break keep them), so
// the new majority shares a member with each earlier one and reads a
// token at least as great: every leader's token is greater than every
// earlier leader's.
//
// A record restored from a backup, or deleted, loses what was written to
// it since. A leader writes its token to every member it holds, all n
// when all are up, so a token is lost only when the restores, deletes and
// outages of its term's members add up to more than a minority (one of
// three, two of five); the runner's process also never writes a token at
// or below one it has seen (safety rule 10).
//
// # Taking the members, and no livelock
//
// A follower reads every member each time it tries (n reads, as n single
// leases cost), so that its judgement of each member's expiry runs, and
// waits for every read, however slow, except a member whose latest read
// had no answer within CallTimeout (a store that hangs), less than a
// renew interval ago: its reads go on without being waited for, until one
// answers, so that a hung member costs a follower one CallTimeout, not one
// at every attempt (a contender that has not read it for longer, as after
// leading, waits for it once again). When
// another contender holds a majority, it writes nothing. Otherwise it
// takes the lowest member in the members' order that it can reach, and
// only once it holds that one, every other free member at once: of
// several contenders that start together, the one that takes the first
// member reachable is the only one to go on, and the others give back
// what they took on the way. A member whose holder's term is ending (the
// same holder's record of the same quorum token read released, or lapsed,
// on another member), and which lapses within a renew interval, is passed
// over in that order: a crashed holder's last write lands last on its
// slowest member, which a follower then sees last and judges lapsed last,
// and waiting for it put a follower's takeover half a renew interval
// late. A member just taken is not passed over, though the records its
// contender gave back earlier may show the same holder and token
// released: a campaign carries the token of the records it took over. A contender that holds a minority while
// another holds a member keeps it at most a TTL, and then gives it back,
// so two contenders that each hold some never wait each other out.
//
// # Liveness across a minority's outage
//
// The holder renews every member it holds at once and succeeds when a
// majority took the renewal; a member that is down, slow or partitioned
// from it costs nothing but that member's share: a renewal (or a new
// leader's token's write) returns as soon as a majority took it, and the
// calls still running go on in the background, until CallTimeout after it
// began, their outcomes counted when they come. A member that hangs does
// not hold a renewal up at all, and one slower than the others, up and
// answering, is renewed and taken back at its own pace (Release, Keep,
// Break and Acquire wait for those calls first). Each renewal also tries
// to take back every member it does not hold (a read, until the member's
// own rules let it take its record again). A member's rules count a
// record's expiry only over reads no further apart than its holder's renew
// interval, and renewals are further apart than that, so between them the
// runner calls Idle (lease.Idler), which reads those members every half
// renew interval: a member that returns is held again within about a TTL
// (under runner, also through a minimum hold; a caller that renews by
// hand calls Idle between its renewals, or its members stay out once
// calls take any time). Renew returns lease.ErrLost only when so many
// members were lost or are held by others that no majority is left.
//
// # The record
//
// Observe reads every member and returns the quorum's record: held by the
// contender that holds a majority with one quorum token; released when a
// majority are free; otherwise as the latest quorum term left it. Its
// Version is the quorum token and the greatest count of that term's
// writes that a majority reached, each member by that write or a later
// one ("7.41", "7.42r" released, "7.40?" held by no majority), and its
// annotations are that write's, not a later one's that fewer took; so it
// changes when, and only when, a majority took writes sent since: a
// runner that reads it after a renewal whose answer was lost may count
// the renewal as landed, and what the record carries as written, as on
// one store.
//
// Judge is lease.JudgedByStore only when a majority of the members judge
// expiry themselves (Azure), since only then could a contender take a
// majority at its first look. The Lease is a lease.Breaker (leasehold
// break breaks the term on every member, keeping each record's quorum
// token) and a lease.Watcher, and a lease.Keeper and a lease.Handoffer
// when a majority of its members are both (compare-and-swap stores: a
// minimum hold, a handoff to a named contender, which takes the majority
// handed to it at once while every other contender sees it held).
//
// # Cost
//
// A holder writes to every member each renewal and a follower reads every
// member each time it tries: n times a single lease's requests. A member
// the holder does not hold costs it a read per renewal.
package quorumlease
