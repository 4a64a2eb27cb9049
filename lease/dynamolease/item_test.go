package dynamolease

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
)

// ValidItem returns the item of a valid lease record (worker-1's, token
// 3) at the key name, with the attributes in change replaced and those in
// drop removed: the start of an item that is not quite a lease record. It
// is exported for the package's external tests.
func ValidItem(keyAttr, name string, change map[string]types.AttributeValue, drop ...string) map[string]types.AttributeValue {
	item := encodeItem(lease.Record{Holder: "worker-1", Token: 3, TTL: time.Second, Nonce: "0123456789abcdef"}, keyAttr, name)
	maps.Copy(item, change)
	for _, a := range drop {
		delete(item, a)
	}
	return item
}

// TestItemWithAnnotations: the annotations take one M attribute of their
// own, the runner's are mirrored into the nonce, where versions before
// annotations read them, and the stored nonce is the item's version.
func TestItemWithAnnotations(t *testing.T) {
	t.Parallel()
	ann := lease.NewAnnotations(map[string]string{lease.AnnotationPeriod: "2026-11-23T10:00:00Z", lease.AnnotationPeriodDone: "1", "shard/epoch": "9"})
	r := lease.Record{Holder: "worker-1", Token: 4, TTL: time.Second, Released: true, Nonce: "0123456789abcdef", Annotations: ann}
	item := encodeItem(r, "id", "jobs")
	if got, want := slices.Sorted(maps.Keys(item)), slices.Sorted(slices.Values(append([]string{"id", attrAnnotations}, recordAttributes...))); !slices.Equal(got, want) {
		t.Errorf("item attributes %v, want %v", got, want)
	}
	const stored = "0123456789abcdef;period=2026-11-23T10:00:00Z;done=1"
	if n, _ := item[attrNonce].(*types.AttributeValueMemberS); n == nil || n.Value != stored {
		t.Errorf("nonce attribute %v, want S %q", item[attrNonce], stored)
	}
	got, err := decodeItem(item)
	r.Version = stored
	if err != nil || got != r {
		t.Errorf("decodeItem(encodeItem(r)) = %+v, %v; want %+v", got, err, r)
	}
	item[attrAnnotations] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"shard/epoch": &types.AttributeValueMemberN{Value: "9"}}}
	if _, err := decodeItem(item); !errors.Is(err, lease.ErrCorrupt) {
		t.Errorf("decodeItem of an annotation of type N: %v, want lease.ErrCorrupt", err)
	}
}

func TestEncodeDecodeItem(t *testing.T) {
	t.Parallel()
	r := lease.Record{Holder: "worker-1", Token: 18446744073709551615, TTL: 15 * time.Second, Released: true, Nonce: "0123456789abcdef"}
	item := encodeItem(r, "id", "jobs/nightly")
	want := map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "jobs/nightly"}, "leasehold": &types.AttributeValueMemberN{Value: "1"},
		"holder": &types.AttributeValueMemberS{Value: "worker-1"}, "token": &types.AttributeValueMemberN{Value: "18446744073709551615"},
		"ttl_ms": &types.AttributeValueMemberN{Value: "15000"}, "released": &types.AttributeValueMemberBOOL{Value: true},
		"nonce": &types.AttributeValueMemberS{Value: "0123456789abcdef"},
	}
	if !reflect.DeepEqual(item, want) {
		t.Errorf("encodeItem(%+v) = %v, want %v", r, item, want)
	}
	got, err := decodeItem(item)
	r.Version = r.Nonce
	if err != nil || got != r {
		t.Errorf("decodeItem(encodeItem(r)) = %+v, %v; want %+v (Version = Nonce)", got, err, r)
	}
}

// TestDecodeItem: every item that is not a lease record is lease.ErrCorrupt,
// with a message that says what is wrong.
func TestDecodeItem(t *testing.T) {
	t.Parallel()
	S := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	N := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	valid := func(change map[string]types.AttributeValue, drop ...string) map[string]types.AttributeValue {
		return ValidItem("lease", "jobs", change, drop...)
	}
	rows := []struct {
		name string
		item map[string]types.AttributeValue
		want string
	}{
		{"NoMarker", map[string]types.AttributeValue{"lease": S("jobs"), "holder": S("cron"), "token": S("banana")},
			`lease: not a lease record: item has no "leasehold" attribute, so leasehold did not write it (attributes: holder, lease, token)`},
		{"MarkerString", valid(map[string]types.AttributeValue{"leasehold": S("1")}), `lease: not a lease record: attribute "leasehold" is S "1", want N "1"`},
		{"MarkerTwo", valid(map[string]types.AttributeValue{"leasehold": N("2")}), `lease: not a lease record: attribute "leasehold" is N "2", want N "1"`},
		{"TokenString", valid(map[string]types.AttributeValue{"token": S("banana")}), `lease: not a lease record: attribute "token" is S "banana", want N`},
		{"TokenFraction", valid(map[string]types.AttributeValue{"token": N("1.5")}), `lease: not a lease record: attribute "token" is N "1.5", want a whole number from 0 to 18446744073709551615`},
		{"TokenNegative", valid(map[string]types.AttributeValue{"token": N("-1")}), `lease: not a lease record: attribute "token" is N "-1", want a whole number from 0 to 18446744073709551615`},
		{"TokenZero", valid(map[string]types.AttributeValue{"token": N("0")}), `lease: not a lease record: token is 0`},
		{"NoNonce", valid(nil, "nonce"), `lease: not a lease record: attribute "nonce" is missing`},
		{"EmptyNonce", valid(map[string]types.AttributeValue{"nonce": S("")}), `lease: not a lease record: nonce is empty`},
		{"NoHolder", valid(nil, "holder"), `lease: not a lease record: attribute "holder" is missing`},
		{"HolderList", valid(map[string]types.AttributeValue{"holder": &types.AttributeValueMemberL{Value: []types.AttributeValue{S("a")}}}),
			`lease: not a lease record: attribute "holder" is L (1 values), want S`},
		{"HolderNotIdentity", valid(map[string]types.AttributeValue{"holder": S("")}), `lease: not a lease record: holder "" is not a valid identity`},
		{"ReleasedString", valid(map[string]types.AttributeValue{"released": S("false")}), `lease: not a lease record: attribute "released" is S "false", want BOOL`},
		{"TTLZero", valid(map[string]types.AttributeValue{"ttl_ms": N("0")}), `lease: not a lease record: TTL 0s is not positive`},
		{"TTLHuge", valid(map[string]types.AttributeValue{"ttl_ms": N("9223372036854775807")}),
			`lease: not a lease record: attribute "ttl_ms" is N "9223372036854775807", want a whole number of milliseconds`},
		{"TTLBinary", valid(map[string]types.AttributeValue{"ttl_ms": &types.AttributeValueMemberB{Value: []byte{1, 2}}}),
			`lease: not a lease record: attribute "ttl_ms" is B (2 bytes), want N`},
	}
	// Attributes a later version adds (rule 11: a fleet in a rolling
	// upgrade reads each other's records) are read past.
	later := valid(map[string]types.AttributeValue{"period": S("2026-11-23T10:00Z"), "a": &types.AttributeValueMemberNULL{Value: true}})
	if r, err := decodeItem(later); err != nil || r.Holder == "" {
		t.Errorf("decodeItem of an item with a later version's attributes: %+v, %v; want the record", r, err)
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			r, err := decodeItem(row.item)
			if !errors.Is(err, lease.ErrCorrupt) || err.Error() != row.want {
				t.Errorf("decodeItem: %+v, %v; want the error %q", r, err, row.want)
			}
		})
	}
}
