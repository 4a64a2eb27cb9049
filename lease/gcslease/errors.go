package gcslease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/api/googleapi"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// op is the driver call an error came from.
type op int

const (
	opGet     op = iota // a read of the object
	opCreate            // an upload with ifGenerationMatch=0
	opReplace           // an upload with ifGenerationMatch=<generation>
	opList              // objects.list of a shard group's prefix
)

func (o op) String() string {
	switch o {
	case opGet:
		return "read"
	case opCreate:
		return "write (ifGenerationMatch=0)"
	case opList:
		return "list"
	default:
		return "write (ifGenerationMatch)"
	}
}

// classify maps an error of the Cloud Storage JSON API client to the lease package's
// sentinels: the driver's only error mapping. The result wraps both the
// sentinel and err, so errors.Is(err, driver.ErrConflict) and errors.As(err,
// &googleapi.Error) both work. When ctx has ended, ctx's own error is
// returned, unwrapped, for lease.Call to tell the caller's cancellation
// from its own CallTimeout.
//
//   - 412 Precondition Failed: driver.ErrConflict.
//   - 404 on a read: lease.ErrNoRecord. Cloud Storage answers a read in a
//     missing bucket with the same 404 as a read of a missing object; the
//     first write tells them apart.
//   - 404 on a write: lease.ErrNotFound naming the bucket, as a write to a
//     missing object creates it.
//   - 400 on a write: lease.ErrInvalid: the object's name is refused (too
//     long, or not one Cloud Storage allows), however often it is tried.
//   - 401, 403: lease.ErrPermission, naming the object and IAMPermissions.
//   - Everything else, among it 429 (more than about one write per second
//     to the object), 408, 500, 502, 503, 504, connection errors and
//     timeouts: lease.ErrUnavailable, which the caller may retry.
func (d *conn) classify(ctx context.Context, o op, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	what := fmt.Sprintf("gcslease: %s %s", o, d.url())
	wrap := func(sentinel error, detail string) error {
		if detail == "" {
			return fmt.Errorf("%w: %s: %w", sentinel, what, err)
		}
		return fmt.Errorf("%w: %s: %s: %w", sentinel, what, detail, err)
	}
	var status int
	var apiErr *googleapi.Error
	if errors.As(err, &apiErr) {
		status = apiErr.Code
	}
	switch {
	case status == http.StatusPreconditionFailed:
		return wrap(driver.ErrConflict, "the object's generation is not the one expected")
	case o == opGet && status == http.StatusNotFound:
		return wrap(lease.ErrNoRecord, "")
	case status == http.StatusNotFound:
		return wrap(lease.ErrNotFound, fmt.Sprintf("bucket %q does not exist", d.bucket))
	case status == http.StatusBadRequest && (o == opCreate || o == opReplace):
		return wrap(lease.ErrInvalid, fmt.Sprintf("the store refused the write (HTTP 400): is %q (%d bytes) a name it allows?", d.object, len(d.object)))
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && o == opList:
		return wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (HTTP %d); a shard group needs %s on bucket %s, listing the prefix %q",
			status, strings.Join(IAMGroupPermissions, ", "), d.bucket, d.object))
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (HTTP %d); the lease needs %s on gs://%s/%s",
			status, strings.Join(IAMPermissions, ", "), d.bucket, d.object))
	case status == http.StatusTooManyRequests:
		return wrap(lease.ErrUnavailable, "throttled: Cloud Storage allows about one write per second to one object")
	}
	return wrap(lease.ErrUnavailable, "")
}
