package azurelease_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
)

// TestRequestCounts counts the requests of each lease operation against
// the service. They set the cost of a lease (see the package doc): a
// renewal is one LeaseBlob renew and one SetBlobMetadata, which shows it,
// and a follower's read of a held lease one GetBlobProperties.
func TestRequestCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	leaderReqs, followerReqs := newCounter(), newCounter()
	leader := e.open(azureemu.NewClient(t, e.ConnectionString, leaderReqs), "jobs", "leader")
	follower := e.open(azureemu.NewClient(t, e.ConnectionString, followerReqs), "jobs", "follower")

	check := func(step string, c *counter, want map[string]int) {
		t.Helper()
		got := c.take()
		var parts []string
		for _, op := range slices.Sorted(maps.Keys(got)) {
			parts = append(parts, fmt.Sprintf("%s %d", op, got[op]))
		}
		t.Logf("%-44s %s", step, strings.Join(parts, ", "))
		if !maps.Equal(got, want) {
			t.Errorf("%s: requests %v, want %v", step, got, want)
		}
	}

	term, err := leader.Acquire(ctx)
	if err != nil {
		t.Fatalf("leader's Acquire: %v", err)
	}
	check("Acquire (the blob does not exist yet)", leaderReqs, map[string]int{"GetBlobProperties": 2, "PutBlob": 1, "LeaseBlob acquire": 1, "SetBlobMetadata": 1})
	for i := range 3 {
		if term, err = leader.Renew(ctx, term); err != nil {
			t.Fatalf("Renew %d: %v", i+1, err)
		}
		check(fmt.Sprintf("Renew %d", i+1), leaderReqs, map[string]int{"LeaseBlob renew": 1, "SetBlobMetadata": 1})
	}
	for i := range 3 {
		if _, err := follower.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("follower's Acquire %d: %v, want lease.ErrHeld", i+1, err)
		}
		check(fmt.Sprintf("follower's poll (Acquire, held) %d", i+1), followerReqs, map[string]int{"GetBlobProperties": 1})
	}
	if _, err := follower.Observe(ctx); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	check("Observe", followerReqs, map[string]int{"GetBlobProperties": 1})

	if _, err = leader.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("leader's second Acquire: %v, want lease.ErrHeld: its own term is live", err)
	}
	check("Acquire by the holder (refused: its own term is live)", leaderReqs, map[string]int{"GetBlobProperties": 1})

	if err := leader.Release(ctx, term); err != nil {
		t.Fatalf("Release: %v", err)
	}
	check("Release", leaderReqs, map[string]int{"SetBlobMetadata": 1, "LeaseBlob release": 1})
	if err := leader.Release(ctx, term); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	check("Release again (already released)", leaderReqs, map[string]int{"SetBlobMetadata": 1, "GetBlobProperties": 1})

	if _, err := follower.Acquire(ctx); err != nil {
		t.Fatalf("follower's Acquire of the released lease: %v", err)
	}
	check("Acquire of a released lease", followerReqs, map[string]int{"GetBlobProperties": 1, "LeaseBlob acquire": 1, "SetBlobMetadata": 1})

	if _, err := leader.Renew(ctx, term); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("deposed leader's Renew: %v, want lease.ErrLost", err)
	}
	check("Renew after being deposed", leaderReqs, map[string]int{"LeaseBlob renew": 1})
	if err := leader.Release(ctx, term); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("deposed leader's Release: %v, want lease.ErrLost", err)
	}
	check("Release after being deposed", leaderReqs, map[string]int{"SetBlobMetadata": 1, "GetBlobProperties": 1})

	// At the runner's defaults (TTL 15s: RenewInterval 5.625s, a follower's
	// read just after each renewal and five between: FollowerReads), per
	// hour:
	renewals := int(time.Hour / lease.DefaultRenewInterval(lease.DefaultTTL))
	t.Logf("per hour at the defaults: leader %d renewals and %d metadata writes; each follower %d reads", renewals, renewals, azurelease.Description.FollowerReads*renewals)
}
