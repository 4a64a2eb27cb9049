package s3lease

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// op is the request an error came from.
type op int

const (
	opGet     op = iota // GetObject
	opCreate            // PutObject with If-None-Match: *
	opReplace           // PutObject with If-Match: <etag>
	opList              // ListObjectsV2 of a shard group's prefix
)

func (o op) String() string {
	switch o {
	case opGet:
		return "GetObject"
	case opCreate:
		return "PutObject (If-None-Match: *)"
	case opList:
		return "ListObjectsV2"
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
//   - KeyTooLongError: lease.ErrInvalid: the key cannot be stored, however
//     often the write is tried.
//   - 501 NotImplemented: lease.ErrNotFound: the store has no conditional
//     writes, so it cannot hold a lease.
//   - 403 (AccessDenied, InvalidAccessKeyId, SignatureDoesNotMatch, ...):
//     lease.ErrPermission, naming the object and the actions it needs (on
//     a directory bucket, s3express:CreateSession), or, when no request
//     was sent because no credentials were found, saying where the SDK
//     looked (awsdriver.NoCredentials); except RequestTimeTooSkewed, which
//     the SDK corrects on the next call.
//   - A directory bucket's CreateSession that failed is classified by its
//     code and status as above, though the SDK gives them only as text.
//   - Everything else, among it 409 ConditionalRequestConflict, 503
//     SlowDown, 500, 502, 504, connection errors and timeouts:
//     lease.ErrUnavailable, which the caller may retry.
func (d *conn) classify(ctx context.Context, o op, err error) error {
	return awsdriver.Classify(ctx, err, fmt.Sprintf("s3lease: %s %s", o, d.url()), func(f awsdriver.Failure) error {
		if f.Code == "" && f.Status == 0 {
			f.Code, f.Status = sessionFailure(f.Err)
		}
		switch code, status := f.Code, f.Status; {
		case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
			return f.Wrap(driver.ErrConflict, "the object's ETag is not the one expected")
		case code == "NoSuchBucket":
			return f.Wrap(lease.ErrNotFound, fmt.Sprintf("bucket %q does not exist", d.bucket))
		case code == "NoSuchKey" && o == opGet:
			return f.Wrap(lease.ErrNoRecord, "")
		case code == "NoSuchKey":
			return f.Wrap(driver.ErrConflict, "the object no longer exists")
		case code == "KeyTooLongError":
			return f.Wrap(lease.ErrInvalid, fmt.Sprintf("the key is %d bytes long, more than the store allows", len(d.key)))
		case code == "NotImplemented" || status == http.StatusNotImplemented:
			return f.Wrap(lease.ErrNotFound, "the store does not implement a request the lease needs (S3 conditional writes: If-None-Match and If-Match on PutObject)")
		case code == "RequestTimeTooSkewed":
			return f.Wrap(lease.ErrUnavailable, "this machine's clock differs from the store's; the SDK corrects for it on the next call")
		case (code == "AccessDenied" || status == http.StatusForbidden) && o == opList:
			return f.Wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (%s); a shard group needs %v on arn:aws:s3:::%s, with s3:prefix %q allowed", f.CodeOrStatus(), IAMGroupActions, d.bucket, d.key+"*"))
		case code == "AccessDenied" || code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || status == http.StatusForbidden:
			return f.Wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (%s); %s", f.CodeOrStatus(), d.needs()))
		}
		return nil
	})
}

// createSessionError is how the SDK reports, in text only, the failed
// CreateSession that a request to a directory bucket needs first: its
// S3 Express identity resolver does not wrap the error. Compiled when
// first used, not at every process's start (17 KB at init, issue 38).
var createSessionError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`operation error S3: CreateSession, https? response error StatusCode: (\d+),.*?api error (\w+):`)
})

// sessionFailure returns the error code and HTTP status of a failed
// CreateSession named in err's text, or "" and 0.
func sessionFailure(err error) (code string, status int) {
	m := createSessionError().FindStringSubmatch(err.Error())
	if m == nil {
		return "", 0
	}
	status, _ = strconv.Atoi(m[1])
	return m[2], status
}

// directoryBucketSuffix ends the name of every S3 directory bucket (S3
// Express One Zone): "leases--usw2-az1--x-s3".
const directoryBucketSuffix = "--x-s3"

// needs says which grants a request to the object needs.
func (d *conn) needs() string {
	switch {
	case strings.HasSuffix(d.bucket, directoryBucketSuffix):
		// A directory bucket authorises every object request through a
		// session that CreateSession opens; the object actions play no
		// part.
		return fmt.Sprintf("%q is a directory bucket, where S3 authorises every request through a session: the lease needs s3express:CreateSession (session mode ReadWrite, the default) on arn:aws:s3express:%s:ACCOUNT:bucket/%s",
			d.bucket, d.client.Options().Region, d.bucket)
	case d.probe:
		return fmt.Sprintf("checking that the store enforces conditional writes, before the first write, needs %v on the probe object arn:aws:s3:::%s/%s and %v on arn:aws:s3:::%s",
			IAMProbeActions, d.bucket, d.key, IAMBucketActions, d.bucket)
	}
	return fmt.Sprintf("the lease needs %v on arn:aws:s3:::%s/%s and %v on arn:aws:s3:::%s (without it S3 refuses a read of a missing object)",
		IAMActions, d.bucket, d.key, IAMBucketActions, d.bucket)
}
