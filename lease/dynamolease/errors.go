package dynamolease

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// op is the driver call an error came from.
type op int

const (
	opDescribe op = iota // DescribeTable, once at Open
	opGet                // GetItem, strongly consistent
	opCreate             // PutItem with attribute_not_exists(key)
	opReplace            // PutItem with nonce = version
	opQuery              // Query, strongly consistent (Objects)
	opPutPart            // PutItem of a part of a large object (Objects)
)

func (o op) String() string {
	switch o {
	case opDescribe:
		return "DescribeTable"
	case opGet:
		return "GetItem"
	case opCreate:
		return "PutItem (attribute_not_exists)"
	case opQuery:
		return "Query"
	case opPutPart:
		return "PutItem (a part)"
	default:
		return "PutItem (nonce = version)"
	}
}

// The error codes of DynamoDB that classify names.
var (
	// throttlingCodes: the table's or the account's capacity or request
	// rate was exceeded.
	throttlingCodes = []string{"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
	// permissionCodes: DynamoDB answers these with HTTP 400, not 403.
	permissionCodes = []string{
		"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "IncompleteSignatureException",
		"MissingAuthenticationTokenException", "MissingAuthenticationToken", "ExpiredTokenException",
	}
)

// classify maps an error of the DynamoDB SDK to the lease package's
// sentinels. It is the driver's only error mapping, on top of
// awsdriver.Classify. The result wraps both the sentinel and err, so
// errors.Is(err, driver.ErrConflict) and errors.As(err, &smithy.APIError)
// both work. When ctx has ended, ctx's own error is returned, unwrapped.
//
//   - ConditionalCheckFailedException: driver.ErrConflict. (The engine reads
//     the item back; the driver does not ask for the old item, which
//     dynalite would not return anyway.)
//   - ResourceNotFoundException: lease.ErrNotFound, naming the table.
//   - ValidationException: lease.ErrNotFound: the table does not take the
//     lease's key (its key schema changed after Open checked it).
//   - AccessDeniedException, UnrecognizedClientException,
//     InvalidSignatureException and the other refusals of credentials,
//     which DynamoDB answers with HTTP 400, and any 403:
//     lease.ErrPermission, naming the table and the actions the lease
//     needs; except InvalidSignatureException "Signature expired", a
//     clock difference that the SDK corrects on the next call.
//   - ProvisionedThroughputExceededException, ThrottlingException,
//     RequestLimitExceeded: lease.ErrUnavailable, as throttled.
//   - Everything else, among it 500 and 503 answers, connection errors and
//     timeouts: lease.ErrUnavailable, which the caller may retry.
func (d *conn) classify(ctx context.Context, o op, err error) error {
	return awsdriver.Classify(ctx, err, fmt.Sprintf("dynamodb: %s %s", o, d.url()), func(f awsdriver.Failure) error {
		switch code := f.Code; {
		case code == "ConditionalCheckFailedException" && o == opCreate:
			return f.Wrap(driver.ErrConflict, "an item exists at the key")
		case code == "ConditionalCheckFailedException":
			return f.Wrap(driver.ErrConflict, "the item's nonce is not the version expected, or the item no longer exists")
		case code == "ResourceNotFoundException":
			return f.Wrap(lease.ErrNotFound, fmt.Sprintf("table %q does not exist", d.table))
		case code == "ValidationException":
			return f.Wrap(lease.ErrNotFound, fmt.Sprintf("table %q does not take the item; its key schema must be %s", d.table, d.schema()))
		case code == "InvalidSignatureException" && strings.Contains(f.Message, "Signature expired"):
			return f.Wrap(lease.ErrUnavailable, "this machine's clock differs from the store's; the SDK corrects for it on the next call")
		case slices.Contains(permissionCodes, code) || f.Status == http.StatusForbidden:
			return f.Wrap(lease.ErrPermission, fmt.Sprintf("the credentials were refused (%s); the lease needs %v on arn:aws:dynamodb:%s:ACCOUNT:table/%s",
				f.CodeOrStatus(), d.actions(), d.client.Options().Region, d.table))
		case slices.Contains(throttlingCodes, code):
			return f.Wrap(lease.ErrUnavailable, fmt.Sprintf("throttled: the request rate exceeds what table %q or the account allows", d.table))
		}
		return nil
	})
}
