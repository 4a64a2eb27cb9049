// Package awstest is what the tests of leasehold's AWS backends
// (lease/s3lease and lease/dynamolease) share beyond what every cloud
// backend's tests share (lease/internal/storetest): clients of a test
// endpoint (StaticConfig), an isolated default configuration chain
// (IsolateEnv), DynamoDB's requests counted by operation (ByOperation),
// and errors checked for the SDK's code (CheckError).
package awstest

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// Region is the region of the clients StaticConfig configures.
const Region = "us-east-1"

// StaticConfig returns the configuration of a client of endpoint that signs
// with fixed keys in Region, isolated from the AWS_* environment. hc, if
// not nil, carries its requests.
func StaticConfig(endpoint, key, secret string, hc aws.HTTPClient) aws.Config {
	cfg := aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
	}
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return cfg
}

// IsolateEnv points the default AWS configuration chain at nothing but the
// variables a test sets: no shared config or credentials files, no profile,
// no endpoint, no region, no keys, no IMDS.
func IsolateEnv(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_ENDPOINT_URL_DYNAMODB": "",
		"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
}

// ByOperation labels a request of a JSON-protocol service with the
// operation in its X-Amz-Target header: DynamoDB's "GetItem" for
// "DynamoDB_20120810.GetItem".
func ByOperation(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	return target[strings.LastIndexByte(target, '.')+1:]
}

// CheckError is storetest.CheckError, and, if code is set, checks that err
// wraps an SDK error (a smithy.APIError) with that code.
func CheckError(t *testing.T, what string, err, want error, mention, code string) {
	t.Helper()
	storetest.CheckError(t, what, err, want, mention)
	var apiErr smithy.APIError
	if code != "" && (!errors.As(err, &apiErr) || apiErr.ErrorCode() != code) {
		t.Errorf("%s: errors.As(err, &smithy.APIError) finds %v, want the SDK's %s", what, apiErr, code)
	}
}
