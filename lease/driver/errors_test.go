package driver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestCorruptf(t *testing.T) {
	err := driver.Corruptf("token %d is odd", 3)
	if !errors.Is(err, lease.ErrCorrupt) || err.Error() != "lease: not a lease record: token 3 is odd" {
		t.Errorf("Corruptf = %q (matches ErrCorrupt: %t), want %q matching ErrCorrupt", err, errors.Is(err, lease.ErrCorrupt), "lease: not a lease record: token 3 is odd")
	}
}

// TestCallAfterContextEnded: a call whose context has already ended is
// not begun, since an SDK may finish it under a context of its own (the
// AWS SDK's STS fetch for a role= URL reached the network after Open had
// returned context.Canceled, and FuzzOpen's tripwire counted it).
func TestCallAfterContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := driver.Call(ctx, time.Second, func(context.Context) error { ran = true; return nil })
	if ran || err != context.Canceled {
		t.Errorf("Call under a cancelled context: ran f %t, returned %v; want f not run and context.Canceled", ran, err)
	}
}
