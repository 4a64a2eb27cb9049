package driver_test

import (
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestCorruptf(t *testing.T) {
	err := driver.Corruptf("token %d is odd", 3)
	if !errors.Is(err, lease.ErrCorrupt) || err.Error() != "lease: not a lease record: token 3 is odd" {
		t.Errorf("Corruptf = %q (matches ErrCorrupt: %t), want %q matching ErrCorrupt", err, errors.Is(err, lease.ErrCorrupt), "lease: not a lease record: token 3 is odd")
	}
}
