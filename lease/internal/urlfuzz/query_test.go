package urlfuzz_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/shard"
)

// TestMalformedQuery: every URL opener, of leases (lease.Open) and of shard
// groups (shard.OpenStore), refuses a URL with a query pair it cannot
// parse, naming the parameter, where url.URL.Query drops the pair: an
// s3:// URL whose endpoint is malformed opened on the environment's (or
// AWS's own) endpoint instead of the one named, and a mem:// URL opened
// although mem URLs take no parameters.
func TestMalformedQuery(t *testing.T) {
	dialled := isolate(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel() // dynamodb's openers describe the table: the request is never sent
	opts := lease.Options{Identity: "w"}
	for _, tc := range []struct {
		name, url, param string
	}{
		{"mem", "mem://jobs?x=%zz", "x"},
		{"s3 endpoint", "s3://bucket/jobs?region=us-east-1&endpoint=http://127.0.0.1:9000/%zz", "endpoint"},
		{"s3 semicolon", "s3://bucket/jobs?region=us-east-1;use_path_style=true", "region"},
		{"dynamodb endpoint", "dynamodb://leases/jobs?region=us-east-1&endpoint=http://127.0.0.1:8000/%zz", "endpoint"},
		{"azblob", "azblob://leases/jobs?connection_string_env=LEASEHOLD_FUZZ_CS&infinite_lease=%zz", "infinite_lease"},
		{"gs", "gs://bucket/jobs?x=%zz", "x"},
		{"malformed name", "gs://bucket/jobs?%zz=1", "%zz"},
	} {
		for _, open := range []struct {
			name string
			open func(string) error
		}{
			{"lease.Open", func(u string) error { _, err := lease.Open(cancelled, u, opts); return err }},
			{"shard.OpenStore", func(u string) error { _, _, err := shard.OpenStore(cancelled, u, opts); return err }},
		} {
			t.Run(tc.name+"/"+open.name, func(t *testing.T) {
				err := open.open(tc.url)
				if want := `query parameter "` + tc.param + `", which cannot be parsed`; !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), want) {
					t.Fatalf("%s(%q): %v; want lease.ErrInvalid saying %s", open.name, tc.url, err, want)
				}
				if n := dialled.Load(); n > 0 {
					t.Fatalf("%s(%q): %d connection(s) to the tripwire", open.name, tc.url, n)
				}
			})
		}
	}
}
