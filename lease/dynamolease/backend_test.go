package dynamolease_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// Timing of the backend-specific tests.
const (
	testTTL         = 2 * time.Second
	testCallTimeout = 500 * time.Millisecond
)

// options are a contender's lease options on the target, with the
// CallTimeout its server needs.
func (tg *target) options(id string) lease.Options {
	return lease.Options{Identity: id, TTL: testTTL, CallTimeout: tg.CallTimeout}
}

// show renders an item for logs and messages: attributes sorted by name.
func show(item map[string]types.AttributeValue) string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(item)) {
		if i > 0 {
			b.WriteString(", ")
		}
		switch v := item[name].(type) {
		case *types.AttributeValueMemberS:
			fmt.Fprintf(&b, "%s: S %q", name, v.Value)
		case *types.AttributeValueMemberN:
			fmt.Fprintf(&b, "%s: N %s", name, v.Value)
		case *types.AttributeValueMemberBOOL:
			fmt.Fprintf(&b, "%s: BOOL %t", name, v.Value)
		default:
			fmt.Fprintf(&b, "%s: %T", name, v)
		}
	}
	return "{" + b.String() + "}"
}

// TestStoredItem reads the lease's item raw: the attributes and types the
// package doc promises, and nothing else.
func TestStoredItem(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		name := storetest.UniqueName("dynamodb-stored-item")
		l := tg.Open(t, c, name, tg.options("worker-1"))
		term, err := l.Acquire(t.Context())
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		item := tg.Get(t, c, name)
		t.Logf("stored in table %s: %s", tg.Table, show(item))
		want := map[string]types.AttributeValue{
			"lease": s(name), "leasehold": n("1"), "holder": s("worker-1"), "token": n("1"), "ttl_ms": n("2000"),
			"released": &types.AttributeValueMemberBOOL{Value: false}, "nonce": s(term.Version),
		}
		if !reflect.DeepEqual(item, want) || len(term.Version) != 16+len(";renew=750") || !strings.HasSuffix(term.Version, ";renew=750") {
			t.Errorf("stored item %s, want %s, its nonce (16 hex digits and the renew interval) the term's Version", show(item), show(want))
		}

		renewed, err := l.Renew(t.Context(), term)
		if err != nil {
			t.Fatalf("Renew: %v", err)
		}
		if err := l.Release(t.Context(), renewed); err != nil {
			t.Fatalf("Release: %v", err)
		}
		item = tg.Get(t, c, name)
		t.Logf("after Renew and Release: %s", show(item))
		nonce, _ := item["nonce"].(*types.AttributeValueMemberS)
		released, _ := item["released"].(*types.AttributeValueMemberBOOL)
		if released == nil || !released.Value || !reflect.DeepEqual(item["token"], n("1")) || nonce == nil || nonce.Value == term.Version || nonce.Value == renewed.Version {
			t.Errorf("after Release the item is %s, want released true, token 1 and a nonce of its own", show(item))
		}
	})
}

// TestForeignItemNotTakenOver: an item at the key that leasehold did not
// write is lease.ErrCorrupt, not retryable, naming the item, however long
// it stays; it is never overwritten.
func TestForeignItemNotTakenOver(t *testing.T) {
	valid := func(name string, change map[string]types.AttributeValue, drop ...string) map[string]types.AttributeValue {
		return dynamolease.ValidItem(dynamolease.DefaultKeyAttribute, name, change, drop...)
	}
	rows := []struct {
		name    string
		item    func(name string) map[string]types.AttributeValue
		mention string
	}{
		{"ForeignLock", func(name string) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{"lease": s(name), "holder": s("another-tool"), "token": s("banana")}
		}, `item has no "leasehold" attribute`},
		{"TokenNotNumber", func(name string) map[string]types.AttributeValue {
			return valid(name, map[string]types.AttributeValue{"token": s("banana")})
		}, `attribute "token" is S "banana", want N`},
		{"NoNonce", func(name string) map[string]types.AttributeValue { return valid(name, nil, "nonce") }, `attribute "nonce" is missing`},
		{"OtherFormat", func(name string) map[string]types.AttributeValue {
			return valid(name, map[string]types.AttributeValue{"leasehold": n("2")})
		}, `attribute "leasehold" is N "2", want N "1"`},
		{"TokenZero", func(name string) map[string]types.AttributeValue {
			return valid(name, map[string]types.AttributeValue{"token": n("0")})
		}, "token is 0"},
	}
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				t.Parallel()
				name := storetest.UniqueName("dynamodb-foreign")
				item := row.item(name)
				if err := tg.Put(t.Context(), c, item); err != nil {
					t.Fatalf("PutItem: %v", err)
				}
				l := tg.Open(t, c, name, tg.options("worker-1"))
				for i := range 2 {
					_, err := l.Acquire(t.Context())
					if !errors.Is(err, lease.ErrCorrupt) || lease.Retryable(err) {
						t.Fatalf("Acquire %d of %s: %v, want lease.ErrCorrupt, not retryable", i+1, show(item), err)
					}
					if want := "dynamodb://" + tg.Table + "/" + name; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), row.mention) {
						t.Errorf("error %q does not name the item %s and say %q", err, want, row.mention)
					}
					if i == 0 {
						t.Logf("error: %v", err)
						time.Sleep(testTTL + 200*time.Millisecond)
					}
				}
				if after := tg.Get(t, c, name); !reflect.DeepEqual(after, item) {
					t.Errorf("the foreign item is now %s, want it untouched: %s", show(after), show(item))
				}
			})
		}
	})
}

