package s3cas

import (
	"context"
	"fmt"
	"net/http"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// op is the driver call an error came from.
type op int

const (
	opGet     op = iota // GetObject
	opCreate            // PutObject with If-None-Match: *
	opReplace           // PutObject with If-Match: <etag>
)

func (o op) String() string {
	switch o {
	case opGet:
		return "GetObject"
	case opCreate:
		return "PutObject (If-None-Match: *)"
	default:
		return "PutObject (If-Match)"
	}
}

// classify maps an error of the S3 SDK to the lease package's sentinels. It
// is the driver's only error mapping, on top of awsdriver.Classify. The
// result wraps both the sentinel and err, so errors.Is(err,
// driver.ErrConflict) and errors.As(err, &smithy.APIError) both work. When
// ctx has ended, ctx's own error is returned, unwrapped.
//
//   - 412 PreconditionFailed: driver.ErrConflict.
//   - 404 NoSuchKey: lease.ErrNoRecord from GetObject; driver.ErrConflict from
//     a conditional put (If-Match on a missing key).
//   - NoSuchBucket: lease.ErrNotFound, naming the bucket.
//   - 501 NotImplemented: lease.ErrNotFound: the store has no conditional
//     writes, so it cannot hold a lease.
//   - 403 (AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, ...):
//     lease.ErrPermission, naming the object and the actions it needs;
//     except RequestTimeTooSkewed, which the SDK corrects on the next call.
//   - Everything else, among it 409 ConditionalRequestConflict, 503
//     SlowDown, 500, 502, 504, connection errors and timeouts:
//     lease.ErrUnavailable, which the caller may retry.
func (d *conn) classify(ctx context.Context, o op, err error) error {
	return awsdriver.Classify(ctx, err, fmt.Sprintf("s3cas: %s %s", o, d.url()), func(f awsdriver.Failure) error {
		switch code, status := f.Code, f.Status; {
		case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
			return f.Wrap(driver.ErrConflict, "the object's ETag is not the one expected")
		case code == "NoSuchBucket":
			return f.Wrap(lease.ErrNotFound, fmt.Sprintf("bucket %q does not exist", d.bucket))
		case code == "NoSuchKey" && o == opGet:
			return f.Wrap(lease.ErrNoRecord, "")
		case code == "NoSuchKey":
			return f.Wrap(driver.ErrConflict, "the object no longer exists")
		case code == "NotImplemented" || status == http.StatusNotImplemented:
			return f.Wrap(lease.ErrNotFound, "the store does not implement a request the lease needs (S3 conditional writes: If-None-Match and If-Match on PutObject)")
		case code == "RequestTimeTooSkewed":
			return f.Wrap(lease.ErrUnavailable, "this machine's clock differs from the store's; the SDK corrects for it on the next call")
		case code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || status == http.StatusForbidden:
			return f.Wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (%s); the lease needs %v on arn:aws:s3:::%s/%s and %v on arn:aws:s3:::%s (without it S3 refuses a read of a missing object)",
				f.CodeOrStatus(), IAMActions, d.bucket, d.key, IAMBucketActions, d.bucket))
		}
		return nil
	})
}
