package shard

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
)

// rt12EditAssigner rewrites the assigner lease's record as an operator
// (or a tool) would, with its shard/gens annotation set to gens.
func rt12EditAssigner(f *fleet, gens string) lease.Record {
	rec := f.assignerRecord()
	rec.Annotations = rec.Annotations.With(gensAnnotation, gens)
	rec.Nonce = driver.NewNonce()
	f.store.Put(assignerKey(simGroup), driver.EncodeJSON(rec))
	return rec
}

// rt12Failed returns the workers whose Run has returned an error, by
// identity, and takes them out of the fleet.
func rt12Failed(f *fleet) map[string]error {
	out := map[string]error{}
	for _, id := range f.ids() {
		w := f.workers[id]
		select {
		case err := <-w.done:
			out[id] = err
			w.done <- err
		default:
		}
	}
	return out
}

// rt12GensValues edits the assigner lease's record of a settled group
// of three candidates, shard/gens set to each of values (an operator, a
// tool, a copy from another group), and fails the test if, 8 TTL later,
// a worker failed for good, the group is not balanced, or the oracle saw
// two owners or an epoch that did not increase.
func rt12GensValues(t *testing.T, values []string) {
	for _, gens := range values {
		t.Run(gens, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := settledFleet(t, 12, 3, 0)
				was := f.assignerRecord()
				rt12EditAssigner(f, gens)
				time.Sleep(8 * f.ttl)
				now := f.assignerRecord()
				failed := rt12Failed(f)
				counts := f.o.Counts(f.live())
				balanced := f.o.Balanced(f.live())
				t.Logf("shard/gens %s: assigner %s token %d gens %q before; %s token %d gens %q released %t after; failed %v; counts %v balanced %t",
					gens, was.Holder, was.Token, was.Annotations.Get(gensAnnotation), now.Holder, now.Token, now.Annotations.Get(gensAnnotation), now.Released, failed, counts, balanced)
				for id := range failed {
					f.workers[id].live = false
				}
				f.stopAllTolerant()
				if overlaps, backwards, first := f.o.Violations(); overlaps != 0 || backwards != 0 {
					t.Errorf("%d overlaps, %d epochs not increasing; first: %s", overlaps, backwards, first)
				}
				if len(failed) != 0 || !balanced {
					t.Errorf("an operator's shard/gens %s: %d of 3 workers failed for good (%v), group balanced %t (counts %v)", gens, len(failed), failed, balanced, counts)
				}
			})
		})
	}
}

// TestRedTeam12GensAnnotationOddValues: shard/gens edited to values that
// are not a number a Gen's high half can follow (negative, not a number,
// above 2^63, zeros in front), or to 2^31-2 (whose next is the bound
// itself): the group goes on.
func TestRedTeam12GensAnnotationOddValues(t *testing.T) {
	rt12GensValues(t, []string{"2147483646", "18446744073709551615", "-1", "x", "", "00000000000000000000000000000003", " 5"})
}

// stopAllTolerant stops every worker and waits for them, without failing
// the test on a Run's error (rt12Failed reports those).
func (f *fleet) stopAllTolerant() {
	for _, w := range f.workers {
		w.cancel()
	}
	for _, w := range f.gone {
		<-w.done
	}
	for _, w := range f.workers {
		<-w.done
	}
}

// rt12LossyStore loses the answers of the first lose renewals of the
// assigner lease after each of its acquisitions: each lands, and its
// caller gets lease.ErrUnavailable, as from a call whose answer was lost.
type rt12LossyStore struct {
	Store
	lose  int
	count *atomic.Int64 // answers lost
	mode  string        // "lose" (lands, answer lost), "fail" (does not land), "hang" (hangs for the call timeout, does not land)
}

func (s rt12LossyStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Store.Lease(key, opts)
	if err != nil || key != assignerKey(simGroup) {
		return l, err
	}
	return &rt12LossyLease{Lease: l, lose: s.lose, count: s.count, mode: s.mode, timeout: opts.CallTimeout}, nil
}

type rt12LossyLease struct {
	lease.Lease
	lose    int
	count   *atomic.Int64
	mode    string
	timeout time.Duration
	mu      sync.Mutex
	left    int
}

func (l *rt12LossyLease) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := l.Lease.Acquire(ctx)
	if err == nil {
		l.mu.Lock()
		l.left = l.lose
		l.mu.Unlock()
	}
	return t, err
}

func (l *rt12LossyLease) Renew(ctx context.Context, t lease.Term) (lease.Term, error) {
	if l.mode != "lose" {
		l.mu.Lock()
		fault := l.left > 0
		if fault {
			l.left--
			l.count.Add(1)
		}
		l.mu.Unlock()
		if fault {
			if l.mode == "hang" {
				hctx, cancel := context.WithTimeout(ctx, l.timeout)
				<-hctx.Done()
				cancel()
			}
			return lease.Term{}, fmt.Errorf("%w: rt12: the renewal failed (%s)", lease.ErrUnavailable, l.mode)
		}
		return l.Lease.Renew(ctx, t)
	}
	nt, err := l.Lease.Renew(ctx, t)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && l.left > 0 {
		l.left--
		l.count.Add(1)
		return lease.Term{}, fmt.Errorf("%w: rt12: the renewal's answer was lost", lease.ErrUnavailable)
	}
	return nt, err
}

