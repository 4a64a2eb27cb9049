package s3lease

import (
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what s3lease's store is and needs (driver.Store),
// registered for leasehold check and help: its grants are IAMActions on the
// lease's object, IAMProbeActions on the probe object and IAMBucketActions
// on the bucket; a shard group's workers (Objects) also need IAMActions
// on the group's keys and IAMGroupActions on the bucket.
var Description = driver.Store{
	Scheme: Scheme,
	Name:   "Amazon S3",
	Judge:  lease.JudgedByContender,
	Holds:  "the bucket is there",
	Probe:  "four PutObjects with If-None-Match: * and If-Match on the probe object beside the lease (KEY" + ProbeSuffix + "), never the lease itself",
	Grants: []driver.Grant{
		{Actions: IAMActions, Resource: "arn:aws:s3:::BUCKET/KEY", Why: "read and write the lease"},
		{Actions: IAMProbeActions, Resource: "arn:aws:s3:::BUCKET/KEY" + ProbeSuffix, Probe: true, Why: "check, before the first write, that the store enforces conditional writes"},
		{Actions: IAMBucketActions, Resource: "arn:aws:s3:::BUCKET", Condition: driver.Condition{Key: "s3:prefix", Values: []string{"KEY", "KEY" + ProbeSuffix}}, NotCalled: true, Why: "never called: without it S3 answers a read of a missing object with 403, not 404, and a lease never acquired could not be acquired"},
		{Actions: IAMActions, Resource: "arn:aws:s3:::BUCKET/GROUP/*", Group: true, Why: "a shard group's objects: each worker's liveness lease and acknowledgement, the assigner's lease, the assignment, and their probe objects"},
		{Actions: IAMGroupActions, Resource: "arn:aws:s3:::BUCKET", Condition: driver.Condition{Key: "s3:prefix", Values: []string{"GROUP/"}}, Group: true, Why: "list the shard group's keys (ListObjectsV2 with the prefix GROUP/)"},
	},
	Price: driver.Price{Service: "S3", Renew: "PUT", Poll: "GET"},
}
