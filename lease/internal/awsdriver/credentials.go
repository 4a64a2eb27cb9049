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
