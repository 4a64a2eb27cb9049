// Package runner runs a task on exactly one of many instances: the one that
// holds a lease. It is a port of the MSDN Leader Election sample's
// BlobDistributedMutex onto any lease.Lease.
//
// # A first program
//
// A worker that does its job only while it leads, on a lease in S3 (each
// backend's OpenURL opens its own URLs; lease.Open those of every backend
// imported). Start it on many machines: one leads at a time, and when it
// dies another takes over about a TTL later.
//
//	package main
//
//	import (
//		"context"
//		"log"
//		"os/signal"
//		"syscall"
//
//		"github.com/leasehold/leasehold/lease"
//		"github.com/leasehold/leasehold/lease/s3lease"
//		"github.com/leasehold/leasehold/runner"
//	)
//
//	func main() {
//		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
//		defer stop()
//		l, err := s3lease.OpenURL(ctx, "s3://my-bucket/nightly-report", lease.Options{Identity: lease.DefaultIdentity()})
//		if err != nil {
//			log.Fatal(err)
//		}
//		r, err := runner.New(runner.Config{Lease: l, Task: func(ctx context.Context) error {
//			t, _ := runner.Term(ctx)
//			return doTheJob(ctx, t.Token) // until ctx is cancelled; send t.Token with every write
//		}})
//		if err != nil {
//			log.Fatal(err)
//		}
//		if err := r.Run(ctx); err != nil { // campaigns, leads, campaigns again, until SIGTERM
//			log.Fatal(err)
//		}
//	}
//
// # What it does
//
// Run campaigns (TryAcquireLeaseOrWait), and once elected runs the task, a
// renew loop (KeepRenewingLease) and a health watch on one context: the
// first of them to end cancels the others (CancelAllWhenAnyCompletes). The
// lease is released only after the task has returned, and then Run
// campaigns again, after a wait that grows while the task keeps failing
// (see Config.StopWhenTaskEnds). RunOnce does the same once, for scheduled
// and serverless jobs, within Config.OnceTimeout, and says what happened:
// ran, not elected (and who holds the lease), store unreachable, stepped
// down, or already ran: with Config.Period it runs the task at most once per
// period key, however many instances fire for the tick and however late
// (PeriodKey derives a key from the clock for triggers that pass none), and
// Config.MinHold keeps other instances out for a while after the task
// started, even when it ends sooner. It keeps that state in the lease
// record's annotations (Schedule, ScheduleOf). A task whose work finished
// before it was told to stop, but that returns only after its context
// ended (it waits for a child process's output, say), calls Completed so
// that RunOnce counts it as run to its end, period done.
//
// # What it guarantees
//
// The leader's task context is cancelled no later than RenewDeadline after
// the last successful acquire or renew was sent, whether or not a renewal
// is still hanging; a contender can take the lease over only after TTL,
// which is longer. Every write of a term after its acquisition counts from
// when it was sent or when it was due (RenewInterval after the previous
// write was sent), whichever is earlier, and is sent only before its
// deadline: RenewDeadline after the previous write counts from while the
// term leads or is about to (each renewal, RunOnce's period mark before its
// task), a TTL after the previous write was sent once the task has
// returned and nothing acts as leader (no one else can take over the record
// that write left before then: RunOnce's done mark and minimum hold), and
// for the release, which frees the lease for anyone at once, a TTL after
// the latest write answered a renew interval before the latest was sent
// (a restore may have hidden the writes after it and a follower taken over
// its record; a second restore may put the latest back under it), and not
// before RenewDeadline after a write answered more than a TTL after the
// earliest record it would show nobody took over (a silence: that write
// may have landed on the latest put back under such a successor, which
// then leads until its own renew deadline): a task that returns later
// than that, or writes answered so late that two of them span a TTL, or a
// release due inside that window, leave the lease to lapse. So an Acquire whose answer
// came late, a mark or renewal sent late, and a write that a restore hid do
// not move the deadline past a follower's takeover; and a done mark or a
// hold is retried through an outage for as long as the lease can still be
// the term's, as no other instance can take it over before a TTL has
// passed unchanged, while a write conditional on the term's version never
// lands on another's. A leader's renewals go a renew interval after the
// previous was answered, so that two land at least that far apart, which
// lease/driver's argument against restores needs; so answers late by L
// keep a term only while RenewInterval + 3L <= RenewDeadline (0.94 s at
// the defaults for a TTL of 15 s, though CallTimeout is 3 s): later ones
// make the leader step down at its renew deadline every few renewals, and
// lead again, never two at once. A hold's writes go a renew interval after the
// previous was answered, and no later than RenewDeadline after it was
// sent, so that one answered late leaves time in its TTL for a failure and
// a retry. A done mark or hold write still unanswered at that
// deadline may have landed, and then holds the record for a TTL after it
// was sent: its outcome is resolved by reading the record, never
// guessed, and the hold goes on from it when the record shows the term
// moved on; a write on the term's earlier version is not sent after that
// version's deadline. A term whose deadline passed before its task could
// start never starts it. So two tasks never run as leader at once, provided each
// task stops when its context is cancelled. Every term carries a fencing
// token (Term(ctx)) that is greater than every earlier one, so downstream
// systems can refuse a deposed leader whose task did not stop in time.
//
// # Draining a voluntary step-down
//
// A task that needs time to stop, such as a child process given a grace
// period, sets Config.DrainTimeout. When the step-down is voluntary (the
// context given to Run ends, or the leader is unhealthy) the task's context
// is still cancelled at once, but the runner keeps renewing the lease until
// the task has returned, at most DrainTimeout, and releases it after that,
// so no one else takes over while the task winds down. Lease loss and the
// renew deadline are never drained: they end the renewals at once, even
// mid-drain. Such a task watches RenewalsDone(ctx) and Expiry(ctx), the
// instant after which the lease may be someone else's, and must have stopped
// by then; Deadline(ctx) is when the leader steps down unless a renewal
// succeeds first. Work that rests on the leases of several runners (package
// shard's shards, on a worker's liveness and its assigner lease) runs under
// a Joint context, on which Expiry and Deadline are the earliest of all
// its terms'.
//
// # Preferred leaders and handoffs
//
// By default a released lease goes to whichever follower reads first, so a
// rolling deploy of N instances can move leadership up to N times, each
// move restarting the leader's work. With Config.Prefer (the build's
// version, say) and Config.Candidates, leadership goes to the contender
// whose Prefer orders last: a follower that orders after the leader
// holds Candidates to announce itself, and the leader, once it has seen
// it renew that announcement, ends its term as for a voluntary step-down
// (HandedOff: the task's context is cancelled, DrainTimeout applies), and
// then hands the lease to it (lease.Handoffer): the candidate takes it at
// once, with a greater token, while every other contender sees it held,
// so none slips in between, and one that never comes leaves the lease to
// the others a TTL later. Started before the old instances stop, as ECS
// and Kubernetes roll by default, a deploy moves leadership once, to the
// first new instance. A follower that does not order after the leader
// costs what it did; the leader reads Candidates once per renewal.
//
// # What it assumes
//
// Clocks on all machines tick at nearly the same rate. Nothing depends on
// their agreeing on the time: each instance measures only intervals on its
// own monotonic clock. The gap TTL - RenewDeadline absorbs rate drift,
// latency and scheduling pauses; a process paused for longer than that
// (a stopped VM, a very long GC pause) may act as leader after its lease has
// been taken over, which is what fencing tokens are for.
//
// It does not guarantee that a leader exists at every moment: after a
// leader dies the lease lapses only after TTL, counted from a follower's
// first sight of the leader's last renewal.
//
// At most once per period rests on the lease record alone: it is the only
// place the period is remembered, and an instance fired for a period knows
// only what it reads there. A restore of the record to a version written
// before the period's mark (a backup, an object store's "restore previous
// version"), or its delete (a lifecycle rule, a person), gives a process
// that did not see the mark (any new one) exactly the record it would read
// had the period never run, so it runs the period again. A restore to a
// version written since the mark keeps the period from running again,
// except, with RetryFailed, one to the mark written as the task started,
// which makes a run that succeeded look unfinished. No design that keeps
// its memory in the object that was rolled back can tell the two apart, nor
// one that keeps it in a second object of a store rolled back whole. Where
// a second run would do harm, make the task's own effect idempotent per
// period key (a conditional create of an output named for it, say), and
// keep lifecycle rules, restores and people away from lease records.
//
// # When a follower reads
//
// On a store whose every renewal changes the record (S3, DynamoDB, Cloud
// Storage, memory; and Azure, whose holder writes its record after each
// renewal: lease.RenewalsShow), a follower learns when the holder renews,
// assuming it renews every RenewInterval, and reads the lease just after
// each renewal (a few hundredths of a TTL later, at a delay of its own, so
// that several followers do not read, or take over, at one moment) and
// evenly between, so that its reads follow each other within the holder's
// renew interval and its count towards expiry goes on: Config.FollowerReads
// reads per renewal, 2 by default, 6 on Azure, whose TTL cannot be
// shortened below 15s: a release is seen at the next read, so more reads
// make a handover quicker where a shorter TTL cannot. It learns by halving,
// period after period, the interval in which its reads bracket the holder's
// next write; a renewal that does not come where expected (a holder late,
// irregular, or dead) is looked for again after growing waits, and the
// follower's delay grows. So a crashed holder's lease is taken over soon
// after the TTL that follows its last renewal (on Azure, which judges
// expiry itself, the lease's HeldError says when its lease can have lapsed,
// and the follower asks then). A follower that has just started reads every
// TTL/20 until it sees the holder's first renewal, for at most one renew
// interval (8 reads at the defaults, once), so that it knows the schedule
// before the holder could die; if it sees none, and on a store whose
// renewals do not show, it polls every jittered CampaignInterval.
//
// Config.Resolve says what a Config resolves to on a lease: every default
// filled in, the Margin a task that cannot stop at once has to stop, and
// how often a follower reads (FollowerReadInterval), which is what it
// costs.
//
// Callbacks report elections (OnElected), demotions with their reason
// (OnDemoted), the observed leader (OnLeaderChanged) and every renewal
// request with its latency and error (OnRenew), for logs and metrics.
// Annotate lets a layer above read what the previous holder wrote in the
// record's annotations when a term is won, and write its own with the
// term's renewals and release: package shard names there the liveness
// term bound to each assigner term.
package runner
