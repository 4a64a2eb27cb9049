package dynamolease

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// cannedItem is an HTTP client that answers every request, without a
// network, with a GetItem answer whose Item is item (DynamoDB's JSON: an
// object of attribute values such as {"holder":{"S":"worker-1"}}), or, to
// a Query, one page whose Items are parts (an array of items).
type cannedItem struct{ item, parts []byte }

func (c cannedItem) Do(r *http.Request) (*http.Response, error) {
	body := append(append([]byte(`{"Item":`), c.item...), '}')
	if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.Query" {
		body = append(append([]byte(`{"Items":`), c.parts...), '}')
	}
	return &http.Response{
		StatusCode:    200,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

// FuzzDecodeItem: whatever item sits at a lease's key, as DynamoDB's JSON
// that the SDK's own deserializer reads, the driver's Get must not panic
// and must fail with one of package lease's sentinels, and decodeItem must
// report every item it does not accept as lease.ErrCorrupt and accept only
// records that pass driver.Check, with the stored nonce as Version, and that
// encodeItem writes back as the same record. Seeds: testdata/fuzz/FuzzDecodeItem.
func FuzzDecodeItem(f *testing.F) {
	valid := `{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"holder":{"S":"worker-1"},"token":{"N":"7"},"ttl_ms":{"N":"15000"},"released":{"BOOL":false},"nonce":{"S":"4f1c9a0b7e22d3c5"}}`
	for _, s := range []string{
		valid,
		`{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"holder":{"S":"w"},"token":{"N":"18446744073709551615"},"ttl_ms":{"N":"9223372036854"},"released":{"BOOL":true},"nonce":{"S":"n"}}`,
		`{"lease":{"S":"jobs"},"leasehold":{"N":"2"},"holder":{"S":"worker-1"},"token":{"N":"7"},"ttl_ms":{"N":"15000"},"released":{"BOOL":false},"nonce":{"S":"n"}}`,
		`{"lease":{"S":"jobs"},"owner":{"S":"someone else"},"expires":{"N":"1700000000"}}`,
		`{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"extra":{"M":{"a":{"S":"b"}}},"holder":{"S":"w"},"token":{"N":"1"},"ttl_ms":{"N":"1"},"released":{"BOOL":false},"nonce":{"S":"n"}}`,
		`{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"holder":{"S":"w"},"token":{"N":"4"},"ttl_ms":{"N":"1000"},"released":{"BOOL":true},"nonce":{"S":"n;period=2026-11-23T10:00:00Z;done=1"}}`,
		`{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"holder":{"S":"w"},"token":{"N":"4"},"ttl_ms":{"N":"1000"},"released":{"BOOL":false},"nonce":{"S":"n;later;period=7"}}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, item []byte) {
		ctx := context.Background()
		client := ddb.New(ddb.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String("http://dynamodb.fuzz.invalid"),
			Credentials:  aws.AnonymousCredentials{},
			HTTPClient:   cannedItem{item: item},
		})
		d := &conn{client: client, table: "leases", name: "jobs", keyAttr: DefaultKeyAttribute}

		// The driver's whole read: never a panic, always a sentinel.
		got, getErr := d.Get(ctx)
		if getErr != nil && !isSentinel(getErr) {
			t.Fatalf("Get of item %s: %v, want an error wrapping one of package lease's sentinels", item, getErr)
		}

		// decodeItem itself, on what the SDK made of the item.
		out, err := client.GetItem(ctx, &ddb.GetItemInput{TableName: aws.String("leases"), Key: d.key()}, callOptions)
		if err != nil || len(out.Item) == 0 {
			return // not an item: the SDK's deserializer refused it, or it is empty (ErrNoRecord)
		}
		r, err := decodeItem(out.Item)
		if err != nil {
			if !errors.Is(err, lease.ErrCorrupt) {
				t.Fatalf("decodeItem(%s): %v, want an error matching lease.ErrCorrupt", item, err)
			}
			if !errors.Is(getErr, lease.ErrCorrupt) {
				t.Fatalf("Get of item %s: %v, want lease.ErrCorrupt as decodeItem says: %v", item, getErr, err)
			}
			return
		}
		if getErr != nil || got != r {
			t.Fatalf("Get of item %s = %+v, %v; decodeItem says %+v", item, got, getErr, r)
		}
		stored, _ := out.Item[attrNonce].(*types.AttributeValueMemberS)
		if err := driver.Check(r); err != nil || stored == nil || r.Version != stored.Value {
			t.Fatalf("decodeItem(%s) accepted %+v (Check: %v), want a record that passes Check with Version = the stored nonce", item, r, err)
		}
		again, err := decodeItem(encodeItem(r, DefaultKeyAttribute, "jobs"))
		want := r
		want.Version = driver.EncodeNonce(r) // attributes it does not know are not written back
		if err != nil || again != want {
			t.Fatalf("decodeItem(%s) = %+v, but encodeItem of it reads back as %+v, %v: the item was not read as written (ttl_ms %s)",
				item, r, again, err, strconv.Quote(describe(out.Item[attrTTL])))
		}
	})
}

// isSentinel reports whether err wraps one of package lease's errors.
func isSentinel(err error) bool {
	for _, s := range []error{lease.ErrHeld, lease.ErrLost, lease.ErrCorrupt, lease.ErrUnavailable, lease.ErrNotFound,
		lease.ErrPermission, lease.ErrInvalid, lease.ErrNoRecord, driver.ErrConflict} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// FuzzObjectsGet: whatever head item and parts a group's object has, as
// DynamoDB's JSON that the SDK's own deserializer reads, Objects.Get must
// not panic, nor allocate for parts it was not given, and must fail with
// one of package lease's sentinels or return the bytes of exactly the parts
// the head names: a head whose version names parts that the Query does not
// return in full is lease.ErrCorrupt (read twice, it names parts that are
// gone), as is one naming more than maxParts. Seeds:
// testdata/fuzz/FuzzObjectsGet.
func FuzzObjectsGet(f *testing.F) {
	for _, s := range [][2]string{
		{`{"group":{"S":"g"},"key":{"S":"assignment"},"nonce":{"S":"4f1c9a0b7e22d3c5"},"data":{"B":"AQID"}}`, `[]`},
		{`{"group":{"S":"g"},"key":{"S":"assignment"},"nonce":{"S":"4f1c9a0b7e22d3c5/2"}}`, `[{"data":{"B":"AQID"}},{"data":{"B":"BAU="}}]`},
		{`{"group":{"S":"g"},"key":{"S":"assignment"},"nonce":{"S":"4f1c9a0b7e22d3c5/2"}}`, `[]`},
		{`{"group":{"S":"g"},"key":{"S":"assignment"},"nonce":{"S":"4f1c9a0b7e22d3c5/9223372036854775807"}}`, `[]`},
		{`{"group":{"S":"g"},"key":{"S":"assignment"},"nonce":{"N":"1"}}`, `[]`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, head, partItems []byte) {
		client := ddb.New(ddb.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String("http://dynamodb.fuzz.invalid"),
			Credentials:  aws.AnonymousCredentials{},
			HTTPClient:   cannedItem{item: head, parts: partItems},
		})
		o := &Objects{base: conn{client: client, table: "shards", name: "g", keyAttr: DefaultGroupAttribute, sortAttr: DefaultObjectKeyAttribute}}
		data, version, err := o.Get(context.Background(), "g/assignment", "")
		if err != nil {
			if !isSentinel(err) {
				t.Fatalf("Get of head %s, parts %s: %v, want an error wrapping one of package lease's sentinels", head, partItems, err)
			}
			return
		}
		n, ok := parts(version)
		if !ok {
			t.Fatalf("Get of head %s returned version %q, which names parts no object has", head, version)
		}
		if n == 0 {
			return
		}
		// The parts as the SDK's deserializer reads them, not as a strict
		// JSON parser would: the SDK accepts bytes encoding/json refuses
		// (a stray digit after an object), and the driver sees only what the
		// SDK made of them.
		out, qerr := client.Query(context.Background(), &ddb.QueryInput{TableName: aws.String("shards")}, callOptions)
		if qerr != nil || len(out.Items) != n {
			t.Fatalf("Get of head %s (version %q), parts %s: %d bytes, no error; want the bytes only of exactly %d parts", head, version, partItems, len(data), n)
		}
		var want []byte
		for _, it := range out.Items {
			b, ok := it[attrData].(*types.AttributeValueMemberB)
			if !ok {
				t.Fatalf("Get of head %s, parts %s: %d bytes, no error; a part has no binary data (%T)", head, partItems, len(data), it[attrData])
			}
			want = append(want, b.Value...)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("Get of head %s, parts %s: %q; want the parts' bytes in order, %q", head, partItems, data, want)
		}
	})
}
