package shard

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

func TestOpenMem(t *testing.T) {
	store, group, err := OpenStore(t.Context(), "mem://jobs/eu", lease.Options{Identity: "w1"})
	if err != nil || group != "jobs/eu" {
		t.Fatalf("OpenStore mem://jobs/eu: group %q, %v; want jobs/eu", group, err)
	}
	if _, ok := store.(*memlease.Objects); !ok {
		t.Fatalf("OpenStore mem://: %T, want *memlease.Objects", store)
	}
}

func TestOpenNamesTheURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"nope://b/k", `URL ("nope://b/k") has unknown scheme "nope" (registered for shard groups: mem`},
		{"mem://g?x=1", "has unknown query parameter(s) x (known: none)"},
		{"mem://g?x=%zz", `has query parameter "x", which cannot be parsed`},
		{"mem://", "names no group"},
		{"mem://%zz", "is malformed"},
	} {
		_, _, err := OpenStore(t.Context(), tc.url, lease.Options{Identity: "w"})
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenStore %s: %v; want ErrInvalid containing %q", tc.url, err, tc.want)
		}
	}
}
