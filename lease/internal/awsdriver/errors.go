package awsdriver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"

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
	// What names the call: "s3lease: GetObject s3://bucket/key".
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
// unless a rule claims them first. A request never sent because the SDK
// found no credentials is lease.ErrPermission, saying where it looked
// (NoCredentials), whatever the rules say.
func Classify(ctx context.Context, err error, what string, rules func(Failure) error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	f := Failure{What: what, Err: err}
	if noCredentials(err) {
		return f.Wrap(lease.ErrPermission, NoCredentials())
	}
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

// noCredentials reports whether err is the SDK's failure to get the
// caller's credentials, before any request was sent: the default chain
// found none, or none it could use. The SDK says so only in the text of
// its error ("get identity: ... failed to refresh cached credentials"):
// the errors of the chain's providers are not all wrapped, and one of
// them may carry an HTTP status (IMDS answering 403) that is not the
// store's answer.
func noCredentials(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "get identity: ") && strings.Contains(msg, "failed to refresh cached credentials")
}

// NoCredentials says that no usable AWS credentials were found, and where
// the SDK's default chain looked, as this process's environment sets it.
func NoCredentials() string {
	isSet := func(names ...string) string {
		for _, n := range names {
			if os.Getenv(n) != "" {
				return "set"
			}
		}
		return "not set"
	}
	file := func(variable, def string) string {
		if v := os.Getenv(variable); v != "" {
			return v
		}
		return def
	}
	imds := "tried"
	if on, _ := strconv.ParseBool(os.Getenv("AWS_EC2_METADATA_DISABLED")); on {
		imds = "turned off by AWS_EC2_METADATA_DISABLED"
	}
	return fmt.Sprintf("no usable AWS credentials were found; the SDK's default chain looked in the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: %s; AWS_WEB_IDENTITY_TOKEN_FILE: %s), "+
		"the shared config and credentials files (%s, %s) for the profile AWS_PROFILE or ?profile= names (else \"default\"), "+
		"the ECS container endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI: %s) and the EC2 instance metadata service (IMDS: %s)",
		isSet("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), isSet("AWS_WEB_IDENTITY_TOKEN_FILE"),
		file("AWS_CONFIG_FILE", config.DefaultSharedConfigFilename()), file("AWS_SHARED_CREDENTIALS_FILE", config.DefaultSharedCredentialsFilename()),
		isSet("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"), imds)
}
