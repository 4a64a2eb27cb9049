package azurelease_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
)

// TestServiceErrors: each answer of a failing service maps to its sentinel,
// and each call is one request, although the client was built to retry
// five times: azurelease turns the SDK's retries off for its calls.
func TestServiceErrors(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		status int
		code   string
		hang   bool
		want   error
		text   string // in the message
	}{
		{status: 503, code: "ServerBusy", want: lease.ErrUnavailable, text: "503 ServerBusy"},
		{status: 500, code: "InternalError", want: lease.ErrUnavailable, text: "500 InternalError"},
		{status: 403, code: "AuthorizationFailure", want: lease.ErrPermission, text: `containers/blobs/read and Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write on container "leases"`},
		{status: 403, code: "KeyBasedAuthenticationNotPermitted", want: lease.ErrPermission, text: "Shared Key authorization is off on the account (shared_access_key_enabled = false), and no role changes that"},
		{status: 403, code: "AuthorizationPermissionMismatch", want: lease.ErrPermission, text: "AuthorizationPermissionMismatch"},
		{status: 400, code: "InvalidHeaderValue", want: lease.ErrInvalid, text: "--skipApiVersionCheck"},
		{status: 404, code: "ContainerNotFound", want: lease.ErrNotFound, text: `container "leases" does not exist`},
		{hang: true, want: lease.ErrUnavailable, text: "no answer within CallTimeout (1s)"},
	} {
		name := row.code
		if row.hang {
			name = "no-answer"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var requests counter
			requests.n = map[string]int{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if row.hang {
					<-r.Context().Done()
					return
				}
				w.Header().Set("x-ms-error-code", row.code)
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(row.status)
				if r.Method != http.MethodHead {
					fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>test</Message></Error>`, row.code)
				}
			}))
			t.Cleanup(srv.Close)
			cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=" + srv.URL + "/devstoreaccount1;"
			c, err := azblob.NewClientFromConnectionString(cs, &azblob.ClientOptions{ClientOptions: policy.ClientOptions{
				Retry:            policy.RetryOptions{MaxRetries: 5, RetryDelay: time.Millisecond, MaxRetryDelay: time.Millisecond},
				PerRetryPolicies: []policy.Policy{&requests},
			}})
			if err != nil {
				t.Fatal(err)
			}
			l, err := azurelease.Open(t.Context(), azurelease.Options{Container: "leases", Blob: "jobs", Client: c},
				lease.Options{Identity: "worker-1", CallTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			term := lease.Term{Holder: "worker-1", Token: 1, Version: "00000000-0000-4000-8000-000000000000"}
			for _, call := range []struct {
				name string
				f    func() error
				want int // requests
			}{
				{"Observe", func() error { _, err := l.Observe(t.Context()); return err }, 1},
				{"Acquire", func() error { _, err := l.Acquire(t.Context()); return err }, 1},
				{"Renew", func() error { _, err := l.Renew(t.Context(), term); return err }, 1},
			} {
				err := call.f()
				if call.name == "Acquire" {
					t.Logf("Acquire: %s", strings.SplitN(err.Error(), "\n", 2)[0])
				}
				if !errors.Is(err, row.want) || errors.Is(err, lease.ErrLost) || errors.Is(err, lease.ErrHeld) {
					t.Errorf("%s: %v, want an error matching %v", call.name, err, row.want)
				}
				if !strings.Contains(err.Error(), row.text) {
					t.Errorf("%s: %q, want %q in the message", call.name, err, row.text)
				}
				var re *azcore.ResponseError
				if !row.hang && (!errors.As(err, &re) || re.ErrorCode != row.code) {
					t.Errorf("%s: errors.As finds no *azcore.ResponseError with code %s in %v", call.name, row.code, err)
				}
				n := 0
				for _, v := range requests.take() {
					n += v
				}
				if n != call.want {
					t.Errorf("%s sent %d requests, want %d: the SDK's retries must be off", call.name, n, call.want)
				}
			}
		})
	}
}
