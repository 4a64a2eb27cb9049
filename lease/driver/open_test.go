package driver_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/memlease"
)

func TestOpenURLOpensItsOwnScheme(t *testing.T) {
	ctx := context.Background()
	opts := lease.Options{Identity: "worker-1"}
	l, err := memlease.OpenURL(ctx, "mem://open-url", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Options().Identity; got != "worker-1" {
		t.Errorf("identity %q, want worker-1", got)
	}
	for _, tc := range []struct{ name, url, want string }{
		{"another scheme", "s3://bucket/key", `memlease: URL ("s3://bucket/key") has scheme "s3"; memlease.OpenURL opens mem:// URLs`},
		{"no scheme", "name", `has scheme ""`},
		{"malformed", "mem://a b%zz", "lease: URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := driver.OpenURL(ctx, "memlease", memlease.Scheme, tc.url, opts)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want lease.ErrInvalid saying %q", err, tc.want)
			}
		})
	}
}
