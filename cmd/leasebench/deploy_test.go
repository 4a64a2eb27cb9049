package main

import (
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// TestBenchDeploy runs the rolling deploys' table on memlease in a bubble,
// two deploys per column: with preference, a deploy whose new instances
// start first moves leadership exactly once, by a handoff, and one whose
// old instances stop first at most twice; without, at least once; no term
// overlaps another, and none is lost; a handoff leaves nobody leading for
// less than a tenth of the TTL; and preference costs a follower whose
// Prefer equals the leader's nothing, the leader one read per renewal.
func TestBenchDeploy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, why, err := setupStore(t.Context(), "mem", 2*time.Second)
		if st == nil {
			t.Fatal(why, err)
		}
		r := benchDeploy(t.Context(), st, 2, 8, time.Minute)
		if len(r.errs) > 0 || !r.handoff {
			t.Fatalf("errors %v, hands off %v", r.errs, r.handoff)
		}
		for k, runs := range r.runs {
			if len(runs) != 2 {
				t.Errorf("%+v: %d deploys, want 2", k, len(runs))
			}
			for _, run := range runs {
				lo, hi := 1, deployInstances
				switch k {
				case deployKey{true, startFirst}:
					hi = 1
				case deployKey{true, stopFirst}:
					hi = 2
				}
				if run.changes < lo || run.changes > hi || run.overlaps != 0 || run.lost != 0 {
					t.Errorf("%+v: %d leadership changes (want %d to %d), %d overlapping terms, %d lost", k, run.changes, lo, hi, run.overlaps, run.lost)
				}
				if k.prefer && len(run.handoffs) != 1 {
					t.Errorf("%+v: %d handoffs, want 1", k, len(run.handoffs))
				}
				for _, d := range run.handoffs {
					if d > st.ttl/10 {
						t.Errorf("%+v: a handoff left the lease leaderless for %v", k, d)
					}
				}
			}
		}
		if len(r.runs) != 4 {
			t.Errorf("%d columns, want 4", len(r.runs))
		}
		without, with := r.rates[0], r.rates[1]
		if f0, f1 := total(without[1]), total(with[1]); f0 == 0 || f1 > f0*1.02 {
			t.Errorf("a follower's requests per hour: %v without preference, %v with; want the same", without[1], with[1])
		}
		perRenewal := float64(time.Hour / lease.DefaultRenewInterval(lease.DefaultTTL))
		if extra := total(with[0]) - total(without[0]); extra < 0.9*perRenewal || extra > 1.1*perRenewal {
			t.Errorf("the leader's requests per hour: %v without preference, %v with; want one read more per renewal (%.0f)", without[0], with[0], perRenewal)
		}
		var sb strings.Builder
		deploys, reqs, _ := deployTables(config{deployTrials: 2, countFor: time.Minute}, []*deployResult{r})
		deploys.print(&sb, true)
		reqs.print(&sb, true)
		t.Log(sb.String())
		if !strings.Contains(sb.String(), "| mem | 2s | new started first | ") || !strings.Contains(sb.String(), "| 1 / 1 | ") {
			t.Errorf("the table has no row of mem whose deploys with preference changed leadership once:\n%s", sb.String())
		}
	})
}

// TestFareDeploy: a deploy's terms, begun before and after its start, are
// counted as changes after it, each with the leaderless time before it,
// a handoff's apart; a term that began before another ended overlaps it.
func TestFareDeploy(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	ended := func(tok uint64, r runner.Reason) runner.Demotion { return runner.Demotion{Token: tok, Reason: r} }
	// began and ended number the starts and ends in the order of their times.
	old := &contender{led: []tenure{{at(1), at(10), 1, 1, 2}}, demoted: []runner.Demotion{ended(1, runner.HandedOff)}}
	mid := &contender{led: []tenure{{at(12), at(20), 2, 3, 4}, {at(25), at(30), 4, 6, 8}}, demoted: []runner.Demotion{ended(2, runner.Stopped), ended(4, runner.LeaseLost)}}
	late := &contender{led: []tenure{{at(21), at(26), 3, 5, 7}, {at(31), time.Time{}, 5, 9, 0}}, demoted: []runner.Demotion{ended(3, runner.Stopped)}}
	run := fareDeploy([]*contender{late, old, mid}, at(5))
	want := deployRun{changes: 4, gaps: []time.Duration{2 * time.Second, time.Second, 0, time.Second}, handoffs: []time.Duration{2 * time.Second}, lost: 1, overlaps: 1}
	if !reflect.DeepEqual(run, want) {
		t.Errorf("fareDeploy = %+v, want %+v", run, want)
	}
}
