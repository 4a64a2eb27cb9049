package gcslease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/emulators/gcsemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// Timing of the backend-specific tests: the shortest TTL gcslease accepts.
const (
	testTTL         = gcslease.MinTTL
	testCallTimeout = gcsemu.CallTimeout
)

func testOptions(id string) lease.Options {
	return lease.Options{Identity: id, TTL: testTTL, CallTimeout: testCallTimeout}
}

func TestMain(m *testing.M) { storetest.Main(m) }

// store is the Cloud Storage under test (see gcsemu.Store).
type store struct{ *gcsemu.Store }

// newStore returns the store for a test, or skips it naming the variables
// to set, and deletes what the test wrote when it ends.
func newStore(t *testing.T) *store {
	t.Helper()
	return &store{gcsemu.New(t)}
}
