package azurelease

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam31InfiniteLeaseCannotHandOff (found open, now fixed): on an
// InfiniteLease the LeaseBlob change keeps the infinite duration, so a
// lease handed to a successor that never came (it crashed, or an
// operator's --to named nobody) was held by nobody, for ever. An infinite
// lease is no lease.Handoffer now, so the runner refuses its Prefer; a
// lease of fixed duration still is.
func TestRedTeam31InfiniteLeaseCannotHandOff(t *testing.T) {
	for _, infinite := range []bool{false, true} {
		l, err := Open(t.Context(), Options{ConnectionString: azuriteCS, Container: "leases", Blob: "b", InfiniteLease: infinite}, lease.Options{Identity: "a", TTL: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := l.(lease.Handoffer); ok == infinite {
			t.Errorf("InfiniteLease %t: lease.Handoffer %t, want %t", infinite, ok, !infinite)
		}
		cands, err := Open(t.Context(), Options{ConnectionString: azuriteCS, Container: "leases", Blob: "b.candidates", InfiniteLease: infinite}, lease.Options{Identity: "a", TTL: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = runner.New(runner.Config{Lease: l, Candidates: cands, Prefer: "1", Task: func(context.Context) error { return nil }})
		if refused := err != nil && strings.Contains(err.Error(), "lease.Handoffer"); refused != infinite {
			t.Errorf("InfiniteLease %t: runner.New with a Prefer: %v, want refused %t", infinite, err, infinite)
		}
	}
}
