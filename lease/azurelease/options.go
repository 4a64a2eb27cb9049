package azurelease

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/leasehold/leasehold/lease"
)

// DataActions are the only Azure RBAC data actions the backend's calls
// need, on the lease's container: read, for Get Blob Properties; write, for
// Put Blob (creating the empty blob), Set Blob Metadata and every Lease Blob
// action (acquire, renew, change, release, break). A custom role with
// exactly these, assigned with the container as its scope, is least
// privilege (terraform/modules/azure-blob-lease makes one). The built-in
// Storage Blob Data Contributor has them too, and also blob delete, which
// would let a worker delete the lease blob and restart its fencing tokens.
var DataActions = []string{
	"Microsoft.Storage/storageAccounts/blobServices/containers/blobs/read",
	"Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
}

// The durations an Azure Blob lease can have, other than infinite.
const (
	MinTTL = 15 * time.Second
	MaxTTL = 60 * time.Second
)

// Options locate one lease blob and the client that reaches it.
type Options struct {
	// Container is the name of an existing container. Required; azurelease
	// never creates containers.
	Container string
	// Blob is the name of the lease blob in the container, such as
	// "leases/nightly-report". Required. Open creates the blob, empty,
	// on the first Acquire if it does not exist. It must be used for
	// nothing but this lease.
	Blob string

	// Exactly one of Client, ConnectionString and AccountURL says how to
	// reach the account.

	// Client is the client to use, as it is: build it with
	// policy.RetryOptions{MaxRetries: -1} so that the SDK does not retry.
	// (azurelease turns retries off for each of its calls anyway.)
	Client *azblob.Client
	// ConnectionString is an account's connection string, with an
	// AccountKey or a SharedAccessSignature. For Azurite, use the full
	// development connection string (DefaultEndpointsProtocol=http;
	// AccountName=devstoreaccount1;AccountKey=...;BlobEndpoint=
	// http://127.0.0.1:10000/devstoreaccount1;): the Go SDK does not
	// understand UseDevelopmentStorage=true.
	ConnectionString string
	// AccountURL is the account's Blob service URL, such as
	// https://NAME.blob.core.windows.net/, reached with
	// azidentity.NewDefaultAzureCredential: a managed identity on Azure
	// workers, workload identity, environment variables, or the Azure CLI's
	// login. It must be https.
	AccountURL string

	// InfiniteLease takes the Azure lease with an infinite duration instead
	// of the TTL. The store then never ends a term by itself: a holder that
	// crashes or is cut off keeps the lease until a person breaks it (az
	// storage blob lease break), and every other contender waits forever.
	// Use it only where a person watches the lease. The TTL then only sets
	// the runner's renewal and polling cadence, and may be any TTL package
	// lease accepts. All contenders of one lease must agree on this
	// setting. Default false: the lease lasts the TTL, which must be a
	// whole number of seconds from 15s to 60s.
	//
	// An infinite lease is not a lease.Handoffer: a lease handed to a
	// successor that never came would never lapse either, so
	// runner.Config.Prefer and leasehold handoff are refused on it.
	InfiniteLease bool
}

// Open returns a lease on the blob opts names, for the contender lopts
// describes. It checks the options, including the TTL, but sends no
// request: a missing container or refused credentials show up in the
// lease's first call, as lease.ErrNotFound or lease.ErrPermission.
func Open(ctx context.Context, opts Options, lopts lease.Options) (lease.Lease, error) {
	lopts, err := lopts.Validate()
	if err != nil {
		return nil, err
	}
	if err := opts.validate(lopts); err != nil {
		return nil, err
	}
	client, creds, err := opts.client()
	if err != nil {
		return nil, err
	}
	bb := client.ServiceClient().NewContainerClient(opts.Container).NewBlockBlobClient(opts.Blob)
	duration := int32(lopts.TTL / time.Second)
	if opts.InfiniteLease {
		duration = -1
	}
	bl := &blobLease{
		opts:        lopts,
		blob:        bb,
		container:   opts.Container,
		where:       redactedURL(bb.URL()),
		duration:    duration,
		credentials: creds,
	}
	if opts.InfiniteLease {
		return bl, nil
	}
	return handoffLease{bl}, nil
}

func invalid(field string, value any, reason string) error {
	return &lease.OptionError{Pkg: "azurelease", Field: field, Value: value, Reason: reason}
}

func (o Options) validate(lopts lease.Options) error {
	if err := validContainer(o.Container); err != nil {
		return err
	}
	switch {
	case o.Blob == "":
		return invalid("Blob", `""`, "must not be empty")
	case len(o.Blob) > 1024:
		return invalid("Blob", fmt.Sprintf("%q...", o.Blob[:64]), fmt.Sprintf("is %d bytes long; Azure allows at most 1024", len(o.Blob)))
	}
	ttl := lopts.TTL
	if !o.InfiniteLease && (ttl < MinTTL || ttl > MaxTTL || ttl%time.Second != 0) {
		return invalid("TTL", ttl, fmt.Sprintf("must be a whole number of seconds from %ds to %ds, the durations an Azure Blob lease can have (Options.InfiniteLease takes a lease that never lapses)", MinTTL/time.Second, MaxTTL/time.Second))
	}
	return o.validateAccount()
}

