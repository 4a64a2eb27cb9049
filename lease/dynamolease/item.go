package dynamolease

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// The attributes of a lease item besides its key. Each holds the lease
// Record field of the same name (see the package doc).
const (
	attrFormat   = "leasehold" // N: driver.FormatVersion, the mark of a leasehold item
	attrHolder   = "holder"    // S
	attrToken    = "token"     // N
	attrTTL      = "ttl_ms"    // N: milliseconds
	attrReleased = "released"  // BOOL
	attrNonce    = "nonce"     // S: also the record's version
	// attrAnnotations is M, a map of S (lease.Annotations), absent when
	// there are none. It is not among recordAttributes: items of versions
	// before annotations have none.
	attrAnnotations = "annotations"
)

// legacyReplicationPrefix begins the attributes that a legacy
// (2017.11.29) global table adds to every item it replicates.
const legacyReplicationPrefix = "aws:rep:"

// recordAttributes are the item's attributes besides its key, in the order
// they are checked.
var recordAttributes = []string{attrFormat, attrHolder, attrToken, attrTTL, attrReleased, attrNonce}

// encodeItem returns r's item at the key name.
func encodeItem(r lease.Record, keyAttr, name string) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		keyAttr:      &types.AttributeValueMemberS{Value: name},
		attrFormat:   &types.AttributeValueMemberN{Value: strconv.Itoa(driver.FormatVersion)},
		attrHolder:   &types.AttributeValueMemberS{Value: r.Holder},
		attrToken:    &types.AttributeValueMemberN{Value: strconv.FormatUint(r.Token, 10)},
		attrTTL:      &types.AttributeValueMemberN{Value: strconv.FormatInt(r.TTL.Milliseconds(), 10)},
		attrReleased: &types.AttributeValueMemberBOOL{Value: r.Released},
		attrNonce:    &types.AttributeValueMemberS{Value: driver.EncodeNonce(r)},
	}
	if r.Annotations.Len() > 0 {
		m := map[string]types.AttributeValue{}
		for k, v := range r.Annotations.All() {
			m[k] = &types.AttributeValueMemberS{Value: v}
		}
		item[attrAnnotations] = &types.AttributeValueMemberM{Value: m}
	}
	return item
}

// decodeItem parses an item written by encodeItem, checks it with
// driver.Check, and sets its Version to its stored nonce (schedule state
// included: see driver.EncodeNonce). Attributes it does not
// know are read past: those a later version of leasehold adds beside
// leasehold=1 (see driver.FormatVersion). An item carrying the attributes
// that legacy (2017.11.29) global tables add to every item they replicate
// (aws:rep:updatetime, aws:rep:updateregion, aws:rep:deleting) yields an
// error wrapping lease.ErrUnsafeStore, naming the attribute: such a table
// settles conflicting writes of two Regions last-writer-wins, so two
// contenders can both win. Anything else, among it an item
// of another format version, or with an attribute of the record missing,
// of another type or unparsable, yields an error wrapping
// lease.ErrCorrupt.
func decodeItem(item map[string]types.AttributeValue) (lease.Record, error) {
	for _, name := range names(item) {
		if strings.HasPrefix(name, legacyReplicationPrefix) {
			return lease.Record{}, fmt.Errorf("%w: the item carries %q, an attribute of a legacy (2017.11.29) global table, which replicates it between Regions and keeps the last writer's item: contenders in two Regions can both be elected; use a table with no replicas, or a multi-Region strongly consistent (MRSC) global table",
				lease.ErrUnsafeStore, name)
		}
	}
	format, ok := item[attrFormat]
	if !ok {
		return lease.Record{}, driver.Corruptf("item has no %q attribute, so leasehold did not write it (attributes: %s)", attrFormat, strings.Join(names(item), ", "))
	}
	if n, ok := format.(*types.AttributeValueMemberN); !ok || n.Value != strconv.Itoa(driver.FormatVersion) {
		return lease.Record{}, driver.Corruptf("attribute %q is %s, want N %q", attrFormat, describe(format), strconv.Itoa(driver.FormatVersion))
	}
	d := decoder{item: item}
	r := lease.Record{
		Holder:   d.str(attrHolder),
		Token:    d.uint(attrToken),
		TTL:      time.Duration(d.int(attrTTL)) * time.Millisecond,
		Released: d.bool(attrReleased),
	}
	nonce := d.str(attrNonce)
	ann, ok := d.annotations()
	if d.err != nil {
		return lease.Record{}, d.err
	}
	r.Version = nonce
	return r, driver.DecodeNonce(nonce, ann, ok, &r)
}

