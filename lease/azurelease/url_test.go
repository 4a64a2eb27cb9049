package azurelease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestURLConnectionStringEnv opens a lease by URL with the connection
// string in a variable of the user's choice, and uses it.
func TestURLConnectionStringEnv(t *testing.T) {
	e := newEnv(t) // not parallel: it sets a variable
	t.Setenv("LEASEHOLD_TEST_AZBLOB_CS", e.ConnectionString)
	l, err := lease.Open(t.Context(), "azblob://"+e.Container+"/by-url/jobs?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS", lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatalf("lease.Open: %v", err)
	}
	term := e.acquire(l)
	if err := l.Release(t.Context(), term); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if p := e.props("by-url/jobs"); p.Metadata == nil {
		t.Errorf("the blob by-url/jobs has no metadata after a term")
	}
}
