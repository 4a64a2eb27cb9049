package dynamolease

import (
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/rule11"
)

// TestRule11: DynamoDB items written by 519cf6f read here with their
// meaning (see package rule11; this file also runs in 519cf6f, on this
// version's items).
func TestRule11(t *testing.T) {
	rule11.Run(t, "testdata/rule11", rule11.Codec{
		Encode: func(r lease.Record) ([]byte, error) { return rule11.ItemJSON(encodeItem(r, "id", "jobs")) },
		Decode: func(b []byte) (lease.Record, error) {
			item, err := rule11.ParseItemJSON(b)
			if err != nil {
				return lease.Record{}, err
			}
			return decodeItem(item)
		},
	})
}
