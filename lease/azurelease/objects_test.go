package azurelease_test

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/shardtest"
)

var _ shard.Store = (*azurelease.Objects)(nil)

// shardPageSize is the page size of the suite's listings: 7 blobs over 3
// pages, instead of 10,001 over Azure's pages of 5,000.
const shardPageSize = 3

func newObjects(t *testing.T, e *env, c *azblob.Client, pageSize int) *azurelease.Objects {
	t.Helper()
	o, err := azurelease.NewObjects(azurelease.ObjectsOptions{Options: azurelease.Options{Container: e.Container, Client: c}, PageSize: pageSize})
	if err != nil {
		t.Fatalf("NewObjects: %v", err)
	}
	return o
}

func TestNewObjectsNamesTheField(t *testing.T) {
	cs := "AccountName=a;AccountKey=a2V5"
	for _, tc := range []struct {
		opts azurelease.ObjectsOptions
		want string
	}{
		{azurelease.ObjectsOptions{Options: azurelease.Options{Container: "ccc", ConnectionString: cs, Blob: "x"}}, "Blob"},
		{azurelease.ObjectsOptions{Options: azurelease.Options{Container: "ccc", ConnectionString: cs, InfiniteLease: true}}, "InfiniteLease"},
		{azurelease.ObjectsOptions{Options: azurelease.Options{Container: "ab"}}, "Container"},
		{azurelease.ObjectsOptions{Options: azurelease.Options{Container: "abc"}}, "Client, ConnectionString or AccountURL"},
		{azurelease.ObjectsOptions{Options: azurelease.Options{Container: "ccc", ConnectionString: cs}, PageSize: 5001}, "PageSize (5001)"},
	} {
		_, err := azurelease.NewObjects(tc.opts)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewObjects(%+v): %v; want lease.ErrInvalid naming %q", tc.opts, err, tc.want)
		}
	}
}

// TestShardConformance runs the shard suite on Azurite, at Azure's
// shortest lease duration; the suite's Lease test checks that every
// renewal changes the ETag that List shows.
func TestShardConformance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shardtest.Run(t, shardtest.Config{
		NewStore: func(t *testing.T) shardtest.Clients {
			o := newObjects(t, e, e.Client, shardPageSize)
			return func(string) shard.Store { return o }
		},
		TTL:      testTTL,
		PageSize: shardPageSize,
	})
}

// TestListPages: a listing asks for PageSize blobs a page: the suite's
// ListAcrossPages lists across pages.
func TestListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls := newCounter()
	o := newObjects(t, e, azureemu.NewClient(t, e.ConnectionString, calls), 2)
	for _, k := range []string{"g/acks/a", "g/acks/b", "g/acks/c", "g/acks/d", "g/acks/e"} {
		if _, err := o.Put(t.Context(), k, []byte(k), ""); err != nil {
			t.Fatal(err)
		}
	}
	calls.take()
	if list, err := o.List(t.Context(), "g/"); err != nil || len(list) != 5 {
		t.Fatalf("List of 5 blobs: %v, %v", list, err)
	}
	if n := calls.take()[http.MethodGet]; n < 3 {
		t.Errorf("a listing of 5 blobs, 2 a page, took %d List Blobs; want at least 3", n)
	}
}

// TestOpenStore: shard.OpenStore opens azblob://CONTAINER/GROUP URLs, and
// refuses what a group's URL cannot carry, naming it.
func TestOpenStore(t *testing.T) {
	e := newEnv(t) // not parallel: it sets a variable
	t.Setenv("LEASEHOLD_TEST_AZBLOB_CS", e.ConnectionString)
	ctx := t.Context()
	store, group, err := shard.OpenStore(ctx, "azblob://"+e.Container+"/groups/jobs?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS", lease.Options{Identity: "w"})
	if _, ok := store.(*azurelease.Objects); !ok || group != "groups/jobs" || err != nil {
		t.Fatalf("OpenStore: %T, %q, %v; want *azurelease.Objects and the group groups/jobs", store, group, err)
	}
	v, err := store.Put(ctx, group+"/acks/w", []byte("x"), "")
	if err != nil {
		t.Fatalf("Put through the opened store: %v", err)
	}
	if list, err := store.List(ctx, group+"/"); err != nil || list[group+"/acks/w"] != v {
		t.Fatalf("List through the opened store: %v, %v; want groups/jobs/acks/w at %q", list, err, v)
	}
	for _, tc := range []struct{ name, url, want string }{
		{"UnknownParam", "azblob://ccc/jobs?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS&ttl=5s", "unknown query parameter(s) ttl (known: account, connection_string_env, endpoint)"},
		{"InfiniteLease", "azblob://ccc/jobs?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS&infinite_lease=true", "unknown query parameter(s) infinite_lease"},
		{"NoGroup", "azblob://ccc?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS", "names no group; want azblob://CONTAINER/GROUP"},
		{"BadContainer", "azblob://c/jobs?connection_string_env=LEASEHOLD_TEST_AZBLOB_CS", `Container ("c")`},
		{"TwoAccounts", "azblob://ccc/jobs?account=abc&connection_string_env=LEASEHOLD_TEST_AZBLOB_CS", "more than one of account, endpoint and connection_string_env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := shard.OpenStore(ctx, tc.url, lease.Options{Identity: "w"}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenStore(%q): %v; want lease.ErrInvalid saying %q", tc.url, err, tc.want)
			}
		})
	}
}

// cut fails every request while on is set, as a network partition would.
type cut struct{ on *atomic.Bool }

func (c cut) Do(req *policy.Request) (*http.Response, error) {
	if c.on.Load() {
		return nil, errors.New("cut off")
	}
	return req.Next()
}

// TestShardsOnAzure runs shardtest.CutOff on Azurite: the assigner judges
// the cut worker's liveness expired once the listings have shown its
// blob's ETag unchanged for a TTL since its last renewal.
func TestShardsOnAzure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shardtest.CutOff(t, func(_ string, on *atomic.Bool) shard.Store {
		return newObjects(t, e, azureemu.NewClient(t, e.ConnectionString, cut{on}), 0)
	}, shard.Config{TTL: testTTL}, 45*time.Second, 4*testTTL)
}