// annotations returns the item's annotations attribute, and whether it has
// one.
func (d *decoder) annotations() (lease.Annotations, bool) {
	if _, ok := d.item[attrAnnotations]; !ok {
		return lease.Annotations{}, false
	}
	v, ok := get[*types.AttributeValueMemberM](d, attrAnnotations, "M")
	if !ok {
		return lease.Annotations{}, false
	}
	m := make(map[string]string, len(v.Value))
	for k, av := range v.Value {
		s, ok := av.(*types.AttributeValueMemberS)
		if !ok {
			d.err = driver.Corruptf("attribute %q holds %q as %s, want S", attrAnnotations, k, describe(av))
			return lease.Annotations{}, false
		}
		m[k] = s.Value
	}
	return lease.NewAnnotations(m), true
}

// decoder reads attributes of an item and keeps the first error.
type decoder struct {
	item map[string]types.AttributeValue
	err  error
}

// get returns the attribute name if it has type T, else notes the error.
func get[T types.AttributeValue](d *decoder, name, typ string) (T, bool) {
	var zero T
	if d.err != nil {
		return zero, false
	}
	v, ok := d.item[name]
	if !ok {
		d.err = driver.Corruptf("attribute %q is missing", name)
		return zero, false
	}
	t, ok := v.(T)
	if !ok {
		d.err = driver.Corruptf("attribute %q is %s, want %s", name, describe(v), typ)
	}
	return t, ok
}

func (d *decoder) str(name string) string {
	v, ok := get[*types.AttributeValueMemberS](d, name, "S")
	if !ok {
		return ""
	}
	return v.Value
}

func (d *decoder) bool(name string) bool {
	v, ok := get[*types.AttributeValueMemberBOOL](d, name, "BOOL")
	return ok && v.Value
}

func (d *decoder) uint(name string) uint64 {
	v, ok := get[*types.AttributeValueMemberN](d, name, "N")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(v.Value, 10, 64)
	if err != nil {
		d.err = driver.Corruptf("attribute %q is N %q, want a whole number from 0 to %d", name, v.Value, uint64(1<<64-1))
	}
	return n
}

func (d *decoder) int(name string) int64 {
	v, ok := get[*types.AttributeValueMemberN](d, name, "N")
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil || n > math.MaxInt64/int64(time.Millisecond) || n < math.MinInt64/int64(time.Millisecond) {
		d.err = driver.Corruptf("attribute %q is N %q, want a whole number of milliseconds", name, v.Value)
	}
	return n
}

// names returns the item's attribute names, sorted.
func names(item map[string]types.AttributeValue) []string {
	ns := make([]string, 0, len(item))
	for n := range item {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// describe shows an attribute value's type and, briefly, its value: S
// "banana", N "7", BOOL true, NULL, B (16 bytes), L (3 values).
func describe(v types.AttributeValue) string {
	const max = 40
	short := func(s string) string {
		if len(s) > max {
			s = s[:max] + "..."
		}
		return strconv.Quote(s)
	}
	switch v := v.(type) {
	case nil:
		return "no value" // an attribute of JSON null, or {}: the SDK's deserializer gives nil
	case *types.AttributeValueMemberS:
		return "S " + short(v.Value)
	case *types.AttributeValueMemberN:
		return "N " + short(v.Value)
	case *types.AttributeValueMemberBOOL:
		return "BOOL " + strconv.FormatBool(v.Value)
	}
	// The other types (NULL, B, SS, NS, BS, M, L) by name, with their size.
	typ := strings.TrimPrefix(fmt.Sprintf("%T", v), "*types.AttributeValueMember")
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return typ // a nil *AttributeValueMemberX, or an implementation of another shape
	}
	if val := rv.Elem().FieldByName("Value"); val.IsValid() && (val.Kind() == reflect.Slice || val.Kind() == reflect.Map) {
		unit := "values"
		if typ == "B" {
			unit = "bytes"
		}
		return fmt.Sprintf("%s (%d %s)", typ, val.Len(), unit)
	}
	return typ
}
