package dynamolease

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestReplicaAddedLaterIsSeen: a replica added to the table after Open
// checked it is seen by the lease's next read once the check is older
// than tableRecheck, and refused with lease.ErrUnsafeStore. Not parallel:
// it shortens tableRecheck.
func TestReplicaAddedLaterIsSeen(t *testing.T) {
	defer func(d time.Duration) { tableRecheck = d }(tableRecheck)
	tableRecheck = 0
	var replicated atomic.Bool
	srv := storetest.NewServer(t, func(r *http.Request) storetest.Answer {
		switch {
		case awstest.ByOperation(r) != "DescribeTable":
			return jsonAnswer(200, `{}`)
		case replicated.Load():
			return jsonAnswer(200, globalTable("EVENTUAL", "eu-west-1"))
		}
		return leaseTable
	})
	l, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(srv)}, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatalf("Open of a table without replicas: %v", err)
	}
	replicated.Store(true)
	_, err = l.Observe(t.Context())
	awstest.CheckError(t, "a read after a replica was added", err, lease.ErrUnsafeStore, "replicated in the Regions eu-west-1, us-east-1", "")
}
