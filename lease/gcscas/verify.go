package gcscas

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// ProbeSuffix ends the name of the probe object: the object next to the
// lease's (OBJECT.leasehold-probe) that Verify writes to check that the
// store enforces generation preconditions. It holds no lease; deleting it
// is harmless. It needs storage.objects.create, which a grant on the lease
// objects' prefix covers.
const ProbeSuffix = ".leasehold-probe"

// probeBody is what the probe object holds.
const probeBody = `{"leasehold_probe":1,"note":"written by leasehold to check that this store refuses writes whose generation precondition fails; it holds no lease and may be deleted"}`

// verdicts keeps each store's verdict, per client and bucket.
var verdicts driver.Verdicts

// Verify implements driver.Verifier. Before a contender first writes to
// the lease, it checks that the store refuses writes whose generation
// precondition fails, on the probe object, never on the lease's own:
//
//  1. an upload with ifGenerationMatch=0 creates the probe object, or is
//     refused with 412 because it exists (an earlier check made it);
//  2. the same upload again: the object exists, so the store must refuse
//     it with 412;
//  3. an upload with ifGenerationMatch=1, a generation no object has
//     (generations are timestamps in microseconds): the store must refuse
//     it with 412.
//
// Cloud Storage's JSON API always enforces them; an emulator or a
// look-alike store may not. The verdict is kept per client and bucket for
// the life of the process: three uploads (Class A operations) per process
// and bucket. It cannot catch a store that checks preconditions but not
// atomically.
func (d *conn) Verify(ctx context.Context) error {
	return verdicts.Check(ctx, fmt.Sprintf("%p %s", d.client, d.bucket), d.probeStore)
}

// probeStore makes the three uploads Verify describes.
func (d *conn) probeStore(ctx context.Context) error {
	if err := d.probeUpload(ctx, opProbeCreate, storage.Conditions{DoesNotExist: true}); err != nil && !errors.Is(err, driver.ErrConflict) {
		return err
	}
	for _, step := range []struct {
		op   op
		cond storage.Conditions
		what string
	}{
		{opProbeCreate, storage.Conditions{DoesNotExist: true}, "an upload with ifGenerationMatch=0 over an object that exists"},
		{opProbeReplace, storage.Conditions{GenerationMatch: 1}, "an upload with ifGenerationMatch=1, a generation the object does not have"},
	} {
		err := d.probeUpload(ctx, step.op, step.cond)
		switch {
		case err == nil:
			return fmt.Errorf("%w: gcscas: gs://%s/%s%s: the store applied %s, which it must refuse (412 conditionNotMet): it ignores generation preconditions, so contenders starting together could each create or take over the lease and lead at once; use Cloud Storage itself, or a store that enforces ifGenerationMatch",
				lease.ErrUnsafeStore, d.bucket, d.object, ProbeSuffix, step.what)
		case !errors.Is(err, driver.ErrConflict):
			return err
		}
	}
	return nil
}

// probeUpload writes the probe object under cond, in one request bounded
// by the lease's CallTimeout.
func (d *conn) probeUpload(ctx context.Context, o op, cond storage.Conditions) error {
	return driver.Call(ctx, d.callTimeout, func(ctx context.Context) error {
		_, err := d.upload(ctx, d.probe, o, []byte(probeBody), cond)
		return err
	})
}
