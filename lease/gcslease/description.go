package gcslease

import (
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what gcslease's store is and needs (driver.Store),
// registered for leasehold check and help: its grants are IAMPermissions on
// the lease's object and on the probe object, which Verify overwrites; a
// shard group's workers (Objects) need IAMPermissions on the group's
// objects and IAMGroupPermissions on the bucket.
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
		{Actions: IAMPermissions, Resource: "projects/_/buckets/BUCKET/objects/GROUP/*", Group: true, Why: "a shard group's objects: each worker's liveness lease and acknowledgement, the assigner's lease, the assignment, and their probe objects"},
		{Actions: IAMGroupPermissions, Resource: "projects/_/buckets/BUCKET", Group: true, Why: "list the shard group's objects (objects.list with the prefix GROUP/), granted under the condition that the listing's prefix (storage.googleapis.com/objectListPrefix) begins with GROUP/"},
	},
	Price: driver.Price{Service: "Cloud Storage", Renew: "POST", Poll: "GET"},
}
