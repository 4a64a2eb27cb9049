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

// staticCredential stands in for azidentity's DefaultAzureCredential, so
// that the tests do not depend on the machine's Azure login.
type staticCredential struct{}

func (staticCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "test"}, nil
}

// azuriteCS is Azurite's well-known development connection string; the
// key is public. Opening a URL sends no request.
const azuriteCS = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"

// TestURLOpener opens azblob:// URLs through lease.Open and checks which
// blob, through which service URL, each lease reaches.
func TestURLOpener(t *testing.T) {
	// Not parallel: it sets environment variables and newCredential.
	saved := newCredential
	newCredential = func() (azcore.TokenCredential, error) { return staticCredential{}, nil }
	t.Cleanup(func() { newCredential = saved })
	t.Setenv("MY_AZURE_CS", azuriteCS)
	t.Setenv("EMPTY_CS", "")
	t.Setenv("DEV_CS", "UseDevelopmentStorage=true")
	t.Setenv("BROKEN_CS", "AccountName=devstoreaccount1;SecretThing=hunter2")

	for _, row := range []struct {
		name     string
		url      string
		env      string // AZURE_STORAGE_CONNECTION_STRING
		where    string // the blob's URL, on success
		infinite bool
		err      string // in the error, on failure
	}{
		{name: "account", url: "azblob://leases/jobs/nightly?account=myaccount", where: "https://myaccount.blob.core.windows.net/leases/jobs/nightly"},
		{name: "endpoint", url: "azblob://leases/jobs?endpoint=https://myaccount.blob.core.usgovcloudapi.net/", where: "https://myaccount.blob.core.usgovcloudapi.net/leases/jobs"},
		{name: "connection-string-env", url: "azblob://leases/jobs?connection_string_env=MY_AZURE_CS", where: "http://127.0.0.1:10000/devstoreaccount1/leases/jobs"},
		{name: "default-env", url: "azblob://leases/jobs", env: azuriteCS, where: "http://127.0.0.1:10000/devstoreaccount1/leases/jobs"},
		{name: "infinite", url: "azblob://leases/jobs?account=myaccount&infinite_lease=true", where: "https://myaccount.blob.core.windows.net/leases/jobs", infinite: true},

		{name: "unknown-params", url: "azblob://leases/jobs?acount=myaccount&region=westeurope", err: `has unknown query parameter(s) acount, region (known: account, connection_string_env, endpoint, infinite_lease)`},
		{name: "repeated-param", url: "azblob://leases/jobs?account=a1b2c3&account=d4e5f6", err: "repeats query parameter(s) account"},
		{name: "account-and-endpoint", url: "azblob://leases/jobs?account=myaccount&endpoint=https://x.example/", err: "more than one of account, endpoint and connection_string_env"},
		{name: "bad-account", url: "azblob://leases/jobs?account=My_Account", err: `account="My_Account"; a storage account name is 3 to 24 lower-case letters and digits`},
		{name: "http-endpoint", url: "azblob://leases/jobs?endpoint=http://127.0.0.1:10000/devstoreaccount1", err: "must be https"},
		{name: "env-unset", url: "azblob://leases/jobs?connection_string_env=EMPTY_CS", err: "connection_string_env=EMPTY_CS, but EMPTY_CS is not set"},
		{name: "no-account", url: "azblob://leases/jobs", err: "names no account: add account=NAME"},
		{name: "development-storage", url: "azblob://leases/jobs?connection_string_env=DEV_CS", err: `ConnectionString ("UseDevelopmentStorage=true") is not understood by the Go Azure SDK: use Azurite's full connection string`},
		{name: "broken-connection-string", url: "azblob://leases/jobs?connection_string_env=BROKEN_CS", err: "ConnectionString (keys AccountName,SecretThing) is not usable"},
		{name: "no-blob", url: "azblob://leases", err: "names no blob"},
		{name: "bad-container", url: "azblob://Leases_1/jobs?account=myaccount", err: `Container ("Leases_1") is not a container name`},
		{name: "credentials", url: "azblob://user:secret@leases/jobs?account=myaccount", err: "carries credentials"},
		{name: "infinite-maybe", url: "azblob://leases/jobs?account=myaccount&infinite_lease=maybe", err: `infinite_lease="maybe"; want true or false`},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Setenv(ConnectionStringEnv, row.env)
			l, err := lease.Open(t.Context(), row.url, lease.Options{Identity: "worker-1"})
			if row.err != "" {
				t.Logf("%s: %v", row.url, err)
				if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), row.err) {
					t.Errorf("Open(%q): %v, want lease.ErrInvalid with %q", row.url, err, row.err)
				}
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "secret") {
					t.Errorf("Open(%q): %q shows a secret", row.url, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", row.url, err)
			}
			bl, ok := l.(*blobLease)
			if h, handoff := l.(handoffLease); handoff {
				bl, ok = h.blobLease, !row.infinite
			}
			if !ok {
				t.Fatalf("Open(%q) returned a %T (infinite %t): want a handoffLease for a lease of fixed duration, a *blobLease for an infinite one", row.url, l, row.infinite)
			}
			if bl.where != row.where || (bl.duration == -1) != row.infinite {
				t.Errorf("Open(%q) reaches %s (duration %d), want %s (infinite %t)", row.url, bl.where, bl.duration, row.where, row.infinite)
			}
		})
	}
}
