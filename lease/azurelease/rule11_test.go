package azurelease

import (
	"encoding/json"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/rule11"
)

// TestRule11: blob metadata written by 519cf6f reads here with its meaning
// (see package rule11; this file also runs in 519cf6f, on this version's
// metadata).
func TestRule11(t *testing.T) {
	rule11.Run(t, "testdata/rule11", rule11.Codec{
		Encode: func(r lease.Record) ([]byte, error) { return json.Marshal(encodeMetadata(r)) },
		Decode: func(b []byte) (lease.Record, error) {
			var md map[string]*string
			if err := json.Unmarshal(b, &md); err != nil {
				return lease.Record{}, err
			}
			r, err := decodeMetadata(md)
			if err != nil {
				return lease.Record{}, err
			}
			return *r, nil
		},
	})
}
