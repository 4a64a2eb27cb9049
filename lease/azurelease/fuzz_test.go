package azurelease

import (
	"bytes"
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// metadataOf reads blob metadata from fuzz input: one entry a line,
// "key=value"; a line without "=" is a key whose value is nil (the SDK's
// map holds pointers).
func metadataOf(b []byte) map[string]*string {
	if len(b) == 0 {
		return nil
	}
	md := map[string]*string{}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte("="))
		if !ok {
			md[string(k)] = nil
			continue
		}
		s := string(v)
		md[string(k)] = &s
	}
	return md
}

// FuzzDecodeMetadata: whatever metadata a lease blob carries (any keys, in
// any case, any values, nil values), decodeMetadata must not panic, must
// report metadata it does not accept as lease.ErrCorrupt, must return no
// record and no error only for no metadata at all, and must accept only
// records that pass driver.Check and that encodeMetadata writes back as
// the same record. Seeds: testdata/fuzz/FuzzDecodeMetadata.
func FuzzDecodeMetadata(f *testing.F) {
	for _, s := range []string{
		"leasehold=1\nholder=worker-1\ntoken=7\nttl_ms=15000\nreleased=false\nnonce=4f1c9a0b7e22d3c5",
		"Leasehold=1\nHolder=%20spaces%20\nToken=18446744073709551615\nTtl_ms=60000\nReleased=true\nNonce=n",
		"leasehold=2\nholder=w\ntoken=1\nttl_ms=1\nreleased=false\nnonce=n",
		"leasehold=1\nholder=w\ntoken=4\nttl_ms=15000\nreleased=true\nnonce=n;period=2026-11-23T10:00:00Z;done=1",
		"leasehold=1\nholder=w\ntoken=4\nttl_ms=15000\nreleased=false\nnonce=n;later;period=7\nlater=1",
		"owner=someone\nexpires=1700000000",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		md := metadataOf(b)
		r, err := decodeMetadata(md)
		switch {
		case err != nil:
			if !errors.Is(err, lease.ErrCorrupt) || r != nil {
				t.Fatalf("decodeMetadata of %q = %v, %v; want no record and an error matching lease.ErrCorrupt", b, r, err)
			}
			return
		case r == nil:
			if len(md) != 0 {
				t.Fatalf("decodeMetadata of %q = nil, nil; want that only for no metadata", b)
			}
			return
		}
		if err := driver.Check(*r); err != nil || r.Version != "" {
			t.Fatalf("decodeMetadata of %q accepted %+v (Check: %v), want a record that passes Check, without Version", b, *r, err)
		}
		again, err := decodeMetadata(encodeMetadata(*r))
		if err != nil || again == nil || *again != *r {
			t.Fatalf("decodeMetadata of %q = %+v, but encodeMetadata of it reads back as %v, %v: the metadata was not read as written", b, *r, again, err)
		}
	})
}
