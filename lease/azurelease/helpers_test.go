package azurelease_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// The tests run against Azurite from the local test stack (scripts/stack up
// azurite; eval "$(scripts/stack env)"), or against a real account whose
// connection string is in AZURE_STORAGE_CONNECTION_STRING. Each test
// creates a container of its own and deletes it when it ends.

// testTTL is Azure's shortest lease duration.
const testTTL = 15 * time.Second

// connectionString returns the account's connection string, or skips the
// test, naming the variables to set.
func connectionString(t *testing.T) string {
	t.Helper()
	if cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING"); cs != "" {
		return cs
	}
	if cs := os.Getenv("AZURE_STORAGE_CONNECTION_STRING"); cs != "" {
		return cs
	}
	t.Skip(`azurelease: no Azure Blob service configured: set LEASEHOLD_AZURITE_CONNECTION_STRING (scripts/stack up azurite; eval "$(scripts/stack env)"), or AZURE_STORAGE_CONNECTION_STRING for a real account`)
	return ""
}

// newClient returns a client of the account, without SDK retries; each
// policy, if any, sees every HTTP request.
func newClient(t *testing.T, cs string, perRequest ...policy.Policy) *azblob.Client {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString(cs, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{
		Retry:            policy.RetryOptions{MaxRetries: -1},
		PerRetryPolicies: perRequest,
	}})
	if err != nil {
		t.Fatalf("azblob.NewClientFromConnectionString: %v", err)
	}
	return c
}

// newContainer creates a container of its own for the test, deleted when
// the test ends.
func newContainer(t *testing.T, c *azblob.Client) string {
	t.Helper()
	name := leasetest.UniqueName(strings.ReplaceAll(strings.ToLower(t.Name()), "/", "-"))
	if len(name) > 63 {
		name = name[:54] + name[len(name)-9:]
	}
	name = strings.ReplaceAll(name, "--", "-")
	if _, err := c.CreateContainer(t.Context(), name, nil); err != nil {
		t.Fatalf("CreateContainer(%q): %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.DeleteContainer(ctx, name, nil); err != nil {
			t.Logf("DeleteContainer(%q): %v", name, err)
		}
	})
	return name
}

// env is one test's account and container.
type env struct {
	t         *testing.T
	cs        string
	client    *azblob.Client
	container string
}

// newEnv connects to the account (or skips) and creates a container.
func newEnv(t *testing.T) *env {
	t.Helper()
	cs := connectionString(t)
	c := newClient(t, cs)
	return &env{t: t, cs: cs, client: c, container: newContainer(t, c)}
}

// on returns e for the subtest t.
func (e *env) on(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func (e *env) blob(name string) *blockblob.Client {
	return e.client.ServiceClient().NewContainerClient(e.container).NewBlockBlobClient(name)
}

// open opens the lease on blob name for identity with client c (e's own
// if nil).
func (e *env) open(c *azblob.Client, name, identity string) lease.Lease {
	e.t.Helper()
	if c == nil {
		c = e.client
	}
	l, err := azurelease.Open(e.t.Context(), azurelease.Options{Container: e.container, Blob: name, Client: c}, lease.Options{Identity: identity, TTL: testTTL})
	if err != nil {
		e.t.Fatalf("Open(%s/%s) for %s: %v", e.container, name, identity, err)
	}
	return l
}

// put writes the blob name with body and metadata, as a tool other than
// leasehold would.
func (e *env) put(name string, body string, md map[string]string) {
	e.t.Helper()
	m := map[string]*string{}
	for k, v := range md {
		m[k] = &v
	}
	_, err := e.blob(name).Upload(e.t.Context(), streaming.NopCloser(bytes.NewReader([]byte(body))), &blockblob.UploadOptions{Metadata: m})
	if err != nil {
		e.t.Fatalf("Upload(%s): %v", name, err)
	}
}

// props returns the blob's properties.
func (e *env) props(name string) blob.GetPropertiesResponse {
	e.t.Helper()
	p, err := e.blob(name).GetProperties(e.t.Context(), nil)
	if err != nil {
		e.t.Fatalf("GetProperties(%s): %v", name, err)
	}
	return p
}

func (e *env) acquire(l lease.Lease) lease.Term {
	e.t.Helper()
	t, err := leasetest.Acquire(e.t, e.t.Context(), l)
	if err != nil {
		e.t.Fatalf("%s: Acquire: %v", l.Options().Identity, err)
	}
	return t
}

// counter counts HTTP requests by Blob service operation.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) Do(req *policy.Request) (*http.Response, error) {
	op := operation(req.Raw())
	c.mu.Lock()
	c.n[op]++
	c.mu.Unlock()
	return req.Next()
}

// operation names the Blob service operation of r: GetBlobProperties,
// "LeaseBlob acquire", SetBlobMetadata, PutBlob, or else its method.
func operation(r *http.Request) string {
	switch q := r.URL.Query().Get("comp"); {
	case r.Method == http.MethodHead:
		return "GetBlobProperties"
	case q == "lease":
		action := r.Header.Get("x-ms-lease-action")
		if v := r.Header["x-ms-lease-action"]; len(v) > 0 { // set without canonicalising
			action = v[0]
		}
		return "LeaseBlob " + action
	case q == "metadata":
		return "SetBlobMetadata"
	case r.Method == http.MethodPut && q == "":
		return "PutBlob"
	}
	return r.Method
}

// take returns the counts since the last take, and resets them.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

var _ policy.Policy = (*counter)(nil)
