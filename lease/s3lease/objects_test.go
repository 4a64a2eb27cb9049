package s3lease_test

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/shardtest"
)

// shardPageSize is the page size of the suite's listings: 7 keys over 3
// pages, instead of 2,001 keys over S3's pages of 1,000.
const shardPageSize = 3

// objects returns the target's bucket as a shard.Store, through c.
func (tg *target) objects(t *testing.T, c *s3.Client) *s3lease.Objects {
	t.Helper()
	o, err := s3lease.OpenObjects(t.Context(), s3lease.ObjectsOptions{Bucket: tg.Bucket, Client: c, UsePathStyle: tg.PathStyle, PageSize: shardPageSize})
	if err != nil {
		t.Fatalf("%s: OpenObjects: %v", tg.Name, err)
	}
	return o
}

func TestShardConformance(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		shardtest.Run(t, shardtest.Config{
			NewStore: func(t *testing.T) shardtest.Clients {
				o := tg.objects(t, tg.NewClient(nil))
				return func(string) shard.Store { return o }
			},
			// moto's TTL is longer: one Python process serves every suite.
			TTL:         cmp.Or(tg.TTL, testTTL),
			CallTimeout: tg.CallTimeout,
			PageSize:    shardPageSize,
		})
	})
}

// TestListFailingOnALaterPageIsAnError: a listing whose second page fails
// returns an error and no keys, never the first page's alone.
func TestListFailingOnALaterPageIsAnError(t *testing.T) {
	tg := targets.First(t)
	o := tg.objects(t, tg.NewClient(nil))
	for _, k := range []string{"g/acks/a", "g/acks/b", "g/acks/c", "g/acks/d"} {
		if _, err := o.Put(t.Context(), k, []byte(k), ""); err != nil {
			t.Fatal(err)
		}
	}
	f := &storetest.FailNth{Match: func(r *http.Request) bool { return r.URL.Query().Has("list-type") }, N: 2}
	broken := tg.objects(t, tg.NewClient(f))
	if list, err := broken.List(t.Context(), "g/"); !errors.Is(err, lease.ErrUnavailable) || list != nil {
		t.Fatalf("List whose second page failed: %v, %v; want no keys and lease.ErrUnavailable", list, err)
	}
	if f.Seen() < 2 {
		t.Fatalf("the listing took %d request(s); want at least 2 pages", f.Seen())
	}
}

func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	store, group, err := shard.OpenStore(ctx, "s3://bucket/groups/jobs?region=eu-west-1&use_path_style=true", lease.Options{Identity: "w"})
	if _, ok := store.(*s3lease.Objects); !ok || group != "groups/jobs" || err != nil {
		t.Fatalf("OpenStore: %T, %q, %v; want *s3lease.Objects and the group groups/jobs", store, group, err)
	}
	for _, tc := range []struct{ name, url, want string }{
		{"unknown parameter", "s3://bucket/jobs?region=eu-west-1&ttl=5s", "unknown query parameter(s) ttl"},
		{"no group", "s3://bucket?region=eu-west-1", "names no key"},
		{"unknown scheme", "s4://bucket/jobs", `unknown scheme "s4" (registered for shard groups: s3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := shard.OpenStore(ctx, tc.url, lease.Options{Identity: "w"}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenStore(%q): %v; want lease.ErrInvalid saying %q", tc.url, err, tc.want)
			}
		})
	}
	if _, err := s3lease.OpenObjects(ctx, s3lease.ObjectsOptions{Bucket: "b", PageSize: 1001}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "PageSize (1001)") {
		t.Errorf("OpenObjects with PageSize 1001: %v; want lease.ErrInvalid naming PageSize (1001)", err)
	}
}

// TestGroupCallsAreGranted: the requests of a shard group's workers are
// exactly what Description grants shard groups: the objects under the
// group's prefix, and the bucket's listing.
func TestGroupCallsAreGranted(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		group := storetest.UniqueName("s3lease-group")
		calls := storetest.NewCounter(nil, tg.label(group, "GROUP"))
		client := tg.NewClient(calls)
		shardtest.CheckCallsGranted(t, s3lease.Description, shardtest.Config{
			NewStore: func(t *testing.T) shardtest.Clients {
				o := tg.objects(t, client)
				return func(string) shard.Store { return o }
			},
			// moto's TTL is longer: one Python process serves every suite.
			TTL:         cmp.Or(tg.TTL, testTTL),
			CallTimeout: tg.CallTimeout,
		}, group, func() []string { return slices.Sorted(maps.Keys(calls.Take())) })
	})
}
