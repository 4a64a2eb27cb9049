package faultproxy

import (
	"fmt"
	"net/http"
	"strings"
)

// S3Error is Amazon S3's error answer: an XML Error document with its Code.
func S3Error(status int, code string) Answer {
	return Answer{
		Status:  status,
		Headers: map[string]string{"Content-Type": "application/xml", "X-Amz-Request-Id": "faultproxy"},
		Body: `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
			`<Error><Code>` + code + `</Code><Message>` + code + ` (faultproxy)</Message><RequestId>faultproxy</RequestId><HostId>faultproxy</HostId></Error>`,
	}
}

// Amazon S3's documented answers to a store under strain or in conflict.
var (
	// S3SlowDown: "Please reduce your request rate" (503).
	S3SlowDown = S3Error(http.StatusServiceUnavailable, "SlowDown")
	// S3InternalError: "We encountered an internal error" (500).
	S3InternalError = S3Error(http.StatusInternalServerError, "InternalError")
	// S3ConditionalRequestConflict: a conditional write raced another
	// write to the same key (409); it was not applied.
	S3ConditionalRequestConflict = S3Error(http.StatusConflict, "ConditionalRequestConflict")
)

// DynamoError is DynamoDB's error answer: JSON whose __type names the
// exception, in the JSON 1.0 protocol's content type.
func DynamoError(status int, exception string) Answer {
	return Answer{
		Status:  status,
		Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amzn-Requestid": "faultproxy"},
		Body:    fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":"%s (faultproxy)"}`, exception, exception),
	}
}

// DynamoDB's documented answers to a table under strain or in conflict.
var (
	// DynamoThrottling: the request rate is too high (400).
	DynamoThrottling = DynamoError(http.StatusBadRequest, "ThrottlingException")
	// DynamoTransactionConflict: the item is part of an ongoing
	// transaction (400); the write was not applied.
	DynamoTransactionConflict = DynamoError(http.StatusBadRequest, "TransactionConflictException")
	// DynamoReplicatedWriteConflict: a multi-Region strongly consistent
	// table is replicating a write to the same item (400); not applied.
	DynamoReplicatedWriteConflict = DynamoError(http.StatusBadRequest, "ReplicatedWriteConflictException")
	// DynamoInternalServerError: DynamoDB failed (500).
	DynamoInternalServerError = DynamoError(http.StatusInternalServerError, "InternalServerError")
)

// AzureError is Azure Storage's error answer: an XML Error document, and
// the code in the x-ms-error-code header.
func AzureError(status int, code string) Answer {
	return Answer{
		Status:  status,
		Headers: map[string]string{"Content-Type": "application/xml", "X-Ms-Error-Code": code, "X-Ms-Request-Id": "faultproxy"},
		Body: `<?xml version="1.0" encoding="utf-8"?>` + "\n" +
			`<Error><Code>` + code + `</Code><Message>` + code + ` (faultproxy)</Message></Error>`,
	}
}

// Azure Storage's documented answers to an account under strain.
var (
	// AzureServerBusy: "The server is currently unable to receive
	// requests" (503).
	AzureServerBusy = AzureError(http.StatusServiceUnavailable, "ServerBusy")
	// AzureOperationTimedOut: "The operation could not be completed
	// within the permitted time" (500); it may have been applied.
	AzureOperationTimedOut = AzureError(http.StatusInternalServerError, "OperationTimedOut")
)

// GCSError is Google Cloud Storage's JSON API error answer: an error
// object with the code and the reason.
func GCSError(status int, reason string) Answer {
	return Answer{
		Status:  status,
		Headers: map[string]string{"Content-Type": "application/json; charset=UTF-8"},
		Body:    fmt.Sprintf(`{"error":{"code":%d,"message":"%s (faultproxy)","errors":[{"domain":"global","reason":%q,"message":"%s (faultproxy)"}]}}`, status, reason, reason, reason),
	}
}

// Google Cloud Storage's documented answers to a bucket under strain.
var (
	// GCSRateLimited: more than about one write per second to one object
	// name (429 rateLimitExceeded).
	GCSRateLimited = GCSError(http.StatusTooManyRequests, "rateLimitExceeded")
	// GCSBackendError: Cloud Storage failed (503 backendError); the
	// request may have been applied.
	GCSBackendError = GCSError(http.StatusServiceUnavailable, "backendError")
)

// GCSUpload matches Cloud Storage JSON API uploads (every write of the
// gcslease driver).
func GCSUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/upload/storage/v1/")
}

// GCSRead matches Cloud Storage JSON API downloads of an object.
func GCSRead(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Get("alt") == "media"
}

// S3PutObject matches S3 PutObject requests: a PUT of an object, with no
// subresource in the query (the SDK's own x-id=PutObject aside).
func S3PutObject(r *http.Request) bool {
	return r.Method == http.MethodPut && plainObject(r)
}

// S3GetObject matches S3 GetObject requests.
func S3GetObject(r *http.Request) bool {
	return r.Method == http.MethodGet && plainObject(r)
}

// plainObject reports whether r's query names no subresource (?acl,
// ?uploads, ...) but the operation name the AWS SDK adds (x-id).
func plainObject(r *http.Request) bool {
	q := r.URL.Query()
	q.Del("x-id")
	return len(q) == 0
}

// PathSuffix matches requests whose path ends in suffix.
func PathSuffix(suffix string) func(*http.Request) bool {
	return func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, suffix) }
}

// Both matches requests that every one of ms matches.
func Both(ms ...func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// Not matches requests that m does not.
func Not(m func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool { return !m(r) }
}

// DynamoOp matches DynamoDB requests for the operations named ("GetItem",
// "PutItem"), by their X-Amz-Target header.
func DynamoOp(ops ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		target := r.Header.Get("X-Amz-Target")
		op := target[strings.LastIndexByte(target, '.')+1:]
		for _, o := range ops {
			if op == o {
				return true
			}
		}
		return false
	}
}

// AzureComp matches Azure Blob requests whose comp query parameter is comp:
// "metadata" (Set Blob Metadata), "lease" (Lease Blob).
func AzureComp(comp string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.URL.Query().Get("comp") == comp }
}

// AzureLeaseAction matches Azure Lease Blob requests for action, by their
// x-ms-lease-action header: "acquire", "renew", "release", "break".
func AzureLeaseAction(action string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.URL.Query().Get("comp") == "lease" && r.Header.Get("X-Ms-Lease-Action") == action
	}
}

// AzureGetProperties matches Get Blob Properties requests (HEAD of a blob).
func AzureGetProperties(r *http.Request) bool {
	return r.Method == http.MethodHead
}
