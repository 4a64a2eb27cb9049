package azurelease_test

import (
	"bytes"
	"net/http"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// The tests run against Azurite from the local test stack, or against a
// real account (see azureemu.Store). Each test creates a container of its
// own and deletes it when it ends.

// testTTL is Azure's shortest lease duration.
const testTTL = azurelease.MinTTL

// env is one test's account and container.
type env struct {
	t *testing.T
	*azureemu.Store
}

// newEnv connects to the account (or skips) and creates a container.
func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, Store: azureemu.New(t)}
}

// on returns e for the subtest t.
func (e *env) on(t *testing.T) *env {
	c := *e
	c.t = t
	return &c
}

func (e *env) blob(name string) *blockblob.Client {
	return e.Client.ServiceClient().NewContainerClient(e.Container).NewBlockBlobClient(name)
}

// open opens the lease on blob name for identity with client c (e's own
// if nil).
func (e *env) open(c *azblob.Client, name, identity string) lease.Lease {
	e.t.Helper()
	if c == nil {
		c = e.Client
	}
	l, err := azurelease.Open(e.t.Context(), azurelease.Options{Container: e.Container, Blob: name, Client: c}, lease.Options{Identity: identity, TTL: testTTL})
	if err != nil {
		e.t.Fatalf("Open(%s/%s) for %s: %v", e.Container, name, identity, err)
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
