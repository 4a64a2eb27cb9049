package azurelease

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/leasehold/leasehold/lease"
)

// refusingCredential is an Entra ID credential that finds no identity.
type refusingCredential struct{}

func (refusingCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("DefaultAzureCredential: failed to acquire a token")
}

func TestCredentials(t *testing.T) {
	for _, tc := range []struct {
		name    string
		source  credentialSource
		want    string
		wantErr error
	}{
		{"account key", connectionStringSource(azuriteCS), `a connection string with the account key of "devstoreaccount1"`, nil},
		{"SAS", connectionStringSource("BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2024&sig=x"), "shared access signature (SAS)", nil},
		{"anonymous", connectionStringSource("BlobEndpoint=https://a.blob.core.windows.net/"), "requests are anonymous", nil},
		{"Entra ID", tokenSource(staticCredential{}), "a token for Azure Storage was issued", nil},
		{"no Entra ID identity", tokenSource(refusingCredential{}), "no usable Entra ID credentials were found", lease.ErrPermission},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &blobLease{credentials: tc.source}
			got, err := l.Credentials(t.Context())
			if !errors.Is(err, tc.wantErr) || !strings.Contains(got+errText(err), tc.want) {
				t.Errorf("Credentials() = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
