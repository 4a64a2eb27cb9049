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
//     when its context is cancelled, or, if it needs time to stop, returns
//     by runner.Expiry of its context: the earliest instant a lease the
//     shard rests on may be someone else's (as the runner assumes of its
//     task; leasehold run kills a shard's command by then).
//   - Every start of a shard carries an epoch (Shard.Epoch) strictly greater
//     than that of every earlier start of it, on any worker: a fencing token,
//     as a lease's token is.
//   - A worker starts a shard only after its previous owner has stopped it
//     and said so, or after the previous owner's liveness was judged
//     expired by rule 2 (the same version of its liveness record, unchanged,
//     for a full TTL on the judge's own clock). A worker that cannot renew its
//     liveness stops all its shards at sent + RenewDeadline, and so does
//     the assigner's worker that cannot renew its assigner lease. Nobody
//     steals.
//   - Balance: once settled, every live worker runs ⌊N/M⌋ or ⌈N/M⌉
//     shards; under a cap C (Config.MaxPerWorker), N' = min(N, M·C) shards
//     run, ⌊N'/M⌋ or ⌈N'/M⌉ on each live worker and never more than C on
//     one, the other N − N' nowhere until a worker comes. Sticky: a shard moves only when balance requires it, and a
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
//     interval, not a TTL. With DrainTimeout, its leases stay renewed
//     while its shards' functions return (the assigner's worker keeps its
//     assigner lease so, as it keeps its liveness), so none starts
//     elsewhere before its function returned. A worker that crashes has
//     its shards started elsewhere about a TTL after its last renewal; so
//     has the assigner, whose successor knows at once that its shards have
//     stopped (see below), instead of counting a TTL of its own.
//   - Presence apart from ownership: a worker counts for balance from its
//     first heartbeat, owning shards or not. The member list is a listing
//     of the store, used only when complete (a listing that fails decides
//     nothing).
//   - Cost set by the workers, not the shards (SteadyRequests; a worker
//     campaigns unless Config.NoAssigner). Cost per instance, whatever N is,
//     with R the renew interval: 1 write per R (its liveness lease's renewal)
//     and 1.25 reads (the assignment, answered "unchanged" unless it changed,
//     and its own acknowledgement every fourth time), plus 2 reads per R
//     while it campaigns to be the group's assigner; the assigner's instance
//     renews the assigner lease too (2 writes per R), and lists the group 3
//     times per R. On Azure Blob every renewal is two writes (the renewal,
//     and the metadata write that shows it). Per hour at the default TTL
//     (15s, R 5.625s): each instance 640 writes (1,280 on Azure Blob) and 800
//     to 2,080 reads, the assigner's 1,280 writes (2,560 on Azure Blob), 800
//     reads and 1,920 listings. Shard records are written only when ownership
//     changes.
//
// A group's N is fixed: a worker whose Shards differ from the group's gets
// an error naming the field, not a reshuffle; so is its cap. So are its TTL and renew
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
//     annotation shard/term, and the high half of the term's Gens in
//     shard/gens (runner.Config.Annotate). From the start of
//     an assigner term its worker's shards rest on both leases: a shard's
//     context is a runner.Joint of the two terms, so runner.Expiry of it
//     is the earlier of their expiries; and the assigner lease drains
//     (DrainTimeout) as the liveness does.
//   - GROUP/assignment: one object, written only by the assigner and only
//     when ownership changes: for every shard, its owner as a worker term
//     (identity and term token, below), whether the owner is releasing it, and
//     its epoch; the group's N, TTL and renew interval; and Gen, the
//     assigner term's high half in its high 32 bits (its lease token, or
//     above the high half the lease's record names, shard/gens, and above
//     every Gen the assigner knows of: see below) and a count of its
//     writes in the low, so that Gen strictly increases across assigners.
//     A shard's epoch
//     is the Gen of the assignment that gave it to its owner. It is binary,
//     about 7 bytes a shard: 70 kB for 10,000 shards. A worker reads the
//     fields a later version appends after the last it knows as absent
//     (rule 11; fixtures in testdata/rule11), as it does an
//     acknowledgement's unknown fields.
//   - GROUP/acks/ID: each worker's acknowledgement, written only when
//     ownership changes: when a term begins (hello, with its term token
//     and its liveness token), after
//     it stopped the shards an assignment took from it or applied a fence
//     (applied: that Gen), and when it ends (left); and again when it
//     reads a fence below a Gen it applied (see below). Each carries the
//     highest Gen the worker's process has seen (seen). The assigner writes
//     left for a term it judged dead (below) whose acknowledgement does
//     not say so: once per term that ended without leaving, so that later
//     assigners do not wait for it.
//
// A worker term's token is unique for ever, whatever happens to the
// worker's records: its liveness lease's token, raised above the highest
// term of the worker that its acknowledgement and the assignment name
// when the term begins, in the high 32 bits, and 32 random bits in the
// low. A liveness record deleted (a person "resetting" it, a lifecycle
// rule) makes the worker's next liveness token 1 again: the raise keeps
// its next term above the terms still known, and the random bits keep it
// apart from an earlier term with the same high bits should those records
// have gone too. A record that cannot be read (lease.ErrCorrupt, such as
// an assignment whose DynamoDB head item was restored after its parts
// were deleted) names no term, as one that is gone: no read of it will
// ever succeed, and a term that waited for one would never begin. A term
// that then finds a greater term of its own worker named in the
// assignment, or in its own acknowledgement as stored (read back when a
// write of it is refused, and at its check every fourth interval: a
// restore brought the earlier term's back, or an assigner that read it
// wrote it again as left), which only such a loss allows, ends, and the
// next begins above it, and above every term of its worker that its
// process found so (Worker.termSeen), should no record name it any
// longer: so no term takes an earlier one's shards, or epochs, as its
// own, and the assigner, which takes the greater token for the worker's
// latest term, never keeps shards for a term that no process runs, nor
// waits for one: that term never acknowledges a fence, and its liveness
// never expires while the live term renews the record they share, so a
// new assigner whose fence names neither would wait for ever, nothing
// running anywhere.
//
// So a group's assigner and liveness lease tokens must fit in 31 bits
// (Gens and term tokens stay below 2^63): a worker that takes a lease
// whose token is above 2^31−1, which only a record put there (copied,
// restored, written by a tool) gives, fails with an error naming the
// token, and writes nothing its own decoder would refuse. An assigner
// whose Gens would need a high half above that bound (the lease's
// shard/gens annotation, an assignment's or an acknowledgement's Gen put
// there) writes nothing until its term ends, and logs which records to
// fix: the group's shards stay where they are, as no epoch may repeat
// and no worker need stop.
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
// or whose worker began a later term (see 3 below), is free at once.
//
// The plan keeps every owner it can. It frees the shards of dead terms and
// the acknowledged releases, gives the ⌈N/M⌉ shares to the live workers
// that own most, marks each worker's excess over its share releasing, and
// gives free shards to workers under their share, a worker's own earlier
// shards first. Those are the fewest moves balance needs. Under a cap C
// the shares are of N' = min(N, M·C), and a worker is given a shard only
// while it owns fewer than C, those it is releasing included: its
// releasing shards' functions may still run. With C = 1 each shard is a
// slot: a worker that holds one keeps it, and a slot that comes free (its
// holder left, or its liveness expired) goes to a worker that holds none
// in the next assignment: leasehold run --holders.
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
// it, starts nothing, and acknowledges. The assigner watches every worker
// whose liveness key or acknowledgement it lists, and every owner the
// assignment names, and plans nothing until each of them whose liveness
// has not expired (an absent key counts towards expiry) has acknowledged
// the fence, or left while its liveness record still names the liveness
// term that left (read once per listed version of the key: an
// acknowledgement restored from an earlier term that left would hide a
// later term, which runs shards that a restored assignment does not give
// it). When the assignment it read may not be the latest written (an
// acknowledgement it read before writing the fence says that its worker
// applied a later Gen, or could not be read), the fence also waits until
// the identities that no listing of its term has shown have had no
// liveness key for a TTL of its own count (rule 2, an absent key being a
// version of its own): the later assignment may have given shards to a
// term whose liveness record and acknowledgement were both deleted, which
// nothing the assigner reads names. After that every running shard runs
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
// does, not a TTL for the takeover and another for its own count. A
// record an operator broke (lease.AnnotationBroken) says no such thing:
// its holder runs until its next renewal, and its term is judged as any
// worker's.
//
// # Why two workers never run one shard at once
//
// Write t for a worker term: a worker's identity with the token of one of
// its terms, which no other term of it ever has (see above). A term starts
// a shard s only on reading an
// assignment that gives s to t (not releasing), and only from its runner's
// task: every shard context of t is cancelled when that task's is, which the
// runner does at sent + RenewDeadline and when the liveness lease is lost
// (rule 3), and when an assigner term of t ends, at its own step-down at
// the latest. A shard's function returns by runner.Expiry of its context,
// the earlier of the liveness term's expiry and, from the start of an
// assigner term of t, that term's (runner.Joint): each lease's latest
// renewal's Sent + T - R, or the moment a renewal found it lost. So t runs
// no shard after either lease could have lapsed, including while it
// drains on purpose: a drain renews both leases alike, which moves that
// instant on, and a renewal that fails during a drain makes it final.
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
//  3. An acknowledgement of a later term of the same worker exists (a
//     greater token) that says its liveness lease took over the record
//     that named t (ack.After: every write of a term's liveness record
//     names it, shard/live, from its first renewal on, made at once, and
//     an acquisition carries the annotations of the record it took over):
//     that record was released by t (after t's task, and every shard of
//     it, returned) or judged lapsed on the new term's own clock, by which
//     time the liveness expiry that bounds t's shards had passed
//     (lease/driver's argument); a record the operator broke names no
//     term taken over. This stays true of the later term whatever happens
//     to its records. Or the assigner has read t's worker's liveness
//     record at every version its listings showed, without a break in
//     them, and it has named other terms (or none: gone, another's) for a
//     TTL since the first read after the latest that named t: t's
//     renewals are conditional on the version it wrote, so once a read
//     found another there, every renewal of t since failed (unless a
//     restore put t's back, which the next listing shows and a read finds),
//     and t stopped at its renew deadline, counted from a renewal sent
//     before that read. Neither a later term's token nor its liveness
//     token says that t's record was taken from t: a record deleted gives
//     the next term token 1 again, and a restore brings back an earlier
//     term's acknowledgement, with a greater token, and its liveness
//     record, while t renews its own. The same count ends the latest term
//     the assigner knows of a worker, restored, that no process runs. An
//     acknowledgement says what it likes, and one that no term wrote (a
//     copy from another group, a tool's write) could name a later term
//     with any liveness token: so the assigner takes a term above the ones
//     it knows of a worker as its latest only when the worker's liveness
//     record, read then, is the worker's with a token at least the one
//     that term names, and the decoder refuses acknowledgements that no
//     term writes (tokens past the bounds above). Taken, such a term frees
//     nothing by itself: t keeps its shards until it ends (finding the
//     later term named, and its worker's next term begins above it,
//     taking over t's record) or its record names others for a TTL.
//  4. The assigner judged t's liveness record expired by rule 2 on its
//     listings, which are reads in the sense of lease/driver's argument: a
//     listing shows each key's version as of an instant between its sending
//     and its return (see Store), and a run is broken by a listing that
//     fails or that returns more than the renew interval R after the
//     previous one was sent. Word for word as there, with the listing for the
//     follower's reads: if the record stayed at one version V from the
//     listing that first showed it (e1) for a TTL T, any write of t between
//     was hidden by a restore, t's next renewal after a restore ends its
//     term, and t's last successful renewal was sent at most R after e1, so
//     its shards had returned by that renewal's Sent + T - R ≤ e1 + T (the
//     expiry above, which no assigner lease moves later). A later term
//     of the same worker would have written a version of its own, breaking
//     the run. A key that vanished counts as a version too (absent): t's
//     next renewal finds it gone and stops. A term whose hello the assigner
//     first read after the latest listing was sent may have acquired its
//     liveness after that listing, which showed the version before: the
//     count says nothing of it until the next listing. This needs every renewal of t
//     to change the version, or to fail: true of every compare-and-swap
//     store, and of Azure's native leases, whose renewals write the record
//     under the lease and fail when that write fails (lease.RenewalsShow).
//     Run refuses a store whose leases' renewals do not show
//     (lease.ErrUnsafeStore). Who judges the lease itself (the store, on
//     Azure) does not enter the argument.
//  5. t is the liveness term named in the assigner lease's record when
//     this assigner won the lease. Only t's own assigner terms write t in
//     that annotation (a later acquisition carries it over until its
//     first renewal), so an assigner term a of t held the lease before
//     this one won it, and by the lease contract a had ended by then, in
//     one of two ways. Either a released the lease, which its task does
//     only after t left, every shard of t returned. Or the lease lapsed:
//     the winner saw a's record unchanged for a TTL on its own clock, so
//     a's expiry (its latest renewal's Sent + T - R, or the moment a
//     renewal found it lost, whichever is earlier) had passed
//     (lease/driver's argument), and every
//     shard of t, whose expiry is at most a's from a's start (see above),
//     had returned. Its drain does not weaken this: a's renewals go on,
//     as t's liveness's do, until t's shards have returned or
//     DrainTimeout passed, and a lease it still renews is not won. Either
//     way t ended with a (its shards' contexts cancelled when a's task
//     context was, context.AfterFunc), so it starts none afterwards. So
//     this assigner frees t's shards at once only after the bound of every
//     lease they rested on has passed. A third way, an operator's break
//     (lease.Breaker, leasehold break --force), ends a's lease but not a,
//     which runs until its next renewal finds the lease lost, and t's
//     shards for as long as they take to stop: a record broken is marked
//     so (lease.AnnotationBroken), the acquisition that takes it over
//     carries the mark, and this assigner then takes t as any other term,
//     freed by 2 (t leaves once a has ended) or 4. The mark goes with that
//     acquisition's first renewal; should its holder b crash before it, the
//     next winner counted a TTL of b's record, so the broken term's bound
//     (its last renewal was sent before the break) has passed, and the
//     term named there has ended as above. A restore of the lease record
//     changes nothing: the annotation it brings back names a term that has
//     ended too, and the holder hidden by the restore loses its lease at
//     its next renewal, its liveness term with it, its shards bounded by
//     the moment it was found lost. The simulation restores the record
//     under a live assigner, and hangs the calls of its assigner lease
//     alone while its liveness renews; each sees two owners when the
//     liveness term does not end with the assigner term.
//
// So at the instant t' starts s, t has stopped it. Epochs increase
// because a term is given s at a Gen greater than every earlier Gen, which
// becomes its epoch, and starts s at most once per grant; a fence's epoch
// is greater than every Gen an earlier assigner wrote, since the high
// halves of assigner terms' Gens increase. Their base is the assigner
// lease's token, which increases for every contender that has seen the
// record (rule 10), and a worker campaigns with one Lease of it in all its
// liveness terms, so that its count goes on from term to term. But a
// record deleted, or restored as an earlier holder wrote it, gives a
// process that has not seen the later tokens (one started since, or every
// contender once the record is gone) a token at or below one already
// used. So the high half of a term's Gens is not its token alone: the
// lease's record says the high half of its holder's Gens (the annotation
// shard/gens), and a new assigner's is above the one the record it took
// over says, above that of every Gen its own process read or wrote, and at
// least its token; it writes it in the record, and sees a renewal carrying
// it succeed, before it writes its first Gen. And it knows of Gens the
// record does not (an earlier assigner's whose record was deleted): the
// assignment it read; the Gens that the acknowledgements it read before
// its fence say their workers applied (even one whose term the worker's
// liveness record does not vouch for), and the highest each writer's
// process had read (ack.Seen: every acknowledgement carries it, a hello
// too, so that a worker's next term does not wipe out what the one it
// replaces said). When one of them has a high half at or above its own, it
// ends its term before it writes anything, having noted that Gen in its
// process, so that its worker's next term, and whoever takes the lease
// over from the record it wrote, go above it. Were it to write below, the
// workers that applied the higher Gens would take its fence for a restore
// and never acknowledge it, and shards would start at epochs they had
// started with before (the simulation found both). It reads every acknowledgement
// listed before it writes its fence, however long the reads take (no
// count towards expiry runs yet), and a read that fails leaves the fence
// to a later round, for a TTL: then it writes the fence without the
// acknowledgements it could not read (an object archived by a lifecycle
// rule, reads that hang). An acknowledgement counts for a fence only if
// it names the fence's own Gen, whose low half is random: an earlier
// assigner's fence with the same high half (its lease record deleted, or
// its Gens raised to the same) has another, almost surely (2^-30), so
// that an acknowledgement of it, read late or written again, passes for
// none of this one's, and a worker that applied Gens above the fence says
// so, and the assigner ends its term for the next to write above them.
// Should an unread
// acknowledgement be the only record of an earlier assigner's Gens, its
// worker gone, Gens with their high half may be given again: the limit
// below. A fence whose Gen is equal to one an earlier assigner
// wrote (its Gens raised above its lease's token, and the next assigner
// taking the lease over with the token after it, that Gen's high half) is
// ignored by the workers that applied the earlier one, as not greater,
// and their acknowledgements of that one pass for acknowledgements of the
// fence: the new assigner gives their shards to others while they run
// them (the simulation found it, seed 1677 with the class greater, an
// assigner whose listings were slow fencing before reading them). A
// worker that reads a fence below a
// Gen it applied writes its acknowledgement again, with what its process
// has seen, and an assigner that reads a Gen above its latest in an
// acknowledgement, at or above its high half, ends its term, and the next
// writes a fence above it, so a live worker never holds the group up. The limit: Gens go back only when
// the new assigner can read none of the later ones, because the assigner
// lease's record was deleted or restored as an earlier holder wrote it
// (its shard/gens with it), the assignment and every acknowledgement that
// named them (applied or seen) were deleted or restored to earlier ones,
// its own process never read them, and the workers that applied them are
// gone (crashed, or restarted) or cut off until then; or, equal, when an acknowledgement of an
// earlier assigner's Gen is written only after the new assigner's listing
// before its fence (a call that lands more than a TTL late). Before the
// record said its holder's high half, a loss of the rest alone sufficed
// (shard simulation seeds 982, 2323 and 4196: an assigner that had raised
// its Gens above its token killed, its acknowledgement and the assignment
// deleted, the only other worker that had applied its Gens cut off; the
// next assigner, taking the lease over with the next token, wrote Gens of
// the same high half).
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
//     its next check. One of an earlier term whose token is greater than
//     the live term's (its records were lost before the live term began:
//     see above) makes the assigner take that term for the latest; the
//     live term finds it at its next write or check and ends, so that its
//     next term begins above it. Until then the live term may run its
//     shards, and a second restore may put its own acknowledgement back,
//     leaving it nothing to find: so the assigner frees a term's shards on
//     account of a later term of its worker only when that term's liveness
//     lease took over the record that named it (ack.After: it had
//     released it after its shards returned, or its lease was judged
//     expired), or when the liveness record, which names the term that
//     renews it (shard/live), read at every version listed, has named
//     other terms for a TTL. Neither the later term's token nor its
//     liveness record's token says so: a restore brings back both. The
//     same count ends a restored term that nobody runs (its record names
//     another), and bury writes it left, so that the live term below it
//     finds it at its next check and ends.
//   - A restore of a liveness record: lease/driver's argument, as above.
//   - An assignment object that cannot be read (lease.ErrCorrupt): bytes
//     that are no assignment, or an object the store cannot return whole,
//     such as a DynamoDB head item restored after a later write deleted
//     its parts. No worker can apply it, so it gives nobody anything; but
//     nor can the assigner tell whose it was, and it holds the group's
//     lease, so it writes a fence over it, conditionally on the version
//     listed, instead of waiting for a read that never succeeds (which
//     would leave every later join, leave and crash unhandled). A new
//     assigner takes it as no assignment: its fence gives no owners, so
//     every worker stops what it runs before anything starts. An assigner
//     within its term fences what its own latest assignment gives. Either
//     way nothing starts until every worker it knows of acknowledged the
//     fence or expired, as after a change of assigner. A term that begins
//     meanwhile takes it as naming no term of its worker (see above), so
//     that it says hello and campaigns: were it to wait for a read that
//     never succeeds, then once every live worker's term had begun after
//     the object was torn (the assigner gone, the others restarted, or the
//     group started again after a restore), no assigner would be left to
//     write the fence, and nothing would ever run.
//   - A restore (or a delete) of an assignment written by an earlier
//     assigner, read by a new one: the fence. A term that may run a shard
//     is one of a worker the new assigner watches: its liveness key is
//     listed, or, if that key was deleted, its acknowledgement is (a term
//     writes its hello before it runs anything), or the assignment names
//     it. The fence waits for each such worker's acknowledgement of it, or
//     its expiry by 4; a term that left counts only while the liveness
//     record names it, so that an acknowledgement restored from an earlier
//     term that left does not stand for a later term that runs shards.
//     With both its liveness record and its acknowledgement deleted, and
//     cut off so that it runs its shards until its renew deadline, a term
//     is none of these when it got its shards from an assignment later
//     than the one read: the fence then waits too until no identity that
//     its listings have not shown can have a running term. Such a term's
//     last successful renewal was sent before its record was deleted, so
//     before the first of those listings returned, and its shards had
//     returned by that renewal's Sent + T - R (as in 3), within a TTL of
//     that listing: the count is 4's, for a key absent throughout, run
//     for every identity at once (judge.unknownExpired). The new assigner
//     knows that a later assignment was written when an acknowledgement
//     it reads before its fence names a later Gen than the one read (the
//     fence's own acknowledgements name the fence), or when it cannot read
//     one of them; it does not wait otherwise, so that a change of
//     assigner costs no TTL. The limit: when every acknowledgement
//     written after the assignment read is gone too (deleted, or restored
//     to an earlier one), or none was written (the later assignments only
//     gave out shards that nobody had to release), nothing the new
//     assigner reads says that a later assignment was written, and a term
//     with both records deleted is not waited for. A restore across a
//     change of assigner moves more shards than the minimum, since the
//     fence stops what the old assignment does not give.
//   - A deleted liveness record: the next term of the worker gets a token
//     of its own all the same (see above), so it takes none of an earlier
//     term's shards or epochs as its own; the earlier term stops at its
//     next renewal, and 3 waits a TTL for it.
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
// calls hanging, or its record restored, while its liveness renews; its
// record deleted, or restored as an earlier holder wrote it; a
// worker killed, its liveness record deleted, and started again within a
// TTL; the assignment kept in parts, as DynamoDB keeps a large object, so
// that a restored head names deleted parts; around a change of assigner, a
// worker cut off, its liveness record deleted and an old assignment
// restored; and listings slower than the
// TTL's margin over RenewInterval + RenewDeadline, with a renewal hidden by
// a restore. Every random choice of a run is drawn from its seed, the
// runners' jitter included (Config.Rand), and every call to the store
// takes a latency hashed from it, so that no two goroutines meet at one
// instant of the fake clock, and no loop of the assigner's rounds follows
// a map's order: a failing seed replays exactly (-seed N -replays M counts
// the runs identical to the first), and -seed N shrinks its schedule to
// the faults the failure needs.
package shard
