package azurelease

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what azurelease's store is and needs (driver.Store),
// registered for leasehold check and help: its grant is DataActions on the
// lease's container.
var Description = driver.Store{
	Scheme:     Scheme,
	Name:       "Azure Blob Storage",
	Judge:      lease.JudgedByStore,
	Holds:      "the container is there",
	Conditions: "not needed: Azure Blob grants and ends the blob's native lease itself",
	TTLs:       fmt.Sprintf("%ds to %ds, in whole seconds: the durations of Azure's blob leases", MinTTL/time.Second, MaxTTL/time.Second),
	Grants: []driver.Grant{
		{Actions: DataActions, Resource: "the container (.../storageAccounts/ACCOUNT/blobServices/default/containers/CONTAINER)",
			Why: "read the blob's properties; create the blob, write its metadata and lease it (a custom role: Storage Blob Data Contributor also grants delete)"},
	},
	Price: driver.Price{Service: "Azure Blob", Renew: "PUT lease/renew", Poll: "HEAD", Show: "PUT metadata"},
	// Azure's TTL is 15s at least: more reads, not a shorter TTL, make a
	// handover quicker.
	FollowerReads: 6,
}
