package s3cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// ProbeSuffix ends the key of the probe object: the object next to the
// lease's (KEY.leasehold-probe) that Verify writes to check that the store
// enforces conditional writes. It holds no lease; deleting it is harmless.
const ProbeSuffix = ".leasehold-probe"

// IAMProbeActions are the actions Verify calls on the probe object
// (arn:aws:s3:::BUCKET/KEY.leasehold-probe), before a process first writes
// to a bucket. A least-privilege policy grants them there, next to
// IAMActions on the lease's object.
var IAMProbeActions = []string{"s3:PutObject"}

// probeBody is what the probe object holds.
const probeBody = `{"leasehold_probe":1,"note":"written by leasehold to check that this store refuses conditional writes whose condition fails; it holds no lease and may be deleted"}`

// verdicts keeps each store's verdict (per endpoint, region and bucket).
var verdicts driver.Verdicts

// Verify implements driver.Verifier. Before a contender first writes to
// the lease, it checks that the store refuses conditional writes whose
// condition fails, on the probe object, never on the lease's own:
//
//  1. PutObject If-None-Match: * creates the probe object, or is refused
//     with 412 because it exists (an earlier check made it);
//  2. PutObject If-None-Match: * again: the object exists, so the store
//     must refuse it with 412;
//  3. PutObject If-Match: an ETag the object cannot have: the store must
//     refuse it with 412.
//
// A store that applies the write in step 2 or 3 ignores the condition and
// is reported as lease.ErrUnsafeStore. The verdict is kept per endpoint,
// region and bucket for the life of the process, so the check costs three
// PUT requests per process and bucket; a failure to tell (throttling,
// refused credentials) is not kept, and the next write checks again.
//
// It cannot catch a store that checks conditions but not atomically: two
// writes that race past the same check both land there, and one at a time
// looks correct.
func (d *conn) Verify(ctx context.Context) error {
	o := d.client.Options()
	return verdicts.Check(ctx, aws.ToString(o.BaseEndpoint)+" "+o.Region+" "+d.bucket, d.probe)
}

// probe makes the three writes Verify describes.
func (d *conn) probe(ctx context.Context) error {
	if err := d.probePut(ctx, opProbeCreate, &s3.PutObjectInput{IfNoneMatch: aws.String("*")}); err != nil && !errors.Is(err, driver.ErrConflict) {
		return err
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	wrong := `"` + hex.EncodeToString(b[:]) + `"`
	for _, step := range []struct {
		op   op
		in   *s3.PutObjectInput
		what string
	}{
		{opProbeCreate, &s3.PutObjectInput{IfNoneMatch: aws.String("*")}, "a PutObject with If-None-Match: * on an object that exists"},
		{opProbeReplace, &s3.PutObjectInput{IfMatch: &wrong}, "a PutObject with If-Match: " + wrong + ", an ETag the object does not have"},
	} {
		err := d.probePut(ctx, step.op, step.in)
		switch {
		case err == nil:
			return fmt.Errorf("%w: s3cas: %s: the store applied %s, which it must refuse (412 PreconditionFailed): it ignores the conditions of conditional writes, so contenders starting together could each create or take over the lease and lead at once; use a store that enforces If-None-Match and If-Match on PutObject (Amazon S3; MinIO since RELEASE.2024-05-07)",
				lease.ErrUnsafeStore, d.url(step.op), step.what)
		case !errors.Is(err, driver.ErrConflict):
			return err
		}
	}
	return nil
}

// probePut writes the probe object with in's condition, in one request
// bounded by the lease's CallTimeout.
func (d *conn) probePut(ctx context.Context, o op, in *s3.PutObjectInput) error {
	return driver.Call(ctx, d.callTimeout, func(ctx context.Context) error {
		_, err := d.put(ctx, o, []byte(probeBody), in)
		return err
	})
}
