package s3lease

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// FuzzGetObject: whatever object sits at a lease's key, with whatever
// ETag, the driver's Get must not panic; it must report an object that
// driver.DecodeJSON does not accept (of any size: Get reads at most
// MaxRecordSize+1 bytes) as lease.ErrCorrupt, a record without an ETag as
// lease.ErrUnavailable, and otherwise return the record with its ETag as
// Version. Seeds: testdata/fuzz/FuzzGetObject.
func FuzzGetObject(f *testing.F) {
	valid := `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}`
	for _, s := range []struct{ body, etag string }{
		{valid, `"9b2cf535f27731c974343645a3985328"`},
		{valid, ""},
		{valid + string(bytes.Repeat([]byte(" "), driver.MaxRecordSize)), `"e"`},
		{`<?xml version="1.0"?><Error><Code>NoSuchKey</Code></Error>`, `"x"`},
		{"", `"d41d8cd98f00b204e9800998ecf8427e"`},
	} {
		f.Add([]byte(s.body), s.etag)
	}
	f.Fuzz(func(t *testing.T, body []byte, etag string) {
		client := s3.New(s3.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String("http://s3.fuzz.invalid"),
			Credentials:  aws.AnonymousCredentials{},
			HTTPClient:   storetest.CannedObject{Body: body, Header: "ETag", Value: etag},
		})
		d := &conn{client: client, bucket: "leases", key: "jobs", pathStyle: true}
		r, err := d.Get(context.Background())
		want, decodeErr := driver.DecodeJSON(body[:min(len(body), driver.MaxRecordSize+1)])
		switch {
		case decodeErr != nil:
			if !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("Get of %q (ETag %q) = %+v, %v; want lease.ErrCorrupt, as DecodeJSON says: %v", body, etag, r, err, decodeErr)
			}
		case err != nil:
			if !errors.Is(err, lease.ErrUnavailable) {
				t.Fatalf("Get of record %q (ETag %q): %v, want it, or lease.ErrUnavailable for a missing ETag", body, etag, err)
			}
		default:
			// The SDK trims the header's spaces; an ETag of spaces is none.
			if r.Version == "" || r.Version != strings.TrimSpace(etag) {
				t.Fatalf("Get of record %q (ETag %q) = %+v, want Version to be the ETag", body, etag, r)
			}
			want.Version = r.Version
			if r != want {
				t.Fatalf("Get of record %q = %+v, want %+v", body, r, want)
			}
		}
	})
}
