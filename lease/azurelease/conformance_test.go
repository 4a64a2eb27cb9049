package azurelease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestConformance runs the conformance suite in real time with Azure's
// shortest lease, 15s, so expiry is Azure's own: TakeoverOnlyAfterTTL waits
// for a 15s lease to lapse on the server. The subtests run in parallel;
// the longest waits about three TTLs.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.RunConformance(t, azureemu.New(t).Conformance())
}
