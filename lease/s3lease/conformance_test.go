package s3lease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/storetest"
)

func TestConformance(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		storetest.RunConformance(t, tg.Conformance())
	})
}
