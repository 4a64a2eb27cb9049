package gcslease_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestOpenURL opens a gs:// URL on the emulator, which the client finds
// through STORAGE_EMULATOR_HOST, and uses the lease.
func TestOpenURL(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	object := s.Name("url")
	storetest.UseURL(t, s.URL(object), testTTL, func(term lease.Term) {
		body, gen, _ := s.Get(t, s.Client(t, nil), object)
		if r, err := driver.DecodeJSON(body); err != nil || r.Holder != "worker-1" || strconv.FormatInt(gen, 10) != term.Version {
			t.Errorf("object %s is %s (generation %d), want worker-1's record at generation %s", object, body, gen, term.Version)
		}
	})
}

// TestOpenErrors: bad URLs and options are lease.ErrInvalid, naming the
// field or parameter at fault, before any request is sent.
func TestOpenErrors(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:1") // no credentials looked for, nothing reached
	storetest.RefuseURLs(t, "gcslease", []storetest.BadURL{
		{Name: "UnknownParam", URL: "gs://bucket/object?ttl=15s&user_project=p", Mention: "unknown query parameter(s) ttl, user_project (known: none)"},
		{Name: "MissingObject", URL: "gs://bucket", Mention: "names no object"},
		{Name: "MissingObjectSlash", URL: "gs://bucket/", Mention: "names no object"},
		{Name: "MissingBucket", URL: "gs:///object", Mention: "names no bucket"},
		{Name: "Port", URL: "gs://127.0.0.1:4443/bucket/object", Mention: "STORAGE_EMULATOR_HOST"},
		{Name: "Credentials", URL: "gs://user:secret@bucket/object", Mention: "Application Default Credentials"},
	})
	for _, row := range []struct {
		name    string
		opts    gcslease.Options
		lopts   lease.Options
		mention string
	}{
		{"EmptyBucket", gcslease.Options{Object: "o"}, testOptions("w"), `gcslease: Bucket ("") must not be empty`},
		{"EmptyObject", gcslease.Options{Bucket: "b"}, testOptions("w"), `gcslease: Object ("") must not be empty`},
		{"LongObject", gcslease.Options{Bucket: "b", Object: strings.Repeat("o", 1025)}, testOptions("w"), "is 1025 bytes long; at most 1008 are allowed"},
		{"ProbeObject", gcslease.Options{Bucket: "b", Object: "jobs.leasehold-probe"}, testOptions("w"), `gcslease: Object ("jobs.leasehold-probe") must not end with .leasehold-probe`},
		{"ObjectWithNewline", gcslease.Options{Bucket: "b", Object: "a\nb"}, testOptions("w"), "line feeds"},
		{"ObjectNotUTF8", gcslease.Options{Bucket: "b", Object: "a\xffb"}, testOptions("w"), "valid UTF-8"},
		{"TTLBelowWriteRate", gcslease.Options{Bucket: "b", Object: "o"}, lease.Options{Identity: "w", TTL: 2999 * time.Millisecond},
			"gcslease: TTL (2.999s) must be at least 3s: Cloud Storage allows about one write per second to one object"},
		{"NoIdentity", gcslease.Options{Bucket: "b", Object: "o"}, lease.Options{}, "Identity"},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := gcslease.Open(t.Context(), row.opts, row.lopts)
			t.Logf("%v", err)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), row.mention) {
				t.Errorf("Open: %v, want lease.ErrInvalid mentioning %q", err, row.mention)
			}
		})
	}
	t.Run("DefaultTTL", func(t *testing.T) {
		if _, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: "b", Object: "o"}, lease.Options{Identity: "w"}); err != nil {
			t.Errorf("Open with the default TTL (%v): %v", lease.DefaultTTL, err)
		}
	})
	if got := lease.Schemes(); !strings.Contains(strings.Join(got, ","), gcslease.Scheme) {
		t.Errorf("lease.Schemes() = %v, want %q registered", got, gcslease.Scheme)
	}
}
