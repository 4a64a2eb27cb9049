package shardtest

import (
	"testing"

	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// CheckCallsGranted checks the grants that store declares for shard groups
// (driver.Grant.Group) against the calls a group sends: two workers of
// the group whose prefix is group start, balance, and leave one after the
// other, on the store cfg describes. calls returns the labels of the
// requests sent meanwhile, as leasetest.Calls does, with the group's
// prefix written GROUP ("s3:GetObject on
// arn:aws:s3:::BUCKET/GROUP/assignment"). It fails the test for each call
// that no group grant allows, and for each action of a group grant that
// was never called (see leasetest.CheckGrants).
func CheckCallsGranted(t *testing.T, store driver.Store, cfg Config, group string, calls leasetest.Calls) {
	t.Helper()
	cfg = cfg.withDefaults(t)
	e := &env{t: t, cfg: cfg, clients: cfg.NewStore(t)}
	f := newFleet(e, groupShards)
	f.group = group
	f.start("w1")
	f.start("w2")
	f.settle("start of two workers", 0)
	f.leave("w2")
	f.settle("leave of w2", f.o.Starts())
	f.leave("w1")
	leasetest.CheckGrants(t, store, calls(), func(g driver.Grant) bool { return g.Group })
}
