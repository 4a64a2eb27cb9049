package gcslease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease/internal/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunConformance(t, newStore(t).Conformance(t))
}
