package driver_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/rule11"
)

// TestRule11: the JSON records of memory, S3 and Cloud Storage written by
// 519cf6f read here with their meaning (see package rule11; this file
// also runs in 519cf6f, on this version's records).
func TestRule11(t *testing.T) {
	rule11.Run(t, "testdata/rule11", rule11.Codec{
		Encode: func(r lease.Record) ([]byte, error) { return driver.EncodeJSON(r), nil },
		Decode: driver.DecodeJSON,
	})
}