// validateAccount checks that o says once how to reach the account.
func (o Options) validateAccount() error {
	var set []string
	for name, ok := range map[string]bool{"Client": o.Client != nil, "ConnectionString": o.ConnectionString != "", "AccountURL": o.AccountURL != ""} {
		if ok {
			set = append(set, name)
		}
	}
	slices.Sort(set)
	switch len(set) {
	case 0:
		return invalid("Options", "no Client, ConnectionString or AccountURL", "must say how to reach the account: set exactly one of them")
	case 1:
		return nil
	}
	return invalid("Options", strings.Join(set, " and ")+" set", "must say how to reach the account once: set exactly one of Client, ConnectionString and AccountURL")
}

// validContainer checks Azure's rules for container names: 3 to 63
// lower-case letters, digits and hyphens, starting and ending with a letter
// or digit, no two hyphens in a row.
func validContainer(name string) error {
	bad := len(name) < 3 || len(name) > 63 || strings.Contains(name, "--") ||
		strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			bad = true
		}
	}
	if bad {
		return invalid("Container", fmt.Sprintf("%q", name), "is not a container name: 3 to 63 lower-case letters, digits and single hyphens, starting and ending with a letter or digit")
	}
	return nil
}

// noRetries turns the SDK's retries off for one call: the caller (the
// runner) retries, within its own deadlines.
var noRetries = policy.RetryOptions{MaxRetries: -1}

func clientOptions() *azblob.ClientOptions {
	return &azblob.ClientOptions{ClientOptions: policy.ClientOptions{Retry: noRetries}}
}

// client builds the client o describes, and says where its credentials
// come from (nil for a Client given).
func (o Options) client() (*azblob.Client, credentialSource, error) {
	switch {
	case o.Client != nil:
		return o.Client, nil, nil
	case o.ConnectionString != "":
		if isDevelopmentStorage(o.ConnectionString) {
			return nil, nil, invalid("ConnectionString", fmt.Sprintf("%q", o.ConnectionString), "is not understood by the Go Azure SDK: use Azurite's full connection string, "+
				"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=<Azurite's well-known key>;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;")
		}
		c, err := azblob.NewClientFromConnectionString(o.ConnectionString, clientOptions())
		if err != nil {
			// The value holds a secret: name its keys only.
			return nil, nil, invalid("ConnectionString", "keys "+connectionStringKeys(o.ConnectionString), "is not usable: "+err.Error())
		}
		return c, connectionStringSource(o.ConnectionString), nil
	default:
		u, err := url.Parse(o.AccountURL)
		if err != nil || u.Host == "" || u.User != nil {
			return nil, nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "is not a service URL such as https://NAME.blob.core.windows.net/")
		}
		if u.RawQuery != "" {
			return nil, nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "has a query (a SAS token?): give the service URL alone; leasehold signs in with Entra ID")
		}
		if u.Scheme != "https" {
			return nil, nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "must be https: Entra ID tokens are never sent over plain http (for Azurite, use a ConnectionString)")
		}
		cred, err := newCredential()
		if err != nil {
			return nil, nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "has no credential: azidentity.NewDefaultAzureCredential: "+err.Error())
		}
		c, err := azblob.NewClient(o.AccountURL, cred, clientOptions())
		if err != nil {
			return nil, nil, invalid("AccountURL", strconv.Quote(lease.RedactURL(o.AccountURL)), "is not usable: "+err.Error())
		}
		return c, tokenSource(cred), nil
	}
}

// isDevelopmentStorage reports whether cs is the shorthand
// UseDevelopmentStorage=true, which only the .NET and Python SDKs expand.
func isDevelopmentStorage(cs string) bool {
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(strings.TrimSpace(k), "UseDevelopmentStorage") && strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
	}
	return false
}

// connectionStringKeys lists cs's keys without their values, for errors.
func connectionStringKeys(cs string) string {
	var keys []string
	for part := range strings.SplitSeq(strings.TrimRight(cs, ";"), ";") {
		k, _, _ := strings.Cut(part, "=")
		keys = append(keys, strings.TrimSpace(k))
	}
	return strings.Join(keys, ",")
}

// redactedURL is u without its query, which may hold a SAS token.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable blob URL)"
	}
	u.RawQuery, u.Fragment, u.User, u.RawPath = "", "", nil, "" // RawPath: show "a/b", not "a%2Fb"
	return u.String()
}
