package dynamolease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestConformance runs the conformance suite on each store, one item per
// lease in the target's table.
func TestConformance(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		storetest.RunConformance(t, tg.Conformance())
	})
}
