package gcslease

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// FuzzReadObject: whatever object sits at a lease's name, with whatever
// generation header, the driver's Get must not panic; it must report an
// object that driver.DecodeJSON does not accept (of any size: Get reads at
// most MaxRecordSize+1 bytes) as lease.ErrCorrupt, an answer without a
// usable generation as lease.ErrUnavailable, and otherwise return the
// record with its generation, in decimal, as Version. An answer without a
// usable generation is judged before its body: it is no object's download. Seeds:
// testdata/fuzz/FuzzReadObject.
func FuzzReadObject(f *testing.F) {
	valid := `{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5"}`
	for _, s := range []struct{ body, generation string }{
		{valid, "1700000000000001"},
		{valid, ""},
		{`<?xml version="1.0"?><Error><Code>NoSuchKey</Code></Error>`, "1"},
		{"", "1"},
	} {
		f.Add([]byte(s.body), s.generation)
	}
	f.Fuzz(func(t *testing.T, body []byte, generation string) {
		client, err := storage.NewService(context.Background(), option.WithEndpoint("http://storage.fuzz.invalid/storage/v1/"),
			option.WithoutAuthentication(), option.WithHTTPClient(&http.Client{Transport: storetest.CannedObject{Body: body, Header: "X-Goog-Generation", Value: generation}}))
		if err != nil {
			t.Fatal(err)
		}
		r, err := newConn(client, "leases", "jobs", time.Second).Get(context.Background())
		want, decodeErr := driver.DecodeJSON(body[:min(len(body), driver.MaxRecordSize+1)])
		gen, genErr := strconv.ParseInt(generation, 10, 64)
		switch {
		case genErr != nil || gen <= 0:
			// The driver refuses an answer without a usable generation
			// before its body is read: not an object's download (a
			// proxy's page; red team 23's RT23-3), whatever the body.
			if !errors.Is(err, lease.ErrUnavailable) || errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("Get of %q with generation %q = %+v, %v; want lease.ErrUnavailable, whatever the body", body, generation, r, err)
			}
		case decodeErr != nil:
			if !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("Get of %q (generation %q) = %+v, %v; want lease.ErrCorrupt, as DecodeJSON says: %v", body, generation, r, err, decodeErr)
			}
		default:
			want.Version = strconv.FormatInt(gen, 10)
			if err != nil || r != want {
				t.Fatalf("Get of record %q (generation %q) = %+v, %v; want %+v", body, generation, r, err, want)
			}
		}
	})
}
