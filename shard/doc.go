// Package shard shares N shards among the workers of a group, each shard
// run by at most one worker at any instant, on the same storage services
// and with the same clock-free safety argument as package lease. A Worker
// joins a group (a key prefix in a Store), keeps its liveness, and runs
// Config.Run once for every shard the group's assignment gives it, with a
// context cancelled when the shard is revoked, when the worker's liveness
// ends, or when the worker stops.
//
// # What it guarantees
//
// With N the shards and M the live workers:
//
//   - At most one worker runs a shard at any instant, assuming only that
//     clocks tick at nearly the same rate, and that each Config.Run stops
//     when its context is cancelled (as the runner assumes of its task).
//   - Every start of a shard carries an epoch (Shard.Epoch) strictly greater
//     than that of every earlier start of it, on any worker: a fencing token,
//     as a lease's token is.
//   - A worker starts a shard only after its previous owner has stopped it
//     and said so, or after the previous owner's liveness was judged
//     expired by rule 2 (the same version of its liveness record, unchanged,
//     for a full TTL on the judge's own clock). A worker that cannot renew its
//     liveness stops all its shards at sent + RenewDeadline. Nobody steals.
//   - Balance: once settled, every live worker runs ⌊N/M⌋ or ⌈N/M⌉
//     shards. Sticky: a shard moves only when balance requires it, and a
//     join or a leave moves the fewest shards that balance needs; a worker
//     that restarts under the same identity within a TTL of its crash
//     gets its earlier shards back, about a TTL after the restart: it finds
//     its earlier term's liveness still held, says so (Restarting, in that
//     term's acknowledgement), and the assigner keeps that term's shards
//     for it, for at most a TTL after the term expired, instead of giving
//     them to others. A new term reads the assignment eight times per
//     renew interval until one names it (for at most two intervals), so a
//     joining or restarted worker starts its shards soon after the
//     assigner gives them.
//   - A worker that leaves (its context ends: SIGTERM, scale-in) stops its
//     shards, says so, and they start elsewhere within about a renew
//     interval, not a TTL. A worker that crashes has its shards started
//     elsewhere about a TTL after its last renewal; so has the assigner,
//     whose successor knows at once that its shards have stopped (see
//     below), instead of counting a TTL of its own.
//   - Presence apart from ownership: a worker counts for balance from its
//     first heartbeat, owning shards or not. The member list is a listing
//     of the store, used only when complete (a listing that fails decides
//     nothing).
//   - Cost set by the workers, not the shards: in steady state each worker
//     renews its liveness (one write) and reads the assignment (one
//     conditional read, answered "unchanged") per renew interval, whatever
//     N is, and its own acknowledgement every fourth interval (another
//     conditional read), plus two reads of the assigner's lease if it
//     campaigns to be the assigner (Config.NoAssigner). Shard records are
//     written only when ownership changes. Only the assigner lists, three
//     times per renew interval. Per worker and hour, at the default TTL of
//     15 s (a renew interval of 5.6 s): 640 writes and 800 to 2,080 reads
//     (on Azure Blob 1,280 writes: a renewal and the metadata write that
//     shows it).
//
// A group's N is fixed: a worker whose Shards differ from the group's gets
// an error naming the field, not a reshuffle. So are its TTL and renew
// interval, which the assigner uses to judge every worker's liveness.
//
// # Design
//
// The group's keys (see Store):
//
//   - GROUP/members/ID: each worker's liveness, an ordinary lease.Lease
//     record that the worker holds and renews with a runner.Runner, whose
//     task is the worker's membership: one liveness term (its token k) is
//     one membership, and the runner's deadline ends every shard of it.
//   - GROUP/assigner: the lease of the group's one assigner, elected by an
//     ordinary runner among the workers that campaign. A worker campaigns
//     within each liveness term, and its assigner term is bound to that
//     liveness term: when the assigner term ends, for whatever reason, the
//     liveness term ends with it, its shards stopped before the assigner
//     lease is released. Every renewal and the release of the assigner
//     lease write that liveness term (identity and token) in the record's
//     annotation shard/term (runner.Config.Annotate).
//   - GROUP/assignment: one object, written only by the assigner and only
//     when ownership changes: for every shard, its owner as a worker term
//     (identity and liveness token), whether the owner is releasing it, and
//     its epoch; the group's N, TTL and renew interval; and Gen, the
//     assigner's token in its high 32 bits and a count of its writes in the
//     low, so that Gen strictly increases across assigners. A shard's epoch
//     is the Gen of the assignment that gave it to its owner. It is binary,
//     about 7 bytes a shard: 70 kB for 10,000 shards.
//   - GROUP/acks/ID: each worker's acknowledgement, written only when
//     ownership changes: when a term begins (hello, with its token), after
//     it stopped the shards an assignment took from it or applied a fence
//     (applied: that Gen), and when it ends (left). The assigner writes
//     left for a term it judged dead (below) whose acknowledgement does
//     not say so: once per term that ended without leaving, so that later
//     assigners do not wait for it.
//
// The assigner lists GROUP/ every third of a renew interval, and once
// more at the moment a worker that owns shards and has missed a renewal
// can be judged expired. Before that moment it writes the assignment again,
// ownership unchanged, with Expect: when it will free that worker's
// shards, on the wall clock. Every worker reads the assignment a tenth of
// a renew interval after Expect (up to three times, until it changed) as
// well as every renew interval, so the shards of a crashed worker start
// elsewhere about a TTL after its last renewal, not up to a renew interval
// later. That costs one write and one listing per crash, and up to three
// reads per worker; a wrong wall clock costs time, never safety, since
// Expect only times reads. The listing
// gives every member's liveness version, from which it judges expiry by
// rule 2 for all workers at once, and every acknowledgement's version, of
// which it reads only those that changed, and only until the next listing
// is due (the rest in later rounds), so that slow reads never leave more
// than a renew interval between two listings, which would restart every
// count. A worker counts for balance while its liveness key shows a new
// version within a TTL and its latest term said hello and has not left. It plans (see below) and writes
// the assignment when it differs. A move is two assignments: the first
// marks the shard releasing by its owner; the owner, reading it, cancels
// the shard's context, waits for Run to return, and acknowledges; the
// assigner, seeing the acknowledgement, gives the shard to its new owner
// in the next assignment, with a new epoch; the new owner starts it when
// it reads that. A shard of a worker that left, or whose liveness expired,
// or whose worker began a later term, is free at once.
//
// The plan keeps every owner it can. It frees the shards of dead terms and
// the acknowledged releases, gives the ⌈N/M⌉ shares to the live workers
// that own most, marks each worker's excess over its share releasing, and
// gives free shards to workers under their share, a worker's own earlier
// shards first. Those are the fewest moves balance needs.
//
// Each worker reads the assignment every renew interval, with the version
// it holds (a 304 when unchanged), and applies an assignment only when its
// Gen is greater than every one it applied: it stops what the assignment
// no longer gives its term, acknowledges when asked, then starts what it
// gives. A shard whose Run returned by itself stays the worker's and is
// not started again until it is assigned anew (Ended). Every fourth
// interval a worker also reads its own acknowledgement, asking for it only
// if it changed, and writes its latest one again if it did: a restore can
// put an earlier one back before the assigner read the latest, and the
// assigner would wait for an acknowledgement it never saw.
//
// A new assigner does not know which shards run where: the assignment it
// reads may be older than the last one written (a restore). So its first
// write is a fence: the owners it read, every epoch set to its own first
// Gen. A worker that reads a fence stops whatever the fence does not give
// it, starts nothing, and acknowledges. The assigner plans nothing until
// every worker it knows of, whose liveness has not expired, has
// acknowledged the fence or left; after that every running shard runs
// where the fence says, and its next assignment (never a fence, even when
// nobody moves) lets the shards the fence gives to workers that do not run
// them start, with the fence's epoch, greater than every earlier one.
// Until the fence is acknowledged it lists twice as often, and every
// campaigning worker that sees the assigner change (on its reads of the
// assigner lease) reads the assignment eight times per renew interval
// until it has applied the new assigner's first assignment after its
// fence, so a change of assigner costs a few reads, not a renew interval.
// A new assigner also reads, from the lease record it took over, the
// liveness term of the assigner before it (shard/term): that term has
// ended, so it frees its shards at once and waits for no acknowledgement
// from it; the old assigner's crash costs about a TTL, as any worker's
// does, not a TTL for the takeover and another for its own count.
//
// # Why two workers never run one shard at once
//
// Write t for a worker term: a worker's identity with the token of one of
// its liveness terms. A term starts a shard s only on reading an
// assignment that gives s to t (not releasing), and only from its runner's
// task: every shard context of t is cancelled when that task's is, which the
// runner does at sent + RenewDeadline and when the liveness lease is lost,
// so t runs no shard after its liveness term could have lapsed (rule 3).
//
// The assigner gives s to a term t' only while s is free in its own state,
// which it writes in Gen order and conditionally on the version it wrote
// last. s becomes free from its owner t in one of four ways, each of which
// means t has stopped s and will not start it again unless a later
// assignment gives it to t anew:
//
//  1. t acknowledged an assignment at or after the one that marked s
//     releasing. t writes that acknowledgement only after every shard that
//     assignment took from it has returned, and t ignores every assignment
//     older than one it applied, so it never reads s as its own again from
//     an older one. The chain stop → acknowledgement written → listed and
//     read by the assigner → assignment written → read by t' → t' starts
//     is causal: no clock is involved.
//  2. t's acknowledgement says it left: written by t after all its shards
//     returned, t starting nothing afterwards; or written for t by an
//     assigner that had judged t dead by 3, 4 or 5 (bury), which stays true.
//     A restore that takes the mark away only makes an assigner wait.
//  3. An acknowledgement of a later term of the same worker exists: that
//     term's liveness lease was acquired, which the lease contract allows
//     only after t's term was released (after t's task, and every shard of
//     it, returned) or judged lapsed on the new term's own clock, by which
//     time t had stopped (lease/driver's argument).
//  4. The assigner judged t's liveness record expired by rule 2 on its
//     listings, which are reads in the sense of lease/driver's argument: a
//     listing shows each key's version as of an instant between its sending
//     and its return (see Store), and a run is broken by a listing that
//     fails or that returns more than the renew interval R after the
//     previous one was sent. Word for word as there, with the listing for the
//     follower's reads: if the record stayed at one version V from the
//     listing that first showed it (e1) for a TTL T, any write of t between
//     was hidden by a restore, t's next renewal after a restore ends its
//     term, and t stopped by e1 + R + RenewDeadline ≤ e1 + T. A later term
//     of the same worker would have written a version of its own, breaking
//     the run. A key that vanished counts as a version too (absent): t's
//     next renewal finds it gone and stops. This needs every renewal of t
//     to change the version, or to fail: true of every compare-and-swap
//     store, and of Azure's native leases, whose renewals write the record
//     under the lease and fail when that write fails (lease.RenewalsShow).
//     Run refuses a store whose leases' renewals do not show
//     (lease.ErrUnsafeStore). Who judges the lease itself (the store, on
//     Azure) does not enter the argument.
//  5. t is the liveness term named in the assigner lease's record when
//     this assigner won the lease. Only t's own assigner terms write t in
//     that annotation (a later acquisition carries it over until its
//     first renewal), so some assigner term of t held the lease before
//     this one won it; by the lease contract that term had ended, released
//     or judged lapsed on the winner's own clock, before then. An assigner
//     term of t ends t with it: the runner cancels its task at sent +
//     RenewDeadline or when the lease is lost (rule 3), and that
//     cancellation cancels t's every shard at once (context.AfterFunc),
//     and the lease is released only after t's shards returned. So t had
//     stopped every shard, and starts none, by the time this assigner won.
//     A restore of the lease record changes nothing: the annotation it
//     brings back names a term that has ended too, and the holder hidden by
//     the restore loses its lease at its next renewal, its liveness term
//     with it. The simulation restores the record under a live assigner,
//     and hangs the calls of its assigner lease alone while its liveness
//     renews; each sees two owners when the liveness term does not end
//     with the assigner term.
//
// So at the instant t' starts s, t has stopped it. Epochs increase
// because a term is given s at a Gen greater than every earlier Gen, which
// becomes its epoch, and starts s at most once per grant; a fence's epoch
// is greater than every Gen an earlier assigner wrote, since assigner
// tokens increase.
//
// Lost answers and restores:
//
//   - An assignment write whose answer is lost: the assigner keeps its
//     decisions (they were true when made) and writes nothing more until a
//     listing shows the stored version; it reads that object, and if it is
//     not its own write it writes its current assignment again with a new
//     Gen. Writes are conditional on the version it last saw, so a late
//     write never lands over a newer one. An acknowledgement whose answer
//     is lost is read back, and written again until it is stored.
//   - A restore of an earlier assignment of the current assigner: workers
//     that applied a later one ignore it (its Gen is lower). A worker that
//     had not may start a shard it gives it: the assigner gave it that shard
//     at that Gen, and has given it to no one since without first seeing
//     this term acknowledge a later assignment, which it cannot have done
//     without applying it. The assigner sees the version change at its next
//     listing and writes its own assignment again, with a new Gen.
//   - A restore of an acknowledgement: every acknowledgement states
//     something that stays true of its term, and the assigner merges what
//     it has seen of each worker, so an older one takes nothing away. One
//     that hides the latest before the assigner read it delays the
//     assigner, never misleads it: the worker writes its latest again at
//     its next check.
//   - A restore of a liveness record: lease/driver's argument, as above.
//   - A restore of an assignment written by an earlier assigner, read by a
//     new one: the fence. Its limit is the engine's: a worker term that the
//     new assigner cannot know of (its liveness key deleted before the new
//     assigner first listed, while its old shards run until its next
//     renewal fails) is not waited for; nor is a later term of the previous
//     assigner's worker whose hello a restore of its acknowledgement hid,
//     when the assignment restored is also one that does not name it (two
//     restores at once, across the change of assigner). A restore across a change of
//     assigner also moves more shards than the minimum, since the fence
//     stops what the old assignment does not give.
//
// # What it does not do yet
//
// The shard layer runs on memlease (memlease.Objects), S3
// (s3lease.Objects), Cloud Storage (gcslease.Objects), DynamoDB
// (dynamolease.Objects) and Azure Blob (azurelease.Objects), each of
// which passes the conformance suite shard/shardtest; OpenStore opens any
// of them from a group's URL (mem://, s3://, gs://, dynamodb://,
// azblob://), and judges liveness on each of them the same way, by rule 2
// on listed versions. A store whose leases' renewals do not change the
// version (lease.RenewalsShow false) is refused with lease.ErrUnsafeStore.
// Per-shard health checks are to come. Metrics are the caller's, from
// OnEvent, OnSettled and OnRenew (leasehold run --shards exports them to
// Prometheus). Logs go to Config.Logger (slog) already; the
// health check and stall watchdog are the runner's, applied to the whole
// worker's liveness.
//
// The simulation in this package's tests checks the guarantees above
// against an oracle that sees every start and end of every shard: a
// scenario (TestSimulation; LEASEHOLD_SHARD_SIM=large for 10,000 shards
// over 1,000 workers), and seeded schedules of faults on small fleets
// (TestRandomFaults: 100 seeds in go test, 1,000 in scripts/test,
// LEASEHOLD_SHARD_SIM_SEEDS for more; -seed N replays one). Beside
// crashes, partitions, slow, failed and lost calls, and restores and
// deletes of every object, its faults are the assigner's worker leaving,
// or failing its health checks, while its shards take longer than TTL − R
// to stop; shards run as leasehold run --shards runs a command that
// ignores SIGTERM, until the CLI's kill deadline; the assigner lease's
// calls hanging, or its record restored, while its liveness renews; a
// worker killed, its liveness record deleted, and started again within a
// TTL; the assignment kept in parts, as DynamoDB keeps a large object, so
// that a restored head names deleted parts; around a change of assigner, a
// worker cut off, its liveness record deleted and an old assignment
// restored; and listings slower than the
// TTL's margin over RenewInterval + RenewDeadline, with a renewal hidden by
// a restore. Every random choice of a run is drawn from its seed, the
// runners' jitter included (Config.Rand), and every call to the store
// takes a latency hashed from it, so that no two goroutines meet at one
// instant of the fake clock: a failing seed replays, and -seed N shrinks
// its schedule to the faults the failure needs.
package shard