func (l *rt12LossyLease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l *rt12LossyLease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

// TestRedTeam12FirstRenewalAnswerLost: every new assigner's first
// renewals (the one that writes shard/gens, and the retries after it)
// land, and their answers are lost. Does landed close, or does the
// assigner hold its lease and write nothing? The assigner crashes twice;
// the group must settle each time.
func TestRedTeam12FirstRenewalAnswerLost(t *testing.T) {
	for _, c := range []struct {
		mode string
		lose int
	}{{"lose", 1}, {"lose", 2}, {"lose", 3}, {"fail", 1}, {"fail", 3}, {"hang", 1}, {"hang", 2}} {
		mode, lose := c.mode, c.lose
		t.Run(fmt.Sprint(mode, lose), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var count atomic.Int64
				f := newFleet(t, 12)
				f.wrapStore = func(proc string, s Store) Store { return rt12LossyStore{s, lose, &count, mode} }
				for range 4 {
					f.join()
					time.Sleep(f.phase(f.renew()))
				}
				time.Sleep(6 * f.ttl)
				for i := range 2 {
					boss := f.assigner()
					f.crash(boss)
					since := time.Now()
					time.Sleep(6 * f.ttl)
					rec := f.assignerRecord()
					t.Logf("crash %d of assigner %s: %v later assigner %s token %d gens %q, balanced %t counts %v, answers lost %d",
						i, boss, time.Since(since), rec.Holder, rec.Token, rec.Annotations.Get(gensAnnotation), f.o.Balanced(f.live()), f.o.Counts(f.live()), count.Load())
					f.join()
				}
				time.Sleep(4 * f.ttl)
				f.verdict(fmt.Sprintf("the first %d renewals of every assigner term: %s", lose, mode))
			})
		})
	}
}

// TestRedTeam12RaiseChurn measures the terms that end by errRaise: the
// assigner lease's record and the assignment restored as they were early
// on (low Gens), and every candidate restarted (new processes, which have
// read no Gen), while the workers that do not campaign, alive, applied
// the later Gens and say so (ack.Seen). Each candidate that wins ends its
// term when it reads them, its liveness term with it; the record's
// shard/gens goes up by one a term. How many terms, and how long until the
// group is balanced again?
func TestRedTeam12RaiseChurn(t *testing.T) {
	for _, c := range []struct {
		cands int
		cli   bool
	}{{2, false}, {4, false}, {6, false}, {4, true}, {6, true}} {
		cands := c.cands
		t.Run(fmt.Sprint(cands, c.cli), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, 24)
				f.candidates = cands
				if c.cli {
					// leasehold run --shards: commands that ignore
					// SIGTERM, killed at the CLI's deadline.
					f.grace = f.ttl * 3 / 2
					f.drainTimeout = f.grace + f.ttl
				} else {
					f.drainTimeout = 3 * f.ttl
				}
				for range cands + 4 {
					f.join()
					time.Sleep(f.phase(f.renew()))
				}
				f.settle("start", time.Now(), 0)
				// Restarted processes keep campaigning (startProcess
				// makes NoAssigner those above f.candidates).
				f.candidates = f.next
				earlyLease, _ := f.store.Bytes(assignerKey(simGroup))
				earlyAssignment, _ := f.store.Bytes(assignmentKey(simGroup))
				// Move the Gens on: each candidate in turn the assigner.
				for range 6 {
					boss := f.assigner()
					f.leave(boss)
					f.start(boss)
					f.settle("a new assigner", time.Now(), 0)
				}
				high := f.assignerRecord().Annotations.Get(gensAnnotation)
				// Restart every candidate, then restore.
				var cs []string
				for _, id := range f.live() {
					if id <= fmt.Sprintf("w%04d", cands) {
						cs = append(cs, id)
					}
				}
				for _, id := range cs {
					f.leave(id)
				}
				f.store.Put(assignerKey(simGroup), earlyLease)
				f.store.Put(assignmentKey(simGroup), earlyAssignment)
				f.leaseFaults.Add(1)
				for _, id := range cs {
					f.start(id)
				}
				since := time.Now()
				tokens := map[uint64]string{}
				settledAt := time.Duration(0)
				for time.Since(since) < 20*f.ttl {
					r := f.assignerRecord()
					tokens[r.Token] = r.Holder + " gens " + r.Annotations.Get(gensAnnotation)
					if settledAt == 0 && f.o.Balanced(f.live()) && len(tokens) > 1 {
						settledAt = time.Since(since)
					}
					time.Sleep(100 * time.Millisecond)
				}
				t.Logf("%d candidates: gens %s before the restore; assigner terms after it: %d %v; balanced after %v", cands, high, len(tokens), tokens, settledAt)
				f.verdict("the restore")
			})
		})
	}
}