// TestMissingTable: Open describes the table, and reports a missing one as
// lease.ErrNotFound naming it, not retryable.
func TestMissingTable(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		missing := storetest.UniqueName("leasehold-missing")
		_, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: missing, Name: "jobs", Client: tg.NewClient(nil)}, tg.options("worker-1"))
		awstest.CheckError(t, "Open of a lease in a missing table", err, lease.ErrNotFound, `table "`+missing+`" does not exist`, "ResourceNotFoundException")
	})
}

// TestKeySchema: Open refuses a table whose key schema is not one HASH key
// of type S named KeyAttribute, saying what it found and what it wants,
// and accepts a table keyed by another name when KeyAttribute names it.
func TestKeySchema(t *testing.T) {
	hash := func(name string) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: types.KeyTypeHash}
	}
	rangeKey := func(name string) types.KeySchemaElement {
		return types.KeySchemaElement{AttributeName: aws.String(name), KeyType: types.KeyTypeRange}
	}
	const S, N = types.ScalarAttributeTypeS, types.ScalarAttributeTypeN
	rows := []struct {
		name    string
		keys    []types.KeySchemaElement
		attrs   map[string]types.ScalarAttributeType
		keyAttr string // Options.KeyAttribute
		mention string // "": Open must succeed
	}{
		{"OtherKeyName", []types.KeySchemaElement{hash("id")}, map[string]types.ScalarAttributeType{"id": S}, "",
			`has the key schema [HASH "id" of type S]; a lease table needs exactly one key, HASH "lease" of type S`},
		{"NumberKey", []types.KeySchemaElement{hash("lease")}, map[string]types.ScalarAttributeType{"lease": N}, "",
			`has the key schema [HASH "lease" of type N]`},
		{"SortKey", []types.KeySchemaElement{hash("lease"), rangeKey("sk")}, map[string]types.ScalarAttributeType{"lease": S, "sk": S}, "",
			`has the key schema [HASH "lease" of type S, RANGE "sk" of type S]`},
		{"KeyAttributeNamesIt", []types.KeySchemaElement{hash("id")}, map[string]types.ScalarAttributeType{"id": S}, "id", ""},
	}
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				t.Parallel()
				table := tg.CreateTable(t, c, "leasehold-schema", row.keys, row.attrs)
				opts := dynamolease.Options{Table: table, Name: "jobs", KeyAttribute: row.keyAttr, Client: c}
				l, err := dynamolease.Open(t.Context(), opts, tg.options("worker-1"))
				if row.mention == "" {
					if err != nil {
						t.Fatalf("Open with KeyAttribute %q: %v, want a lease", row.keyAttr, err)
					}
					if _, err := l.Acquire(t.Context()); err != nil {
						t.Fatalf("Acquire: %v", err)
					}
					out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"id": s("jobs")}, ConsistentRead: aws.Bool(true)})
					if err != nil || out.Item["holder"] == nil {
						t.Errorf("GetItem id=jobs: %v, %s, want the lease's item", err, show(out.Item))
					}
					return
				}
				awstest.CheckError(t, "Open on a table with another key schema", err, lease.ErrNotFound, row.mention, "")
			})
		}
	})
}

// TestUnreachableEndpoint: a closed port fails at once, a server that never
// answers within CallTimeout; both are lease.ErrUnavailable, and
// retryable. Open describes the table, one request bounded by CallTimeout.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	storetest.Unreachable(t, testCallTimeout, func(t *testing.T, ctx context.Context, endpoint string) error {
		opts := dynamolease.Options{Table: "leases", Name: "jobs", Client: dynamoemu.StaticClient(endpoint, "test")(nil)}
		_, err := dynamolease.Open(ctx, opts, lease.Options{Identity: "worker-1", TTL: testTTL, CallTimeout: testCallTimeout})
		return err
	})
}
