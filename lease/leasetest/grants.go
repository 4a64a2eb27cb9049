package leasetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Calls are the requests a backend sent, as a backend's test records them
// (by an HTTP client that labels each request): each label names the
// permissions the request needs and the resource, as the backend's
// driver.Store names them, "ACTION[, ACTION...] on RESOURCE" (an S3 GET of
// the lease's object: "s3:GetObject on arn:aws:s3:::BUCKET/KEY").
type Calls func() []string

// CheckCallsGranted checks a backend's driver.Store against the calls the
// backend makes: that its grants are enough and no more. It drives leases
// through every call a deployment makes: the store's check
// (driver.Verifier), Acquire, Renew, Observe and Release; a second
// contender's Acquire; Break (lease.Breaker) of that contender's term; and
// Keep (lease.Keeper) where the lease has it. open opens a lease of the key
// under test for an identity; other opens one on the same key through a
// client whose store the process has not checked yet (as another process
// would: another endpoint address, other keys or another client), whose
// check then finds the probe record that the first check left and reads
// it.
//
// It fails the test for each call that no grant allows on the resource it
// names, and for each action of a grant that was never called on that
// grant's resource, but for the grants that the backend never calls
// (driver.Grant.NotCalled). It leaves out the grants that only shard
// groups need (driver.Grant.Group), which shardtest.CheckCallsGranted
// checks.
func CheckCallsGranted(t *testing.T, store driver.Store, open, other func(identity string) lease.Lease, calls Calls) {
	t.Helper()
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	a := open("grants-a")
	if v, ok := a.(driver.Verifier); ok {
		must("Verify", v.Verify(ctx))
	}
	t1, err := a.Acquire(ctx)
	must("Acquire", err)
	t1, err = a.Renew(ctx, t1)
	must("Renew", err)
	_, err = a.Observe(ctx)
	must("Observe", err)
	must("Release", a.Release(ctx, t1))

	b := open("grants-b")
	_, err = b.Acquire(ctx)
	must("Acquire of the released lease by a second contender", err)
	if br, ok := a.(lease.Breaker); ok {
		rec, err := a.Observe(ctx)
		must("Observe of the second contender's term", err)
		_, err = br.Break(ctx, rec)
		must("Break", err)
	}
	if k, ok := b.(lease.Keeper); ok {
		t3, err := b.Acquire(ctx)
		must("Acquire of the broken lease", err)
		must("Keep", k.Keep(ctx, t3, time.Millisecond))
	}
	if v, ok := other("grants-c").(driver.Verifier); ok {
		must("Verify by another process", v.Verify(ctx))
	}

	CheckGrants(t, store, calls(), func(g driver.Grant) bool { return !g.Group })
}

// CheckGrants checks seen, the labels of the calls a backend sent (as
// Calls returns them), against the grants of store that scope selects:
// every call is allowed by one of them, and every action of each of them
// was called on its resource, but for the grants that the backend never
// calls (driver.Grant.NotCalled). A grant whose Resource ends in "*"
// allows its actions on every resource that begins with what precedes
// the "*". CheckCallsGranted checks a lease's grants with it (scope: not
// driver.Grant.Group), package shard's conformance suite a group's.
func CheckGrants(t *testing.T, store driver.Store, seen []string, scope func(driver.Grant) bool) {
	t.Helper()
	t.Logf("%s: calls %q", store.Scheme, seen)
	used := map[string]map[string]bool{} // by resource
	for _, label := range seen {
		actions, resource, ok := strings.Cut(label, " on ")
		if !ok {
			t.Fatalf("call label %q is not ACTION on RESOURCE", label)
		}
		for _, action := range strings.Split(actions, ", ") {
			if used[resource] == nil {
				used[resource] = map[string]bool{}
			}
			used[resource][action] = true
			if !granted(store, scope, action, resource) {
				t.Errorf("%s: the backend called %s on %s, which none of its grants allows", store.Scheme, action, resource)
			}
		}
	}
	for _, g := range store.Grants {
		if g.NotCalled || !scope(g) {
			continue
		}
		for _, action := range g.Actions {
			if !called(used, g, action) {
				t.Errorf("%s: the backend grants %s on %s, and never called it: not least privilege (calls seen: %v)", store.Scheme, action, g.Resource, used)
			}
		}
	}
}

// called reports whether action was called on a resource that g covers.
func called(used map[string]map[string]bool, g driver.Grant, action string) bool {
	for resource, actions := range used {
		if actions[action] && covers(g, resource) {
			return true
		}
	}
	return false
}

// covers reports whether g's Resource names resource, or, ending in "*",
// a prefix of it.
func covers(g driver.Grant, resource string) bool {
	if prefix, ok := strings.CutSuffix(g.Resource, "*"); ok {
		return strings.HasPrefix(resource, prefix)
	}
	return g.Resource == resource
}

// granted reports whether a grant of store that scope selects allows
// action on resource.
func granted(store driver.Store, scope func(driver.Grant) bool, action, resource string) bool {
	for _, g := range store.Grants {
		if scope(g) && covers(g, resource) && slices.Contains(g.Actions, action) {
			return true
		}
	}
	return false
}