// rt12Settle waits until the fleet is balanced, for at most limit, and
// reports how long it took, or false.
func rt12Settle(f *fleet, limit time.Duration) (time.Duration, bool) {
	since := time.Now()
	for !f.o.Balanced(f.live()) {
		if time.Since(since) > limit {
			return time.Since(since), false
		}
		time.Sleep(f.renew() / 16)
	}
	return time.Since(since), true
}

// rt12Limit: the Gens limit of go doc ./shard, with the worker that
// applied the later Gens cut off (its calls hang), not crashed nor
// restarted: the assigner lease's record, the assignment and every
// acknowledgement are restored as they were at the first assigner's fence;
// the assigner crashes; a new process joins and takes the lease. It
// returns the fleet, stopped, for the verdict.
func rt12Limit(t *testing.T) *fleet {
	f := phasedFleet(t, 12, 2, 1)
	boss := f.assigner()
	other := slices.DeleteFunc(f.live(), func(id string) bool { return id == boss })[0]
	earlyLease, _ := f.store.Bytes(assignerKey(simGroup))
	earlyAssignment, _ := f.store.Bytes(assignmentKey(simGroup))
	earlyAcks := map[string][]byte{}
	for _, id := range []string{boss, other} {
		earlyAcks[id], _ = f.store.Bytes(ackKey(simGroup, id))
	}
	// Move the Gens on: the assigner's worker leaves and starts again.
	f.candidates = f.next
	for range 3 {
		f.leave(boss)
		f.start(boss)
		f.settle("a new term of the assigner", time.Now(), 0)
	}
	t.Logf("gens %s before the restores", f.assignerRecord().Annotations.Get(gensAnnotation))
	f.partition(other, true)
	f.crash(boss)
	f.store.Put(assignerKey(simGroup), earlyLease)
	f.store.Put(assignmentKey(simGroup), earlyAssignment)
	for id, b := range earlyAcks {
		f.store.Put(ackKey(simGroup, id), b)
	}
	f.leaseFaults.Add(1)
	f.candidates = f.next + 1
	f.join()
	time.Sleep(6 * f.ttl)
	f.heal(other)
	f.workers[other].live = true
	time.Sleep(6 * f.ttl)
	t.Logf("assigner %s gens %q", f.assigner(), f.assignerRecord().Annotations.Get(gensAnnotation))
	return f
}

// rt12AcquireCtl controls the assigner lease's Acquire of each process:
// block makes it fail before it reaches the store (lease.ErrUnavailable);
// late, once set, makes its next success return only after that long, as
// an answer that came late (a read-back after a lost answer, a stalled
// process), and then blocks that process and no other.
type rt12AcquireCtl struct {
	mu    sync.Mutex
	block map[string]bool
	late  map[string]time.Duration
	won   map[string]int
}

type rt12CtlStore struct {
	Store
	proc string
	ctl  *rt12AcquireCtl
}

func (s rt12CtlStore) Lease(key string, opts lease.Options) (lease.Lease, error) {
	l, err := s.Store.Lease(key, opts)
	if err != nil || key != assignerKey(simGroup) {
		return l, err
	}
	return rt12CtlLease{l, s.proc, s.ctl}, nil
}

type rt12CtlLease struct {
	lease.Lease
	proc string
	ctl  *rt12AcquireCtl
}

func (l rt12CtlLease) Acquire(ctx context.Context) (lease.Term, error) {
	l.ctl.mu.Lock()
	blocked := l.ctl.block[l.proc]
	l.ctl.mu.Unlock()
	if blocked {
		return lease.Term{}, fmt.Errorf("%w: rt12: blocked", lease.ErrUnavailable)
	}
	t, err := l.Lease.Acquire(ctx)
	if err != nil {
		return t, err
	}
	l.ctl.mu.Lock()
	late := l.ctl.late[l.proc]
	delete(l.ctl.late, l.proc)
	l.ctl.won[l.proc]++
	l.ctl.mu.Unlock()
	if late > 0 {
		time.Sleep(late)
		// Then this process's next attempts fail, the others' pass.
		l.ctl.set(func(c *rt12AcquireCtl) {
			clear(c.block)
			c.block[l.proc] = true
		})
	}
	return t, nil
}

func (l rt12CtlLease) RenewalsShow() bool { return lease.RenewalsShow(l.Lease) }
func (l rt12CtlLease) FollowerReads() int { return lease.FollowerReads(l.Lease) }

func (c *rt12AcquireCtl) set(f func(c *rt12AcquireCtl)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

// rt12AssignerClient is a worker's Store whose assigner lease is opened on
// the memory store for the client PROC/assigner, so that faults can be
// set on that lease's calls alone, with the lease's CallTimeout set to
// callTimeout (a valid setting: below the RenewDeadline).
type rt12AssignerClient struct {
	Store
	objects     *memlease.Objects
	callTimeout time.Duration
}

func (s rt12AssignerClient) Lease(key string, opts lease.Options) (lease.Lease, error) {
	if key != assignerKey(simGroup) {
		return s.Store.Lease(key, opts)
	}
	opts.CallTimeout = s.callTimeout
	return s.objects.Lease(key, opts)
}
