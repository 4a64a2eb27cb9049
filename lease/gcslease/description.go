package gcslease

import (
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what gcslease's store is and needs (driver.Store),
// registered for leasehold check and help: its grants are IAMPermissions on
// the lease's object and on the probe object, which Verify overwrites.
var Description = driver.Store{
	Scheme: Scheme,
	Name:   "Google Cloud Storage",
	Judge:  lease.JudgedByContender,
	Holds:  "the bucket is there",
	TTLs:   "at least " + MinTTL.String() + ": Cloud Storage allows about one write per second to an object",
	Probe:  "four uploads with ifGenerationMatch on the probe object beside the lease (OBJECT" + ProbeSuffix + "), never the lease itself",
	Grants: []driver.Grant{
		{Actions: IAMPermissions, Resource: "projects/_/buckets/BUCKET/objects/OBJECT", Why: "read the lease, create it, and overwrite it (Cloud Storage allows an overwrite only with storage.objects.delete too)"},
		{Actions: IAMPermissions, Resource: "projects/_/buckets/BUCKET/objects/OBJECT" + ProbeSuffix, Probe: true, Why: "check, before the first write, that the store enforces generation preconditions: the probe creates, reads and overwrites its object"},
	},
	Price: driver.Price{Service: "Cloud Storage", Renew: "POST", Poll: "GET"},
}
