package s3cas

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/leasehold/leasehold/lease"
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
// is the driver's only error mapping. The result wraps both the sentinel and
// err, so errors.Is(err, lease.ErrConflict) and errors.As(err,
// &smithy.APIError) both work. When ctx has ended, ctx's own error is
// returned, unwrapped.
//
//   - 412 PreconditionFailed: lease.ErrConflict.
//   - 404 NoSuchKey: lease.ErrNoRecord from GetObject; lease.ErrConflict from
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
func (d *driver) classify(ctx context.Context, o op, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	code, status := "", 0
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		code = apiErr.ErrorCode()
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	what := fmt.Sprintf("s3cas: %s %s", o, d.url())
	switch {
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %s: the object's ETag is not the one expected: %w", lease.ErrConflict, what, err)
	case code == "NoSuchBucket":
		return fmt.Errorf("%w: %s: bucket %q does not exist: %w", lease.ErrNotFound, what, d.bucket, err)
	case code == "NoSuchKey" && o == opGet:
		return fmt.Errorf("%w: %s: %w", lease.ErrNoRecord, what, err)
	case code == "NoSuchKey":
		return fmt.Errorf("%w: %s: the object no longer exists: %w", lease.ErrConflict, what, err)
	case code == "NotImplemented" || status == http.StatusNotImplemented:
		return fmt.Errorf("%w: %s: the store does not implement a request the lease needs (S3 conditional writes: If-None-Match and If-Match on PutObject): %w", lease.ErrNotFound, what, err)
	case code == "RequestTimeTooSkewed":
		return fmt.Errorf("%w: %s: this machine's clock differs from the store's; the SDK corrects for it on the next call: %w", lease.ErrUnavailable, what, err)
	case code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || status == http.StatusForbidden:
		return fmt.Errorf("%w: %s: the credentials were refused (%s); the lease needs %v on arn:aws:s3:::%s/%s and %v on arn:aws:s3:::%s (without it S3 refuses a read of a missing object): %w",
			lease.ErrPermission, what, codeOrStatus(code, status), IAMActions, d.bucket, d.key, IAMBucketActions, d.bucket, err)
	}
	return fmt.Errorf("%w: %s: %w", lease.ErrUnavailable, what, err)
}

func codeOrStatus(code string, status int) string {
	if code != "" {
		return code
	}
	return fmt.Sprintf("HTTP %d", status)
}
