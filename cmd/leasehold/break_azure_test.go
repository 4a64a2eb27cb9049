//go:build unix

package main

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestBreakAzure runs leasehold break against Azurite, whose store judges
// expiry itself: a held blob lease is live, so break refuses without
// --force; with --force the holder's next renewal is lost and the next
// contender takes the lease at once with a greater token.
func TestBreakAzure(t *testing.T) {
	const variable = "LEASEHOLD_AZURITE_CONNECTION_STRING"
	cs := os.Getenv(variable)
	if cs == "" {
		t.Skipf(`leasehold break on Azure: no Azure Blob emulator configured: set %s (scripts/stack up azurite; eval "$(scripts/stack env)")`, variable)
	}
	client, err := azblob.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	const container = "leasehold-cli-break"
	if _, err := client.CreateContainer(t.Context(), container, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		t.Fatalf("create container %s: %v", container, err)
	}
	url := "azblob://" + container + "/" + leasetest.UniqueName("break") + "?connection_string_env=" + variable
	const ttl = 15 * time.Second
	holder := openLeaseAs(t, url, "holder", ttl)
	term, err := holder.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	code, rep, stderr := breakJSON(t, "--lease", url, "--ttl", ttl.String())
	if code != exitRefused || rep.Broken || !strings.Contains(rep.Verdict, "store's own lease") || !strings.Contains(rep.Verdict, "infinite") {
		t.Fatalf("break of a live Azure lease: exit %d, %+v; want %d, not broken, a verdict naming the store's lease; stderr:\n%s", code, rep, exitRefused, stderr)
	}
	if term, err = holder.Renew(t.Context(), term); err != nil {
		t.Fatalf("the holder's renewal after a refused break: %v", err)
	}

	code, rep, stderr = breakJSON(t, "--lease", url, "--ttl", ttl.String(), "--force")
	if code != 0 || !rep.Broken || rep.NextToken != term.Token+1 {
		t.Fatalf("break --force: exit %d, %+v; want 0, broken, next token %d; stderr:\n%s", code, rep, term.Token+1, stderr)
	}
	if _, err := holder.Renew(t.Context(), term); !errors.Is(err, lease.ErrLost) {
		t.Fatalf("the broken holder's renewal: %v, want lease.ErrLost", err)
	}
	next, err := openLeaseAs(t, url, "next", ttl).Acquire(t.Context())
	if err != nil || next.Token != term.Token+1 {
		t.Fatalf("the next contender after the break: %+v, %v; want token %d at once", next, err, term.Token+1)
	}
}
