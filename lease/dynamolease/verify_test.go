package dynamolease

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// TestIgnoringEndpointRefused: a DynamoDB-compatible endpoint that answers
// 200 to every conditional PutItem and ignores its condition is refused
// with lease.ErrUnsafeStore, naming the probe item and the step, and the
// lease's own item is never written, by either of two contenders.
func TestIgnoringEndpointRefused(t *testing.T) {
	t.Parallel()
	f := newIgnoringTable(t)
	for _, id := range []string{"worker-1", "worker-2"} {
		l, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(f.Server)}, lease.Options{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Acquire(t.Context())
		if !errors.Is(err, lease.ErrUnsafeStore) || lease.Retryable(err) ||
			!strings.Contains(err.Error(), "dynamodb://leases/jobs"+driver.ProbeSuffix) ||
			!strings.Contains(err.Error(), "step 2, create-if-absent again, over the probe record that step 1 created: the store applied a PutItem with ConditionExpression attribute_not_exists(key) on a record that exists") {
			t.Errorf("%s's Acquire on an endpoint that ignores conditions: %v, want lease.ErrUnsafeStore, not retryable, naming the probe item and the step", id, err)
		}
	}
	if n := f.writes("jobs"); n != 0 {
		t.Errorf("the lease's item was written %d times, want never", n)
	}
	if n := f.writes("jobs" + driver.ProbeSuffix); n != 4 {
		t.Errorf("the probe item was written %d times, want 4 (two probes of two writes; the verdict kept after)", n)
	}
}
