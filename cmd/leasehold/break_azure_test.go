//go:build unix

package main

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestBreakAzure runs leasehold break against Azurite, whose store judges
// expiry itself: a held blob lease is live, so break refuses without
// --force; with --force the holder's next renewal is lost and the next
// contender takes the lease at once with a greater token.
func TestBreakAzure(t *testing.T) {
	_, url, _, _ := azuriteLease(t, "break")
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

// azuriteLease returns a client of Azurite, or skips the test, and the URL
// of a lease (blob) named after name in a container of its own, with the
// blob's name.
func azuriteLease(t *testing.T, name string) (client *azblob.Client, url, container, blob string) {
	t.Helper()
	container = azuriteContainer(t)
	client, err := azblob.NewClientFromConnectionString(os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING"), nil)
	if err != nil {
		t.Fatal(err)
	}
	blob = leasetest.UniqueName(name)
	return client, "azblob://" + container + "/" + blob + "?connection_string_env=LEASEHOLD_AZURITE_CONNECTION_STRING", container, blob
}

// TestForeignAzureLease: a blob under an Azure lease that no leasehold
// record names (taken with the SDK's lease client, as another tool or a
// person would) is held, by an unknown holder: status says so and how long
// the lease may last; break refuses it and says what --force would break;
// break --force frees it, and the next contender's token follows the last
// leasehold term's.
func TestForeignAzureLease(t *testing.T) {
	for _, tc := range []struct {
		name      string
		seconds   int32 // the foreign lease's duration: -1 is infinite
		lastTerm  bool  // a leasehold term acquired and released the blob first
		remaining string
	}{
		{"fixed, on a new blob", 15, false, "at most 1m0s"},
		{"infinite, after a leasehold term", -1, true, "infinite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, url, container, name := azuriteLease(t, "foreign")
			const ttl = 15 * time.Second
			blob := client.ServiceClient().NewContainerClient(container).NewBlockBlobClient(name)
			var last uint64
			if tc.lastTerm {
				l := openLeaseAs(t, url, "old", ttl)
				term, err := l.Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if err := l.Release(t.Context(), term); err != nil {
					t.Fatal(err)
				}
				last = term.Token
			} else if _, err := blob.Upload(t.Context(), streaming.NopCloser(strings.NewReader("")), nil); err != nil {
				t.Fatal(err)
			}
			other, err := azlease.NewBlobClient(blob, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.AcquireLease(t.Context(), tc.seconds, nil); err != nil {
				t.Fatalf("the other tool's AcquireLease(%d): %v", tc.seconds, err)
			}

			code, rep, stderr := statusJSON(t, "--lease", url, "--ttl", ttl.String())
			if code != 0 || rep.State != "held" || !rep.UnknownHolder || rep.Holder != "" || !strings.Contains(rep.Meaning, "unknown holder") {
				t.Fatalf("status of a foreign Azure lease: exit %d, %+v; want held by an unknown holder; stderr:\n%s", code, rep, stderr)
			}
			if got := map[bool]string{true: "infinite", false: "at most " + rep.TTL}[rep.TTL == ""]; got != tc.remaining {
				t.Errorf("status says the lease lasts %q (ttl %q), want %q", got, rep.TTL, tc.remaining)
			}
			env, stdout, _ := testEnv(nil)
			mainWith(t.Context(), nil, []string{"status", "--lease", url, "--ttl", ttl.String()}, env)
			if text := stdout.String(); !strings.Contains(text, "unknown (no leasehold record names it)") || !strings.Contains(text, tc.remaining) {
				t.Errorf("status (text) does not name an unknown holder lasting %s:\n%s", tc.remaining, text)
			}

			code, brep, stderr := breakJSON(t, "--lease", url, "--ttl", ttl.String())
			if code != exitRefused || brep.Broken || !strings.Contains(brep.Verdict, "no leasehold record names") || !strings.Contains(brep.Verdict, "--force breaks that lease") {
				t.Fatalf("break of a foreign Azure lease: exit %d, %+v; want %d, not broken, a verdict saying what --force would break; stderr:\n%s", code, brep, exitRefused, stderr)
			}

			code, brep, stderr = breakJSON(t, "--lease", url, "--ttl", ttl.String(), "--force")
			if code != 0 || !brep.Broken || brep.NextToken != last+1 || !strings.Contains(brep.Verdict, "no holder named") {
				t.Fatalf("break --force of a foreign Azure lease: exit %d, %+v; want 0, broken, next token %d; stderr:\n%s", code, brep, last+1, stderr)
			}
			next, err := openLeaseAs(t, url, "next", ttl).Acquire(t.Context())
			if err != nil || next.Token != last+1 {
				t.Fatalf("the next contender after the break: %+v, %v; want token %d at once", next, err, last+1)
			}
		})
	}
}
