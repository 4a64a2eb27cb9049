package awsdriver

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/leasehold/leasehold/lease"
)

// Failure is a failed request to an AWS service, as a backend's rules see
// it.
type Failure struct {
	// Code is the service's error code ("NoSuchKey",
	// "ConditionalCheckFailedException"), or "" when the answer had none or
	// there was no answer.
	Code string
	// Message is the service's error message, or "".
	Message string
	// Status is the HTTP status of the answer, or 0 when there was none.
	Status int
	// What names the call: "s3cas: GetObject s3://bucket/key".
	What string
	// Err is the SDK's error.
	Err error
}

// Wrap returns an error wrapping sentinel and the SDK's error, reading
// "SENTINEL: WHAT: DETAIL: ERR", or "SENTINEL: WHAT: ERR" when detail is
// empty. Both errors.Is(err, sentinel) and errors.As(err, &smithy.APIError)
// work on it.
func (f Failure) Wrap(sentinel error, detail string) error {
	if detail == "" {
		return fmt.Errorf("%w: %s: %w", sentinel, f.What, f.Err)
	}
	return fmt.Errorf("%w: %s: %s: %w", sentinel, f.What, detail, f.Err)
}

// CodeOrStatus returns the error code, or "HTTP <status>" without one.
func (f Failure) CodeOrStatus() string {
	if f.Code != "" {
		return f.Code
	}
	return fmt.Sprintf("HTTP %d", f.Status)
}

// Classify maps err, the SDK's error from the call what names, to the lease
// package's sentinels; it is the part of a backend's one error mapping
// that every AWS service shares. When ctx has ended, it returns ctx's own
// error, unwrapped, for driver.Call to tell the caller's cancellation from
// its own CallTimeout. Otherwise rules, the backend's mapping of its
// service's codes, gets the failure and returns the error for it
// (usually Failure.Wrap), or nil for a failure it does not claim: that is
// reported as lease.ErrUnavailable, which the caller may retry. Throttling,
// 5xx answers, connection errors, timeouts and unknown codes end there,
// unless a rule claims them first.
func Classify(ctx context.Context, err error, what string, rules func(Failure) error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f := Failure{What: what, Err: err}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		f.Code, f.Message = apiErr.ErrorCode(), apiErr.ErrorMessage()
	}
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) {
		f.Status = respErr.HTTPStatusCode()
	}
	if mapped := rules(f); mapped != nil {
		return mapped
	}
	return f.Wrap(lease.ErrUnavailable, "")
}
