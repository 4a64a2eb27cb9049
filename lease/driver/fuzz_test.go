package driver_test

import (
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// FuzzDecodeJSON: whatever bytes sit at a lease's key, DecodeJSON must not
// panic, must report anything it does not accept as lease.ErrCorrupt, and
// must accept only records that pass Check and that EncodeJSON
// writes back as the same record, so that no foreign value is read as
// something else (a huge ttl_ms as a small TTL, say). Seeds:
// testdata/fuzz/FuzzDecodeJSON.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}`,
		`{"leasehold":1,"holder":"w","token":18446744073709551615,"ttl_ms":1,"released":true,"nonce":"n"}`,
		`{"leasehold":1,"holder":"w","token":2,"ttl_ms":1000,"released":true,"nonce":"n;period=2026-11-23T10:00:00Z;done=1"}`,
		`{"leasehold":1,"holder":"w","token":2,"ttl_ms":1000,"released":false,"nonce":"n;later=1;period=7"}`,
		`{"leasehold":2,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"ab"}`,
		`{"holder":"x"}`,
		`null`,
		`not a lease`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := driver.DecodeJSON(b)
		if err != nil {
			if !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("DecodeJSON(%q): %v, want an error matching lease.ErrCorrupt", b, err)
			}
			return
		}
		if err := driver.Check(r); err != nil {
			t.Fatalf("DecodeJSON(%q) accepted %+v, which fails Check: %v", b, r, err)
		}
		if r.Version != "" {
			t.Fatalf("DecodeJSON(%q) set Version %q; the JSON has none", b, r.Version)
		}
		again, err := driver.DecodeJSON(driver.EncodeJSON(r))
		if err != nil || again != r {
			t.Fatalf("DecodeJSON(%q) = %+v, but EncodeJSON of it reads back as %+v, %v: the input was not read as written", b, r, again, err)
		}
	})
}
