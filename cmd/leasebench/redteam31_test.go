package main

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam31FareDeployOverlapInOneInstant: fareDeploy judges overlaps
// of terms recorded in a synctest bubble (TestBenchDeploy), where time
// stands still while goroutines run, so that a term can begin, and an
// earlier one end after it, at one instant. Here the terms are two
// contenders' of two leases (each leads its own), which fareDeploy is
// given as one lease's: b's task starts, and then, at the same instant,
// a's ends. They overlap, and fareDeploy must say so: equal times do not
// tell which came first.
func TestRedTeam31FareDeployOverlapInOneInstant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, why, err := setupStore(t.Context(), "mem", 2*time.Second)
		if st == nil {
			t.Fatal(why, err)
		}
		start := func(name string) *contender {
			open, err := st.connect(st.endpoint)
			if err != nil {
				t.Fatal(err)
			}
			l, err := openRetrying(t.Context(), open, name, lease.Options{Identity: name, TTL: st.ttl})
			if err != nil {
				t.Fatal(err)
			}
			c, err := variant{}.start(t.Context(), l)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		a := start("a-" + randomHex(4))
		synctest.Wait()
		if !a.leads() {
			t.Fatal("a does not lead")
		}
		time.Sleep(st.ttl)
		from := time.Now()
		b := start("b-" + randomHex(4))
		synctest.Wait()
		if !b.leads() {
			t.Fatal("b does not lead")
		}
		a.stop() // a's task ends after b's began, at the same instant
		defer b.stop()
		if run := fareDeploy([]*contender{a, b}, from.Add(-time.Nanosecond)); run.overlaps != 1 {
			t.Errorf("fareDeploy of a term begun while another still ran, both at one instant: %d overlaps, want 1 (%+v, %+v)", run.overlaps, a.tenures(), b.tenures())
		}
	})
}
