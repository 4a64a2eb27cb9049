package runner_test

// Red team 13: a Config.Annotate or OnElected slower than the TTL started
// the task, its context not yet cancelled, after a follower had taken the
// lease over (1cf2ef6 decided before the hooks whether the task starts);
// the deadline is now checked again once both have returned.

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam13SlowAnnotateStartsTaskUnderAnotherLeader (rule 1): a wins
// the lease; its Annotate takes 2 × RenewDeadline (longer than the TTL:
// a read it makes, or a stall). b, a follower, sees a's record unchanged
// for a TTL, takes it over and leads. Then a's Annotate returns and a's
// task starts with a live context while b's task runs; each task, at its
// start, finds the other leading.
func TestRedTeam13SlowAnnotateStartsTaskUnderAnotherLeader(t *testing.T) {
	rt13SlowHook(t, func(cfg *runner.Config) {
		cfg.Annotate = func(won lease.Term) lease.Annotations {
			if won.Token == 1 {
				advance(2 * renewDeadline)
			}
			return won.Annotations.With("test/holder", "a")
		}
	})
}

// TestRedTeam13SlowOnElectedStartsTaskUnderAnotherLeader (rule 1): the
// same with no Annotate, through Config.OnElected, whose doc asks nothing
// of its speed ("called when this contender becomes leader, before Task
// starts"): 1cf2ef6 decides before OnElected too (runner.lead: starts,
// then r.elected, then the task), where the check used to come after it.
func TestRedTeam13SlowOnElectedStartsTaskUnderAnotherLeader(t *testing.T) {
	rt13SlowHook(t, func(cfg *runner.Config) {
		cfg.OnElected = func(won lease.Term) {
			if won.Token == 1 {
				advance(2 * renewDeadline) // a metrics push, a log flush, a stall
			}
		}
	})
}

// rt13SlowHook runs a (its config changed by hook) and b, a follower
// started a millisecond later, for a minute, and fails the test if a
// task starts, its context live, while the other's runs.
func rt13SlowHook(t *testing.T, hook func(cfg *runner.Config)) {
	synctest.Test(t, func(t *testing.T) {
		store := memlease.NewStore()
		j := newJournal()
		var mu sync.Mutex
		leading := map[string]bool{}
		var overlaps []string
		task := func(who string) func(context.Context) error {
			inner := j.task(who)
			return func(ctx context.Context) error {
				mu.Lock()
				for other, on := range leading {
					if on && ctx.Err() == nil {
						lt, _ := runner.Term(ctx)
						overlaps = append(overlaps, who+" (token "+strconv.FormatUint(lt.Token, 10)+") started its task, its context live, while "+other+" led, at "+time.Now().Format("15:04:05.000"))
					}
				}
				leading[who] = true
				mu.Unlock()
				defer func() { mu.Lock(); leading[who] = false; mu.Unlock() }()
				return inner(ctx)
			}
		}
		cfgA := runner.Config{Lease: openLease(t, store, "a"), Task: task("a")}
		hook(&cfgA)
		stopA := start(t, cfgA)
		advance(time.Millisecond)
		stopB := start(t, runner.Config{Lease: openLease(t, store, "b"), Task: task("b")})
		advance(time.Minute)
		_ = stopA()
		_ = stopB()
		mu.Lock()
		defer mu.Unlock()
		for _, o := range overlaps {
			t.Error(o)
		}
		j.checkSafety(t)
	})
}
