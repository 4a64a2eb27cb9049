package awsdriver

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// TestStoreIDReadsNoCredentialsUnderAnEndedContext: StoreID under an
// ended context does not ask the provider for credentials, which the
// SDK's cache would fetch (an assumed role's, from STS) under a context of
// its own after the caller had given up; under a live one it names the
// access key.
func TestStoreIDReadsNoCredentialsUnderAnEndedContext(t *testing.T) {
	asked := 0
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		asked++
		return aws.Credentials{AccessKeyID: "AKIDEXAMPLE"}, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if id := StoreID(ctx, "s3", nil, "us-east-1", creds, "bucket"); asked != 0 || id != "s3 aws us-east-1 bucket " {
		t.Errorf("StoreID under a cancelled context: asked for credentials %d times, id %q; want none, and no key in the id", asked, id)
	}
	if id := StoreID(context.Background(), "s3", nil, "us-east-1", creds, "bucket"); asked != 1 || id != "s3 aws us-east-1 bucket AKIDEXAMPLE" {
		t.Errorf("StoreID: asked for credentials %d times, id %q; want once, and the key in the id", asked, id)
	}
}
