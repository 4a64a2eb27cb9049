package gcslease_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/emulators/gcsemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/shardtest"
)

// shardPageSize is the page size of the suite's listings: 7 objects over
// 3 pages, instead of 2,001 over Cloud Storage's pages of 1,000.
const shardPageSize = 3

// objects returns the bucket as a shard.Store, through c.
func (s *store) objects(t *testing.T, c *storage.Service) *gcslease.Objects {
	t.Helper()
	o, err := gcslease.OpenObjects(t.Context(), gcslease.ObjectsOptions{Bucket: s.Bucket, Client: c, PageSize: shardPageSize})
	if err != nil {
		t.Fatalf("OpenObjects: %v", err)
	}
	return o
}

// deleteUnder deletes every object whose name starts with prefix, when the
// test ends.
func (s *store) deleteUnder(t *testing.T, c *storage.Service, prefix string) {
	t.Cleanup(func() {
		ctx := context.Background()
		list, err := s.objects(t, c).List(ctx, prefix)
		if err != nil {
			t.Logf("cleanup: listing gs://%s/%s: %v", s.Bucket, prefix, err)
		}
		for name := range list {
			if err := s.Delete(ctx, c, name); err != nil && !gcsemu.NotFound(err) {
				t.Logf("cleanup: deleting gs://%s/%s: %v", s.Bucket, name, err)
			}
		}
	})
}

func TestShardConformance(t *testing.T) {
	s := newStore(t)
	c := s.Client(t, nil)
	prefix := "gcslease-test/" + storetest.UniqueName("shardtest")
	s.deleteUnder(t, c, prefix+"/")
	shardtest.Run(t, shardtest.Config{
		NewStore: func(t *testing.T) shardtest.Clients {
			o := s.objects(t, c)
			return func(string) shard.Store { return o }
		},
		Prefix:      prefix,
		TTL:         testTTL,
		CallTimeout: testCallTimeout,
		PageSize:    shardPageSize,
	})
}

// TestListFailingOnALaterPageIsAnError: a listing whose second page fails
// returns an error and no objects, never the first page's alone.
func TestListFailingOnALaterPageIsAnError(t *testing.T) {
	s := newStore(t)
	c := s.Client(t, nil)
	prefix := s.Name("list") + "/"
	s.deleteUnder(t, c, prefix)
	o := s.objects(t, c)
	for _, k := range []string{"acks/a", "acks/b", "acks/c", "acks/d"} {
		if _, err := o.Put(t.Context(), prefix+k, []byte(k), ""); err != nil {
			t.Fatal(err)
		}
	}
	f := &storetest.FailNth{Match: func(r *http.Request) bool { return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/o") }, N: 2}
	broken := s.objects(t, s.Client(t, f))
	if list, err := broken.List(t.Context(), prefix); !errors.Is(err, lease.ErrUnavailable) || list != nil {
		t.Fatalf("List whose second page failed: %v, %v; want no objects and lease.ErrUnavailable", list, err)
	}
	if f.Seen() < 2 {
		t.Fatalf("the listing took %d request(s); want at least 2 pages", f.Seen())
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1") // no credentials needed, no request sent
	store, group, err := shard.OpenStore(ctx, "gs://bucket/groups/jobs", lease.Options{Identity: "w"})
	if _, ok := store.(*gcslease.Objects); !ok || group != "groups/jobs" || err != nil {
		t.Fatalf("OpenStore: %T, %q, %v; want *gcslease.Objects and the group groups/jobs", store, group, err)
	}
	if _, _, err := shard.OpenStore(ctx, "gs://bucket/jobs?ttl=5s", lease.Options{Identity: "w"}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "unknown query parameter(s) ttl") {
		t.Errorf("OpenStore with a query parameter: %v; want lease.ErrInvalid naming it", err)
	}
	if _, err := gcslease.OpenObjects(ctx, gcslease.ObjectsOptions{Bucket: "b", PageSize: -1}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "PageSize (-1)") {
		t.Errorf("OpenObjects with PageSize -1: %v; want lease.ErrInvalid naming PageSize (-1)", err)
	}
	o, err := gcslease.OpenObjects(ctx, gcslease.ObjectsOptions{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Lease("jobs/assigner", lease.Options{Identity: "w", TTL: gcslease.MinTTL / 2}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "TTL") {
		t.Errorf("Lease with a TTL under MinTTL: %v; want lease.ErrInvalid naming TTL", err)
	}
}

// TestGroupCallsAreGranted: the requests of a shard group's workers need
// exactly what Description grants shard groups: the permissions of a
// lease on the objects under the group's prefix, and storage.objects.list
// on the bucket, listing that prefix.
func TestGroupCallsAreGranted(t *testing.T) {
	s := newStore(t)
	group := s.Name("group")
	c := s.Client(t, nil)
	s.deleteUnder(t, c, group+"/")
	calls := storetest.NewCounter(nil, label(group, "GROUP"))
	client := s.Client(t, calls)
	shardtest.CheckCallsGranted(t, gcslease.Description, shardtest.Config{
		NewStore: func(t *testing.T) shardtest.Clients {
			o := s.objects(t, client)
			return func(string) shard.Store { return o }
		},
		TTL:         testTTL,
		CallTimeout: testCallTimeout,
	}, group, func() []string { return slices.Sorted(maps.Keys(calls.Take())) })
}
