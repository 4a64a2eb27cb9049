package shard

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

func TestOpenMem(t *testing.T) {
	store, group, err := Open(t.Context(), "mem://jobs/eu", lease.Options{Identity: "w1"})
	if err != nil || group != "jobs/eu" {
		t.Fatalf("Open mem://jobs/eu: group %q, %v; want jobs/eu", group, err)
	}
	if _, ok := store.(*memlease.Objects); !ok {
		t.Fatalf("Open mem://: %T, want *memlease.Objects", store)
	}
}

func TestOpenNamesTheURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"nope://b/k", `URL ("nope://b/k") has scheme "nope", which has no shard store (registered: mem`},
		{"mem://g?x=1", "has query parameters"},
		{"mem://", "names no group"},
		{"mem://%zz", "is malformed"},
	} {
		_, _, err := Open(t.Context(), tc.url, lease.Options{Identity: "w"})
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open %s: %v; want ErrInvalid containing %q", tc.url, err, tc.want)
		}
	}
}
