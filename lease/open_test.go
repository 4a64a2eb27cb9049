package lease_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/memlease" // registers "mem"
)

// recordingOpener remembers what Open passed it.
type recordingOpener struct {
	u    *url.URL
	opts lease.Options
}

func (o *recordingOpener) OpenLeaseURL(_ context.Context, u *url.URL, opts lease.Options) (lease.Lease, error) {
	o.u, o.opts = u, opts
	return nil, nil
}

var recorder = &recordingOpener{}

func init() { lease.Register("test-recorder", recorder) }

func TestOpenPassesValidatedOptions(t *testing.T) {
	if _, err := lease.Open(t.Context(), "test-recorder://bucket/key?x=1", lease.Options{Identity: "worker-1", TTL: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if recorder.u.Host != "bucket" || recorder.u.Path != "/key" || recorder.u.Query().Get("x") != "1" {
		t.Errorf("opener got URL %v, want test-recorder://bucket/key?x=1", recorder.u)
	}
	if want := (lease.Options{Identity: "worker-1", TTL: 5 * time.Second, CallTimeout: time.Second, RenewInterval: 1875 * time.Millisecond}); recorder.opts != want {
		t.Errorf("opener got options %+v, want %+v (defaults filled in)", recorder.opts, want)
	}
}

func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		url   string
		opts  lease.Options
		field string   // the OptionError's field
		wants []string // substrings of the message
	}{
		{name: "unknown scheme lists the registered ones", url: "gs://bucket/key", opts: lease.Options{Identity: "w"}, field: "URL", wants: []string{`"gs://bucket/key"`, `"gs"`, "registered: mem, test-recorder"}},
		{name: "no scheme", url: "bucket/key", opts: lease.Options{Identity: "w"}, field: "URL", wants: []string{`"bucket/key"`, "registered: mem, test-recorder"}},
		{name: "malformed URL", url: "mem://jobs%zz", opts: lease.Options{Identity: "w"}, field: "URL", wants: []string{`"mem://jobs%zz"`, "malformed"}},
		{name: "control character in URL", url: "mem://jo\x7fbs", opts: lease.Options{Identity: "w"}, field: "URL", wants: []string{"malformed"}},
		{name: "invalid options", url: "test-recorder://bucket/key", opts: lease.Options{Identity: "w", TTL: time.Microsecond}, field: "TTL", wants: []string{"TTL (1µs)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lease.Open(t.Context(), tc.url, tc.opts)
			if !errors.Is(err, lease.ErrInvalid) || l != nil {
				t.Fatalf("Open(%q) = %v, %v; want nil and an error matching lease.ErrInvalid", tc.url, l, err)
			}
			if oe := (*lease.OptionError)(nil); !errors.As(err, &oe) || oe.Field != tc.field {
				t.Errorf("Open(%q) error %v, want an *OptionError for %s", tc.url, err, tc.field)
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open(%q) error %q, want it to contain %q", tc.url, err, want)
				}
			}
		})
	}
}

func TestRegister(t *testing.T) {
	if s := lease.Schemes(); !slices.IsSorted(s) || !slices.Contains(s, "mem") || !slices.Contains(s, "test-recorder") {
		t.Errorf("Schemes() = %v, want a sorted list holding mem and test-recorder", s)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "registered twice") {
			t.Errorf("second Register of a scheme: recovered %v, want a panic saying it is registered twice", r)
		}
	}()
	lease.Register("test-recorder", recorder)
}
