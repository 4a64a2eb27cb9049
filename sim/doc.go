// Package sim finds sequence bugs by machine: a seeded simulation of the
// lease engine, the runner and the schedule, checked by a global oracle.
// Its code is all in sim_test.go and store_test.go, and uses only the
// exported API of lease, lease/driver and runner, so that it runs against
// earlier commits too.
//
// Each schedule draws from one seed: two to four contenders sharing one
// lease (TTL 3s) on a simulated compare-and-swap store whose version is the
// MD5 of the stored bytes, as S3's ETag; the store's shape (with Keep, or
// without, as Azure's); and four to nineteen faults at random moments over
// 40 TTLs, all inside a testing/synctest bubble, so a schedule of two
// simulated minutes takes about 3 ms.
//
// The contenders:
//
//	kind   what it is
//	run    a Runner's Run, with a health check and, at random, a stall watchdog
//	child  Run with the CLI's child model: on cancel the task drains, killed by Expiry
//	once   RunOnce fired by a scheduler, once or twice per period (duplicates, late
//	       triggers), with or without Period (one RetryFailed for the fleet) and
//	       MinHold, each invocation a new process or all on one Lease value
//	pair   two Runners on one Lease value
//
// The faults, and the promise the oracle then holds the history to:
//
//	fault         what happens                                         oracle waives
//	fail-reads    the next N reads of one contender fail                a duplicate whose reads failed in a hold
//	fail-writes   the next N writes of one contender fail               nothing
//	lose-answer   the next N writes are applied, their answers lost     nothing
//	slow          the next N calls take D, past CallTimeout, and are    the hold and the done mark of the slow
//	              applied when D ends                                   holder; a duplicate slowed in a hold
//	hang          every call of one contender hangs for D (> TTL)       as slow
//	restore       an earlier body of the current term is put back       the period, the hold and the done mark
//	              (same bytes, same version)                            (the store lost what the record said)
//	foreign       a foreign object replaces the record; D later a       as restore
//	              person puts the last record back
//	delete        the record is deleted                                 as restore; and a Lease opened after
//	                                                                    the delete may start tokens again
//	sick          one contender's health checks fail for D              nothing
//	stall         one contender's tasks make no progress for D          nothing
//	task-returns  one contender's running tasks return                  nothing
//
// The oracle, on the bubble's one clock, over the whole history:
//
//   - at most one task running at any instant (from its start to its
//     return; for the child model, to its exit);
//   - fencing tokens strictly increasing in start order;
//   - at most one run per period (a second start, without RetryFailed; a
//     start after a run that succeeded, with it: "done mark lost");
//   - no start during another's minimum hold, unless its holder's term was
//     lost or passed its deadline;
//   - no run by a RunOnce fired after a holder's task ended and inside its
//     hold, with more than a renew interval and a call of it left (a
//     duplicate is answered NotElected when it sees the holder renew).
//
// Restores bring back only bodies of the current term: a released body,
// or one of another term, restored under a live holder, hands the lease to
// a contender that never saw the newer record, and no design that reads
// only the object can tell (the holder learns it at its next renewal).
//
// Running it:
//
//	go test ./sim                                        10,000 schedules (1,000 under -race)
//	LEASEHOLD_SIM_SCHEDULES=1000000 go test ./sim -timeout 2h
//	go test ./sim -kinds pair -faults none               focus the search
//	go test ./sim -run TestSimulation -seed N -steps 0,3  replay a (shrunk) schedule
//
// A violation prints its seed, the schedule shrunk by dropping steps while
// it still fails, the history of the run that showed it, and the command
// that replays it. A replay repeats the contenders and the faults exactly;
// the runners' jitter and the nonces are not seeded (math/rand/v2's global
// source cannot be), so a replay may need a few runs to fail again.
package sim
