package azurelease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestMain warms Azurite up, then raises -parallel, unless given: the
// integration tests spend nearly all their time waiting for Azure leases
// to lapse (15s each), not computing (see storetest.Main).
func TestMain(m *testing.M) {
	azureemu.WarmUp()
	storetest.Main(m)
}
