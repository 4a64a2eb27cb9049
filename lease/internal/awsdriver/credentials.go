package awsdriver

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/leasehold/leasehold/lease"
)

// CredentialSource implements driver.CredentialSource for a client whose
// credentials provider is provider: it retrieves the credentials as a
// request would (from the provider's cache when it has them) and names
// the SDK's source of them ("EnvConfigCredentials", "SharedConfigCredentials:
// FILE", "EC2RoleProvider", ...) with the access key's last four
// characters. When none are found the error wraps lease.ErrPermission and
// says where the default chain looked (NoCredentials).
func CredentialSource(ctx context.Context, provider aws.CredentialsProvider) (string, error) {
	if provider == nil {
		return "", fmt.Errorf("%w: %s: the client has no credentials provider", lease.ErrPermission, NoCredentials())
	}
	creds, err := provider.Retrieve(ctx)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("%w: %s: %w", lease.ErrPermission, NoCredentials(), err)
	}
	key := creds.AccessKeyID
	if len(key) > 4 {
		key = "..." + key[len(key)-4:]
	}
	source := creds.Source
	if source == "" {
		source = "the client's credentials provider"
	}
	return fmt.Sprintf("AWS %s, access key %s", source, key), nil
}

// StoreID names a store as one client reaches it, for driver.VerifyStore
// and the checks a driver keeps per store: scheme, the endpoint ("aws"
// for the service's own), region, where (a bucket, a table), and the
// access key of the client's credentials, read from the client's cache,
// which answers at once after its first request ("" when it cannot: a
// failure shows up in the requests themselves). Under an ended ctx it
// reads no credentials (key ""): the cache would fetch them anyway, under
// a context of its own (an assumed role's from STS), after the caller had
// given up; the requests that follow are not sent either (driver.Call).
func StoreID(ctx context.Context, scheme string, endpoint *string, region string, creds aws.CredentialsProvider, where string) string {
	key := ""
	if creds != nil && ctx.Err() == nil {
		if c, err := creds.Retrieve(ctx); err == nil {
			key = c.AccessKeyID
		}
	}
	e := aws.ToString(endpoint)
	if e == "" {
		e = "aws"
	}
	return scheme + " " + e + " " + region + " " + where + " " + key
}
