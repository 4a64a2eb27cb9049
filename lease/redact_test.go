package lease_test

import (
	"context"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, row := range []struct{ in, want string }{
		{"s3://bucket/key", "s3://bucket/key"},
		{"s3://user:pw@bucket/key", "s3://user:xxxxx@bucket/key"},
		{"s3://user@bucket/key", "s3://user@bucket/key"},
		{"s3://user:pw@b/k%zz", "s3://user:xxxxx@b/k%zz"},
		{"//:0@", "//:xxxxx@"},
		{"s3://b/k?endpoint=//u:pw@h", "s3://b/k?endpoint=//u:xxxxx@h"},
		{"s3://b/k?endpoint=http://user:pw@127.0.0.1:9000&region=x", "s3://b/k?endpoint=http://user:xxxxx@127.0.0.1:9000&region=x"},
		{"s3://b/k?region=x&endpoint=http%3A%2F%2Fuser%3Apw%40127.0.0.1%3A9000", "s3://b/k?region=x&endpoint=http://user:xxxxx@127.0.0.1:9000"},
		{"s3://b/k?endpoint=http%3A%2F%2F127.0.0.1%3A9000", "s3://b/k?endpoint=http%3A%2F%2F127.0.0.1%3A9000"},
		{"azblob://c/b?endpoint=https%3A%2F%2Fa.blob.core.windows.net%2F%3Fsv%3D1%26sig%3Dpw", "azblob://c/b?endpoint=https://a.blob.core.windows.net/?sv=1&sig=xxxxx"},
		{"https://a.blob.core.windows.net/?sv=1&SIG=pw#top", "https://a.blob.core.windows.net/?sv=1&SIG=xxxxx#top"},
		{"mem://jobs?x=%zz&y", "mem://jobs?x=%zz&y"},
		{"", ""},
	} {
		if got := lease.RedactURL(row.in); got != row.want {
			t.Errorf("RedactURL(%q) = %q, want %q", row.in, got, row.want)
		}
	}
}

// TestOpenRedacts: no error of lease.Open shows a password or signature
// from the URL, whichever backend's check refuses it.
func TestOpenRedacts(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"nosuch://user:pw-secret@b/k",
		"nosuch://b/k?endpoint=http://user:pw-secret@127.0.0.1:9",
		"s3://b/k%zz?endpoint=http://user:pw-secret@127.0.0.1:9",
		"mem://jobs?endpoint=http://user:pw-secret@127.0.0.1:9",
		"mem://jobs?sig=pw-secret",
	} {
		_, err := lease.Open(context.Background(), u, lease.Options{Identity: "worker-1"})
		if err == nil || strings.Contains(err.Error(), "pw-secret") {
			t.Errorf("Open(%q): %v, want an error without the secret", u, err)
		}
	}
}

// TestRedactURLOfURLs: a quorum URL's members are redacted each, whatever
// their order, queries, or an empty one among them (red team 17).
func TestRedactURLOfURLs(t *testing.T) {
	for in, want := range map[string]string{
		"quorum:s3://AKIA:pw@b/k,s3://b2/k,s3://b3/k":                     "quorum:s3://AKIA:xxxxx@b/k,s3://b2/k,s3://b3/k",
		"quorum:mem://a?x=1,s3://AKIA:pw@b/k,mem://c":                     "quorum:mem://a?x=1,s3://AKIA:xxxxx@b/k,mem://c",
		"quorum:azblob://c/b?sig=abc,s3://u:pw@b/k,,mem://c":              "quorum:azblob://c/b?sig=xxxxx,s3://u:xxxxx@b/k,,mem://c",
		"QUORUM:s3://b/k?endpoint=http://u:pw@h:9000,s3://b2/k,s3://b3/k": "QUORUM:s3://b/k?endpoint=http://u:xxxxx@h:9000,s3://b2/k,s3://b3/k",
		"quorum:s3://u:pw@b/k%zz,mem://b,mem://c":                         "quorum:s3://u:xxxxx@b/k%zz,mem://b,mem://c",
	} {
		if got := lease.RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
