package azurelease

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Scheme is the URL scheme azurelease registers with lease.Open.
const Scheme = "azblob"

// ConnectionStringEnv is the variable a URL's connection string is read
// from when the URL names neither an account nor another variable: the
// Azure CLI's and SDKs' usual one.
const ConnectionStringEnv = "AZURE_STORAGE_CONNECTION_STRING"

func init() {
	lease.Register(Scheme, &URLOpener{})
	driver.RegisterObjects(Scheme, &URLOpener{})
	driver.RegisterStore(Description)
}

// OpenURL opens the lease urlstr names, such as
// "azblob://container/blob?account=NAME", for the contender opts describes:
// lease.Open for azblob:// URLs (see URLParams). Importing azurelease to
// call it registers the scheme with lease.Open as well.
func OpenURL(ctx context.Context, urlstr string, opts lease.Options) (lease.Lease, error) {
	return driver.OpenURL(ctx, "azurelease", Scheme, urlstr, opts)
}

// URLParams are the query parameters an azblob:// URL may carry:
//
//	account                the storage account's name: the service URL is
//	                       https://NAME.blob.core.windows.net/, reached with
//	                       azidentity.NewDefaultAzureCredential (managed identity,
//	                       workload identity, environment, Azure CLI login)
//	endpoint               the service URL itself (https), for other clouds
//	                       and custom domains, with the same credential
//	connection_string_env  the name of an environment variable holding a
//	                       connection string (Azurite, account keys, SAS)
//	infinite_lease         true: Options.InfiniteLease (read its warning)
//
// With none of account, endpoint and connection_string_env, the connection
// string is read from AZURE_STORAGE_CONNECTION_STRING. Any other parameter
// is rejected.
var URLParams = []string{"account", "connection_string_env", "endpoint", "infinite_lease"}

// GroupURLParams are the query parameters of a shard group's URL,
// azblob://CONTAINER/GROUP (shard.OpenStore): URLParams but
// infinite_lease, as a worker's liveness must lapse when it stops
// renewing.
var GroupURLParams = []string{"account", "connection_string_env", "endpoint"}

// URLOpener opens "azblob://CONTAINER/BLOB?param=value" URLs; see
// URLParams for the parameters. The blob's name is the URL's path without
// its leading slash. For shard.OpenStore (driver.OpenObjects), the URL
// names a shard group, "azblob://CONTAINER/GROUP", whose blobs' names
// start with the path, with GroupURLParams.
type URLOpener struct {
	// Client, if set, is used for every URL, which may then carry only
	// infinite_lease. If nil, each URL gets a client of its own.
	Client *azblob.Client
}

// OpenLeaseURL implements lease.URLOpener.
func (o *URLOpener) OpenLeaseURL(ctx context.Context, u *url.URL, lopts lease.Options) (lease.Lease, error) {
	opts, err := o.parse(u, "BLOB", URLParams)
	if err != nil {
		return nil, err
	}
	return Open(ctx, opts, lopts)
}

// OpenObjectsURL implements driver.ObjectsOpener: the container as
// driver.Objects (NewObjects), and the URL's path as the group. It sends
// no request.
func (o *URLOpener) OpenObjectsURL(_ context.Context, u *url.URL, _ lease.Options) (driver.Objects, string, error) {
	opts, err := o.parse(u, "GROUP", GroupURLParams)
	if err != nil {
		return nil, "", err
	}
	group := opts.Blob
	opts.Blob = ""
	store, err := NewObjects(ObjectsOptions{Options: opts})
	if err != nil {
		return nil, "", err
	}
	return store, group, nil
}

// parse returns the options u names: its path is what the form's path
// says (BLOB or GROUP), in Options.Blob, and params are the query
// parameters it may carry.
func (o *URLOpener) parse(u *url.URL, path string, params []string) (Options, error) {
	bad := func(reason string) error {
		return invalid("URL", strconv.Quote(lease.RedactURL(u.String())), reason)
	}
	opts := Options{Container: u.Host, Blob: strings.TrimPrefix(u.Path, "/"), Client: o.Client}
	switch {
	case u.User != nil:
		return Options{}, bad("carries credentials; use account=, endpoint= or connection_string_env=")
	case opts.Container == "":
		return Options{}, bad("names no container; want azblob://CONTAINER/" + path)
	case opts.Blob == "":
		return Options{}, bad("names no " + strings.ToLower(path) + "; want azblob://CONTAINER/" + path)
	}
	q, err := driver.Query("azurelease", u, params)
	if err != nil {
		return Options{}, err
	}
	if q.Has("infinite_lease") {
		b, err := strconv.ParseBool(q.Get("infinite_lease"))
		if err != nil {
			return Options{}, bad(fmt.Sprintf("has infinite_lease=%q; want true or false", q.Get("infinite_lease")))
		}
		opts.InfiniteLease = b
	}

	account, endpoint, envVar := q.Get("account"), q.Get("endpoint"), q.Get("connection_string_env")
	given := 0
	for _, p := range []string{"account", "endpoint", "connection_string_env"} {
		if q.Has(p) {
			given++
		}
	}
	switch {
	case o.Client != nil && given > 0:
		return Options{}, bad("has account, endpoint or connection_string_env, but the URLOpener has a Client, which replaces them")
	case o.Client != nil:
	case given > 1:
		return Options{}, bad("has more than one of account, endpoint and connection_string_env; give one")
	case q.Has("account"):
		if !validAccount(account) {
			return Options{}, bad(fmt.Sprintf("has account=%q; a storage account name is 3 to 24 lower-case letters and digits", account))
		}
		opts.AccountURL = "https://" + account + ".blob.core.windows.net/"
	case q.Has("endpoint"):
		opts.AccountURL = endpoint
	case q.Has("connection_string_env"):
		if envVar == "" {
			return Options{}, bad("has an empty connection_string_env; name an environment variable")
		}
		if opts.ConnectionString = os.Getenv(envVar); opts.ConnectionString == "" {
			return Options{}, bad(fmt.Sprintf("has connection_string_env=%s, but %s is not set", envVar, envVar))
		}
	default:
		if opts.ConnectionString = os.Getenv(ConnectionStringEnv); opts.ConnectionString == "" {
			return Options{}, bad(fmt.Sprintf("names no account: add account=NAME (Entra ID credentials, such as a managed identity), endpoint=URL, or connection_string_env=VAR, or set %s", ConnectionStringEnv))
		}
	}
	return opts, nil
}

// validAccount checks Azure's rule for storage account names.
func validAccount(name string) bool {
	if len(name) < 3 || len(name) > 24 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// newCredential returns the credential for AccountURL. A variable, so that
// tests can replace it.
var newCredential = func() (azcore.TokenCredential, error) {
	return azidentity.NewDefaultAzureCredential(nil)
}
