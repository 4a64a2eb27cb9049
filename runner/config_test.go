package runner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestResolveFillsEveryDefault: a zero Config resolves to the defaults its
// fields state, derived from the lease's TTL (24s here, so that every
// fraction is whole).
func TestResolveFillsEveryDefault(t *testing.T) {
	res, err := runner.Config{}.Resolve(lease.Options{TTL: 24 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	for _, f := range []struct {
		name      string
		got, want time.Duration
	}{
		{"RenewInterval", res.RenewInterval, 9 * s},
		{"RenewDeadline", res.RenewDeadline, 13500 * time.Millisecond},
		{"CampaignInterval", res.CampaignInterval, 8 * s},
		{"HealthInterval", res.HealthInterval, 9 * s},
		{"HealthTimeout", res.HealthTimeout, 4500 * time.Millisecond},
		{"CoolDown", res.CoolDown, 24 * s},
		{"OnceTimeout", res.OnceTimeout, 48 * s},
		{"ReleaseTimeout", res.ReleaseTimeout, 14400 * time.Millisecond},
		{"LeaseOptions.CallTimeout", res.LeaseOptions.CallTimeout, 4800 * time.Millisecond},
		{"Margin", res.Margin(), 1500 * time.Millisecond},
		{"FollowerReadInterval(renewals show)", res.FollowerReadInterval(true), 4500 * time.Millisecond},
		{"FollowerReadInterval(renewals do not show)", res.FollowerReadInterval(false), 8800 * time.Millisecond},
	} {
		if f.got != f.want {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	if res.Jitter != runner.DefaultJitter || res.HealthThreshold != runner.DefaultHealthThreshold || res.FollowerReads != runner.DefaultFollowerReads || res.Logger == nil {
		t.Errorf("Jitter %v, HealthThreshold %d, FollowerReads %d, Logger %v; want %v, %d, %d, slog.Default()", res.Jitter, res.HealthThreshold, res.FollowerReads, res.Logger, runner.DefaultJitter, runner.DefaultHealthThreshold, runner.DefaultFollowerReads)
	}
}

// TestFollowerReadsFromTheStore: FollowerReads defaults to what the lease's
// store asks for (lease.FollowerReader), else to DefaultFollowerReads; a
// value set is kept, and one below 2, whose reads could not follow each
// other within the holder's renew interval, is refused by name.
func TestFollowerReadsFromTheStore(t *testing.T) {
	opts := lease.Options{TTL: ttl}
	for _, tc := range []struct {
		name string
		cfg  runner.Config
		want int
	}{
		{"no lease", runner.Config{}, runner.DefaultFollowerReads},
		{"a lease that does not ask", runner.Config{Lease: &watched{}}, runner.DefaultFollowerReads},
		{"a lease that asks for 5", runner.Config{Lease: askingReads{shownNative{&watched{}}, 5}}, 5},
		{"set, on a lease that asks for 5", runner.Config{Lease: askingReads{shownNative{&watched{}}, 5}, FollowerReads: 3}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.cfg.Resolve(opts)
			if err != nil || res.FollowerReads != tc.want {
				t.Errorf("FollowerReads %d, err %v; want %d", res.FollowerReads, err, tc.want)
			}
		})
	}
	for _, reads := range []int{1, -1} {
		_, err := runner.Config{FollowerReads: reads}.Resolve(opts)
		var oe *lease.OptionError
		if !errors.As(err, &oe) || oe.Field != "FollowerReads" || oe.Value != reads {
			t.Errorf("Resolve with FollowerReads %d: %v, want an error naming FollowerReads (%d)", reads, err, reads)
		}
	}
}

// TestResolveKeepsWhatIsSet: a field set is kept, and what is derived from
// it follows it.
func TestResolveKeepsWhatIsSet(t *testing.T) {
	res, err := runner.Config{RenewInterval: 4 * time.Second, CampaignInterval: 2 * time.Second}.Resolve(lease.Options{TTL: 16 * time.Second, RenewInterval: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.RenewInterval != 4*time.Second || res.HealthInterval != 4*time.Second || res.OnceTimeout != 22*time.Second || res.Margin() != 3*time.Second {
		t.Errorf("RenewInterval %v, HealthInterval %v, OnceTimeout %v, Margin %v; want 4s, 4s, 22s, 3s", res.RenewInterval, res.HealthInterval, res.OnceTimeout, res.Margin())
	}
	if _, err := (runner.Config{RenewDeadline: 16 * time.Second}).Resolve(lease.Options{TTL: 16 * time.Second}); !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("Resolve with RenewDeadline at the TTL: %v, want lease.ErrInvalid", err)
	}
}

// storeJudged is a lease whose store judges expiry itself, as Azure's
// does: a follower of it polls every jittered CampaignInterval.
type storeJudged struct{ *watched }

func (storeJudged) Judge() lease.Judge { return lease.JudgedByStore }

func (s storeJudged) Acquire(ctx context.Context) (lease.Term, error) {
	t, err := s.watched.Acquire(ctx)
	var held *lease.HeldError
	if errors.As(err, &held) {
		held.Wait = 0 // the store says nothing of when it expires
	}
	return t, err
}

// TestFollowerReadIntervalIsWhatFollowersRead: a follower of a live holder
// reads, on average, once per Resolved.FollowerReadInterval, on every kind
// of store: the figure leasehold check prices a follower at.
func TestFollowerReadIntervalIsWhatFollowersRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shows bool // the holder's renewals show
		reads int  // Config.FollowerReads
		wrap  func(*watched) lease.Lease
	}{
		{"judged by contender", true, 0, func(w *watched) lease.Lease { return w }},
		{"judged by contender, 4 reads", true, 4, func(w *watched) lease.Lease { return w }},
		{"judged by store", false, 0, func(w *watched) lease.Lease { return storeJudged{w} }},
		{"judged by store, renewals show", true, 0, func(w *watched) lease.Lease { return shownNative{w} }},
		{"judged by store, renewals show, the store asks for 5 reads", true, 0, func(w *watched) lease.Lease { return askingReads{shownNative{w}, 5} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := memlease.NewStore()
				j := newJournal()
				start(t, runner.Config{Lease: watch(t, store, "a"), Task: j.task("a")})
				advance(rand.N(ttl))
				follower := watch(t, store, "b")
				cfg := runner.Config{Lease: tc.wrap(follower), Task: j.task("b"), FollowerReads: tc.reads}
				res, err := cfg.Resolve(cfg.Lease.Options())
				if err != nil {
					t.Fatal(err)
				}
				start(t, cfg)
				advance(10 * ttl) // learning
				counted := time.Now()
				advance(time.Hour)
				got := time.Since(counted) / time.Duration(follower.readsSince(counted))
				want := res.FollowerReadInterval(tc.shows)
				if got < want*97/100 || got > want*103/100 {
					t.Errorf("the follower read every %v on average, want %v (Resolved.FollowerReadInterval) within 3%%", got, want)
				}
			})
		})
	}
}

// Resolve says what a Config runs with on a lease: here the defaults for a
// 16s TTL, and what follows from them.
func ExampleConfig_Resolve() {
	res, err := runner.Config{}.Resolve(lease.Options{TTL: 16 * time.Second})
	if err != nil {
		panic(err)
	}
	fmt.Println("renew every", res.RenewInterval, "step down after", res.RenewDeadline, "without a renewal")
	fmt.Println("a slow task has", res.Margin(), "after the step-down to stop")
	fmt.Println("a follower reads every", res.FollowerReadInterval(true), "where renewals show (S3, DynamoDB, Cloud Storage, Azure)")
	fmt.Println("and every", res.FollowerReadInterval(false), "on average where they do not")
	// Output:
	// renew every 6s step down after 9s without a renewal
	// a slow task has 1s after the step-down to stop
	// a follower reads every 3s where renewals show (S3, DynamoDB, Cloud Storage, Azure)
	// and every 5.866666666s on average where they do not
}
