package s3lease

import (
	"context"
	"strconv"

	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// ProbeSuffix ends the key of the probe object: the object next to the
// lease's (KEY.leasehold-probe) that Verify writes to check that the store
// enforces conditional writes. It holds no lease; deleting it is harmless.
const ProbeSuffix = driver.ProbeSuffix

// IAMProbeActions are the actions Verify calls on the probe object
// (arn:aws:s3:::BUCKET/KEY.leasehold-probe), before a process first writes
// to a store. A least-privilege policy grants them there, next to
// IAMActions on the lease's object, and lets IAMBucketActions list the
// probe object's key too.
var IAMProbeActions = []string{"s3:GetObject", "s3:PutObject"}

// Verify implements driver.Verifier. Before a contender first writes to
// the lease, it checks that the store refuses conditional writes whose
// condition fails, on the probe object, never on the lease's own, with
// driver.Probe: PutObject If-None-Match: * twice (or a GetObject of the
// probe object when it exists), then PutObject If-Match on its ETag, and
// again on that ETag, now stale. A store that applies a write it must
// refuse, twice in a row, is reported as lease.ErrUnsafeStore, naming the
// write. The verdict is kept for the life of the process per store, as
// this client reaches it: endpoint, region, addressing, bucket and access
// key.
//
// It cannot catch a store that checks conditions but not atomically: two
// writes that race past the same check both land there, and one at a time
// looks correct.
func (d *conn) Verify(ctx context.Context) error {
	o := d.client.Options()
	id := awsdriver.StoreID(ctx, "s3", o.BaseEndpoint, o.Region, o.Credentials, "path-style="+strconv.FormatBool(d.pathStyle || o.UsePathStyle)+" "+d.bucket)
	probe := *d
	probe.key, probe.probe = d.key+ProbeSuffix, true
	return driver.VerifyStore(ctx, id, driver.Probe{
		Key:     &probe,
		Name:    "s3lease: " + probe.url(),
		Create:  "a PutObject with If-None-Match: *",
		Replace: "a PutObject with If-Match",
		Remedy: "use a store that enforces If-None-Match and If-Match on PutObject (Amazon S3; MinIO since RELEASE.2024-05-07), " +
			"refusing them with 412 PreconditionFailed",
		CallTimeout: d.callTimeout,
	})
}
