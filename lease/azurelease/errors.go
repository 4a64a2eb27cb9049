package azurelease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/leasehold/leasehold/lease"
)

// op names a request to the Blob service in errors.
type op string

const (
	opGetProperties op = "GetBlobProperties"
	opCreate        op = "PutBlob (If-None-Match: *)"
	opSetMetadata   op = "SetBlobMetadata"
	opAcquire       op = "LeaseBlob acquire"
	opRenew         op = "LeaseBlob renew"
	opChange        op = "LeaseBlob change"
	opRelease       op = "LeaseBlob release"
	opBreak         op = "LeaseBlob break (If-Match)"
	opGetBlob       op = "GetBlob"
	opPutBlob       op = "PutBlob"
	opListBlobs     op = "ListBlobs"
)

// The lease codes with which Azure tells a holder that its lease ID no
// longer holds the blob: another lease replaced it, it was released, it
// lapsed and the blob changed since, or it was broken.
var lostCodes = []bloberror.Code{
	bloberror.LeaseIDMismatchWithLeaseOperation,
	bloberror.LeaseIDMismatchWithBlobOperation,
	bloberror.LeaseNotPresentWithLeaseOperation,
	bloberror.LeaseNotPresentWithBlobOperation,
	bloberror.LeaseLost,
	bloberror.LeaseIsBrokenAndCannotBeRenewed,
	bloberror.LeaseIsBreakingAndCannotBeChanged,
	bloberror.LeaseIDMissing,
}

// heldCodes are the answers to an acquire of a blob that another lease
// holds.
var heldCodes = []bloberror.Code{
	bloberror.LeaseAlreadyPresent,
	bloberror.LeaseIsBreakingAndCannotBeAcquired,
}

// codeSharedKeyOff is the answer of an account whose Shared Key
// authorization is off to a request signed with its account key or a SAS
// (403): the bloberror package has no name for it.
const codeSharedKeyOff bloberror.Code = "KeyBasedAuthenticationNotPermitted"

// permissionCodes are the answers to credentials the account refused.
var permissionCodes = []bloberror.Code{
	bloberror.AuthenticationFailed,
	bloberror.AuthorizationFailure,
	bloberror.AuthorizationPermissionMismatch,
	bloberror.AuthorizationProtocolMismatch,
	bloberror.AuthorizationResourceTypeMismatch,
	bloberror.AuthorizationServiceMismatch,
	bloberror.AuthorizationSourceIPMismatch,
	bloberror.InsufficientAccountPermissions,
	bloberror.InvalidAuthenticationInfo,
	bloberror.NoAuthenticationInformation,
}

// classify maps an error of the Azure SDK to the lease package's sentinels.
// It is the package's only general error mapping; each operation handles
// the lease codes it expects (lostCodes, heldCodes) before calling it. The
// result wraps both the sentinel and err, so errors.Is(err, lease.ErrNotFound)
// and errors.As(err, &*azcore.ResponseError) both work. When ctx (the call's
// own context) has ended, err is returned unclassified, and driver.Call
// reports the caller's context error or the CallTimeout.
//
//   - 404 BlobNotFound: lease.ErrNoRecord.
//   - 404 ContainerNotFound: lease.ErrNotFound, naming the container.
//   - 403 KeyBasedAuthenticationNotPermitted: lease.ErrPermission, saying
//     that the account has Shared Key off, so a connection string cannot
//     be used.
//   - 401, 403 and the authorization codes, and a credential that could not
//     get a token: lease.ErrPermission, naming the data actions the lease
//     needs (DataActions).
//   - 400 (InvalidHeaderValue, ...): lease.ErrInvalid: a person must fix the
//     request or the service (an emulator without --skipApiVersionCheck).
//   - Everything else, among it 503 ServerBusy, 500 InternalError, 408,
//     429, connection errors and timeouts: lease.ErrUnavailable, which the
//     caller may retry.
func (l *blobLease) classify(ctx context.Context, o op, err error) error {
	return classify(ctx, o, l.where, l.container, err)
}

// classify is blobLease.classify for a request o on the blob at where in
// container.
func classify(ctx context.Context, o op, where, container string, err error) error {
	what := fmt.Sprintf("azurelease: %s %s", o, where)
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		var authErr *azidentity.AuthenticationFailedError
		var nonRetriable interface{ NonRetriable() }
		if errors.As(err, &authErr) || errors.As(err, &nonRetriable) {
			// The bearer-token policy marks every failure to get a token
			// as non-retriable: no credential was found, or it was refused.
			return fmt.Errorf("%w: %s: no token for the account: %w", lease.ErrPermission, what, err)
		}
		return fmt.Errorf("%w: %s: %w", lease.ErrUnavailable, what, err)
	}
	code := bloberror.Code(re.ErrorCode)
	switch {
	case code == bloberror.ContainerNotFound:
		return fmt.Errorf("%w: %s: container %q does not exist: create it (azurelease never creates containers): %w", lease.ErrNotFound, what, container, err)
	case code == bloberror.BlobNotFound || re.StatusCode == http.StatusNotFound && code == "":
		// A HEAD's answer has no body; Azure names the code in a header,
		// but a proxy may drop it. Creating the blob then tells.
		return fmt.Errorf("%w: %s: %w", lease.ErrNoRecord, what, err)
	case code == codeSharedKeyOff:
		return fmt.Errorf("%w: %s: the account refused the connection string's account key or SAS (%s): Shared Key authorization is off on the account (shared_access_key_enabled = false), and no role changes that; "+
			"open the lease with the account's name or URL (account=, Entra ID: an identity with %s on container %q) instead of a connection string, or turn Shared Key on: %w",
			lease.ErrPermission, what, codeOrStatus(re), strings.Join(DataActions, " and "), container, err)
	case re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden || bloberror.HasCode(err, permissionCodes...):
		return fmt.Errorf("%w: %s: the account refused the credentials (%s); the lease needs %s on container %q (a custom role with these, or Storage Blob Data Contributor; with a connection string, a valid account key, or a SAS allowing read and write): %w",
			lease.ErrPermission, what, codeOrStatus(re), strings.Join(DataActions, " and "), container, err)
	case re.StatusCode == http.StatusBadRequest:
		hint := ""
		if code == bloberror.InvalidHeaderValue {
			hint = " (Azurite needs --skipApiVersionCheck for this SDK's API version)"
		}
		return fmt.Errorf("%w: %s: the service refused the request as invalid (%s)%s: %w", lease.ErrInvalid, what, codeOrStatus(re), hint, err)
	}
	return fmt.Errorf("%w: %s: %s: %w", lease.ErrUnavailable, what, codeOrStatus(re), err)
}

func codeOrStatus(re *azcore.ResponseError) string {
	if re.ErrorCode != "" {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return fmt.Sprintf("HTTP %d", re.StatusCode)
}
