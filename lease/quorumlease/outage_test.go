package quorumlease_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/internal/leaderless"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// leaderlessIn is how much of [from, to] no tenure covers.
func leaderlessIn(terms []tenure, from, to time.Time) time.Duration {
	ivs := make([]leaderless.Interval, len(terms))
	for i, tn := range terms {
		ivs[i] = leaderless.Interval{Start: tn.start, End: tn.end}
	}
	return leaderless.Across(ivs, from, to).Leaderless
}

// TestOutageOfOneStore: five minutes of one store's outage leave a lease on
// that store leaderless for the whole outage, and a quorum of three, with
// the store as any of its members, not for an instant, its leader
// unchanged. It logs the figures (docs/backends/quorum.md).
func TestOutageOfOneStore(t *testing.T) {
	const outage = 5 * time.Minute
	for _, tc := range []struct {
		name    string
		members int
		down    int
	}{{"single store", 1, 0}, {"quorum, member 1 down", 3, 0}, {"quorum, member 2 down", 3, 1}, {"quorum, member 3 down", 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFleet(t, tc.members)
				if tc.members == 1 {
					s := memlease.NewStore()
					f.q.stores = []*memlease.Store{s}
					f.openWith = func(who string) (lease.Lease, error) {
						return s.Open("job", lease.Options{Identity: who, TTL: ttl})
					}
				}
				who := []string{"a", "b", "c"}
				for _, w := range who {
					f.start(w)
				}
				time.Sleep(3 * ttl)
				from := time.Now()
				for _, w := range who {
					f.q.stores[tc.down].Partition(w)
				}
				time.Sleep(outage)
				to := time.Now()
				for _, w := range who {
					f.q.stores[tc.down].Heal(w)
				}
				time.Sleep(3 * ttl)
				terms := f.stop()
				gap := leaderlessIn(terms, from, to)
				t.Logf("%s: leaderless %v of a %v outage, %d tenures", tc.name, gap, outage, len(terms))
				switch {
				case tc.members == 1 && gap < outage-ttl:
					t.Errorf("a single store's lease was leaderless %v of its store's %v outage: it cannot lead without its store", gap, outage)
				case tc.members > 1 && (gap > 0 || len(terms) != 1):
					t.Errorf("a quorum was leaderless %v of one member's outage, in %d tenures: want 0 and one", gap, len(terms))
				}
			})
		})
	}
}
