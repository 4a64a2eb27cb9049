package azurelease

import (
	"context"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/leasehold/leasehold/lease"
)

// storageScope is the scope of an Entra ID token for Azure Storage.
const storageScope = "https://storage.azure.com/.default"

// credentialSource says where the lease's credentials come from; for an
// Entra ID credential, it asks for a token (a request to the identity
// endpoint, not to the store). It is nil for a Client given in Options.
type credentialSource func(ctx context.Context) (string, error)

// Credentials implements driver.CredentialSource.
func (l *blobLease) Credentials(ctx context.Context) (string, error) {
	if l.credentials == nil {
		return "the azblob.Client given in azurelease.Options (its credential is its own)", nil
	}
	return l.credentials(ctx)
}

// connectionStringSource describes the credential in a connection string:
// its account key, its shared access signature, or none.
func connectionStringSource(cs string) credentialSource {
	keys := map[string]string{}
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(part, "=")
		keys[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	var what string
	switch {
	case keys["accountkey"] != "":
		what = fmt.Sprintf("a connection string with the account key of %q", keys["accountname"])
	case keys["sharedaccesssignature"] != "":
		what = "a connection string with a shared access signature (SAS)"
	default:
		what = "a connection string with neither an account key nor a SAS: requests are anonymous"
	}
	return func(context.Context) (string, error) { return what, nil }
}

// tokenSource asks cred for a token for Azure Storage.
func tokenSource(cred azcore.TokenCredential) credentialSource {
	return func(ctx context.Context) (string, error) {
		_, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{storageScope}})
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			return "", fmt.Errorf("%w: azurelease: no usable Entra ID credentials were found for Azure Storage; azidentity.DefaultAzureCredential tried the environment (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_CLIENT_SECRET or _CERTIFICATE_PATH), workload identity, managed identity and the Azure CLI and Azure Developer CLI logins: %w", lease.ErrPermission, err)
		}
		return "Entra ID, azidentity.DefaultAzureCredential (environment, workload identity, managed identity or az login): a token for Azure Storage was issued", nil
	}
}
