package azurelease_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestCallsAreGranted: the operations azurelease sends in a lease's life
// need exactly the data actions Description grants (the grants leasehold
// help prints and the Terraform role holds): Get Blob Properties needs
// blob read; Put Blob, Set Blob Metadata and every Lease Blob action, blob
// write, as the Blob service REST reference gives each operation's RBAC
// action (and a SAS's write permission covers "lease the blob"). None
// needs delete.
func TestCallsAreGranted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	requests := newCounter()
	client := azureemu.NewClient(t, e.ConnectionString, requests)
	container := azurelease.Description.Grants[0].Resource
	calls := func() []string {
		var out []string
		for _, op := range slices.Sorted(maps.Keys(requests.take())) {
			action := "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write"
			if op == "GetBlobProperties" {
				action = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read"
			}
			t.Logf("%s needs %s", op, action)
			out = append(out, action+" on "+container)
		}
		return out
	}
	if l := e.open(client, "grants", "x"); l.Judge() != azurelease.Description.Judge {
		t.Errorf("Judge() = %v, Description.Judge = %v", l.Judge(), azurelease.Description.Judge)
	}
	leasetest.CheckCallsGranted(t, azurelease.Description,
		func(id string) lease.Lease { return e.open(client, "grants", id) },
		func(id string) lease.Lease {
			return e.open(azureemu.NewClient(t, e.ConnectionString, requests), "grants", id)
		},
		calls)
}
