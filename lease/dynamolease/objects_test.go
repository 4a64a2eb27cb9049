package dynamolease_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/shard"
	"github.com/leasehold/leasehold/shard/shardtest"
)

var _ shard.Store = (*dynamolease.Objects)(nil)

// shardPageSize is the page size of the suite's listings (a Query's
// Limit): 7 items over 3 pages, instead of a megabyte of them.
const shardPageSize = 3

// groupKey is the key schema of a shard group's table, with the default
// attributes.
var groupKey = []types.KeySchemaElement{
	{AttributeName: aws.String(dynamolease.DefaultGroupAttribute), KeyType: types.KeyTypeHash},
	{AttributeName: aws.String(dynamolease.DefaultObjectKeyAttribute), KeyType: types.KeyTypeRange},
}

// groupTable creates a shard group's table on the target.
func (tg *target) groupTable(t *testing.T) string {
	return tg.CreateTable(t, tg.NewClient(nil), "leasehold-shards", groupKey, map[string]types.ScalarAttributeType{
		dynamolease.DefaultGroupAttribute: types.ScalarAttributeTypeS, dynamolease.DefaultObjectKeyAttribute: types.ScalarAttributeTypeS,
	})
}

// objects opens the store of group g in table through c (a new client of
// the target if nil).
func (tg *target) objects(t *testing.T, table, g string, c *ddb.Client) *dynamolease.Objects {
	t.Helper()
	return tg.objectsPaged(t, table, g, c, 0)
}

// objectsPaged is objects listing pageSize items a page.
func (tg *target) objectsPaged(t *testing.T, table, g string, c *ddb.Client, pageSize int) *dynamolease.Objects {
	t.Helper()
	if c == nil {
		c = tg.NewClient(nil)
	}
	o, err := dynamolease.NewObjects(t.Context(), dynamolease.ObjectsOptions{Table: table, Group: g, Client: c, CallTimeout: tg.CallTimeout, PageSize: pageSize})
	if err != nil {
		t.Fatalf("%s: NewObjects: %v", tg.Name, err)
	}
	return o
}

func TestNewObjectsChecks(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		for _, tc := range []struct {
			opts dynamolease.ObjectsOptions
			err  error
			want string
		}{
			{dynamolease.ObjectsOptions{Table: tg.Table, Group: "g#1", Client: c}, lease.ErrInvalid, "Group"},
			{dynamolease.ObjectsOptions{Table: tg.Table, Group: "g", KeyAttribute: "nonce", Client: c}, lease.ErrInvalid, "KeyAttribute"},
			{dynamolease.ObjectsOptions{Table: tg.Table, Group: "g", KeyAttribute: "group", Client: c}, lease.ErrInvalid, "KeyAttribute"},
			{dynamolease.ObjectsOptions{Table: tg.Table, Group: "g", GroupAttribute: "annotations", Client: c}, lease.ErrInvalid, "GroupAttribute"},
			// The lease table has one key: a group needs two.
			{dynamolease.ObjectsOptions{Table: tg.Table, Group: "g", Client: c}, lease.ErrNotFound, `RANGE "key"`},
		} {
			_, err := dynamolease.NewObjects(t.Context(), tc.opts)
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewObjects(%+v): %v; want %v naming %q", tc.opts, err, tc.err, tc.want)
			}
		}
		// And a lease table's Open refuses a group's table.
		_, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: tg.groupTable(t), Name: "x", Client: c}, lease.Options{Identity: "w"})
		if !errors.Is(err, lease.ErrNotFound) {
			t.Errorf("Open on a group's table: %v; want lease.ErrNotFound", err)
		}
	})
}

// TestShardConformance runs shardtest on each target, at the target's TTL
// (moto's is longer: one Python process serves every suite), with the
// assignment made unreadable as only DynamoDB can: 600 shards, an
// assignment over 3 KiB in parts, whose head item is put back after a later
// assignment deleted its parts (restoreHead).
func TestShardConformance(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		shardtest.Run(t, shardtest.Config{
			NewStore: func(t *testing.T) shardtest.Clients {
				o := tg.objectsPaged(t, table, "shardtest", nil, shardPageSize)
				return func(string) shard.Store { return o }
			},
			TTL:              cmp.Or(tg.TTL, testTTL),
			CallTimeout:      tg.CallTimeout,
			PageSize:         shardPageSize,
			Unreadable:       func(t *testing.T, key string) func() { return tg.restoreHead(t, table, "shardtest", key) },
			UnreadableShards: 600,
		})
	})
}

// restoreHead reads the head item of the object key of group g, which
// must be stored in parts, and returns a function that puts it back as it
// was, as a restore of the item would: after a later Put deleted its
// parts, a head that names parts that are gone.
func (tg *target) restoreHead(t *testing.T, table, g, key string) func() {
	t.Helper()
	c := tg.NewClient(nil)
	out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: &table, ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		dynamolease.DefaultGroupAttribute:     &types.AttributeValueMemberS{Value: g},
		dynamolease.DefaultObjectKeyAttribute: &types.AttributeValueMemberS{Value: strings.TrimPrefix(key, g+"/")},
	}})
	if err != nil || len(out.Item) == 0 {
		t.Fatalf("%s: GetItem of the head of %q: %v, %v", tg.Name, key, out, err)
	}
	if nonce, _ := out.Item["nonce"].(*types.AttributeValueMemberS); nonce == nil || !strings.Contains(nonce.Value, "/") {
		t.Fatalf("%s: the head of %q has the version %v: stored in its item, not in parts", tg.Name, key, out.Item["nonce"])
	}
	return func() {
		t.Helper()
		if _, err := c.PutItem(t.Context(), &ddb.PutItemInput{TableName: &table, Item: out.Item}); err != nil {
			t.Fatalf("%s: PutItem of the head of %q as it was: %v", tg.Name, key, err)
		}
	}
}

// TestObjectsRestoredHead: a head item put back after a later Put deleted
// its parts cannot be read, now or later: Get says lease.ErrCorrupt, not
// lease.ErrUnavailable (which a caller retries for ever), and a Put over
// its version replaces it.
func TestObjectsRestoredHead(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		o := tg.objects(t, table, "g", nil)
		ctx := t.Context()
		v1, err := o.Put(ctx, "g/assignment", bytes.Repeat([]byte{1}, 700_001), "")
		if err != nil {
			t.Fatal(err)
		}
		restore := tg.restoreHead(t, table, "g", "g/assignment")
		if _, err := o.Put(ctx, "g/assignment", bytes.Repeat([]byte{2}, 5000), v1); err != nil {
			t.Fatal(err)
		}
		restore()
		if list, err := o.List(ctx, "g/"); err != nil || list["g/assignment"] != v1 {
			t.Fatalf("List after the head was put back: %v, %v; want g/assignment at %q", list, err, v1)
		}
		_, _, err = o.Get(ctx, "g/assignment", "")
		storetest.CheckError(t, "Get of a head whose parts are gone", err, lease.ErrCorrupt, "names 3 parts, of which 0 are stored")
		if data, v, err := o.Get(ctx, "g/assignment", v1); err != nil || data != nil || v != v1 {
			t.Errorf("Get knowing the version put back: %d bytes at %q, %v; want the version alone", len(data), v, err)
		}
		third := bytes.Repeat([]byte{3}, 5000)
		v3, err := o.Put(ctx, "g/assignment", third, v1)
		if err != nil {
			t.Fatalf("Put over the head put back, at its version: %v", err)
		}
		if data, v, err := o.Get(ctx, "g/assignment", ""); err != nil || v != v3 || !bytes.Equal(data, third) {
			t.Fatalf("Get after the Put over it: %d bytes at %q, %v; want the Put's at %q", len(data), v, err, v3)
		}
	})
}

// TestObjectsParts: an object over 3 KiB goes in parts, which listings do
// not show; a Put that replaces it removes the parts it replaced, and one
// outside the group is refused.
func TestObjectsParts(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		o := tg.objects(t, table, "g", nil)
		ctx := t.Context()
		if _, err := o.Put(ctx, "other/a", []byte("x"), ""); !errors.Is(err, lease.ErrInvalid) {
			t.Fatalf("Put of a key outside the group: %v; want lease.ErrInvalid", err)
		}
		var prev string
		for i, size := range []int{1 << 20, 700_001, 5000, 3 << 10} {
			big := bytes.Repeat([]byte{byte(i + 1)}, size)
			v, err := o.Put(ctx, "g/big", big, prev)
			if err != nil {
				t.Fatalf("Put of %d bytes: %v", size, err)
			}
			got, gv, err := o.Get(ctx, "g/big", "")
			if err != nil || gv != v || !bytes.Equal(got, big) {
				t.Fatalf("Get of %d bytes: %d bytes, %q, %v; want them back at %q", size, len(got), gv, err, v)
			}
			if list, err := o.List(ctx, "g/"); err != nil || !maps.Equal(list, map[string]string{"g/big": v}) {
				t.Fatalf("List of the group holding %d bytes: %v, %v; want g/big alone, at %q", size, list, err, v)
			}
			prev = v
		}
		// Only the parts of the stored version are left: none, for the last
		// object is stored in its item.
		out, err := tg.NewClient(nil).Scan(ctx, &ddb.ScanInput{TableName: &table})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			if g := item[dynamolease.DefaultGroupAttribute].(*types.AttributeValueMemberS).Value; g != "g" {
				t.Errorf("an item is left in partition %q: %v", g, item[dynamolease.DefaultObjectKeyAttribute])
			}
		}
	})
}

// TestListPages: a listing reads PageSize items a Query: the suite's
// ListAcrossPages lists across pages.
func TestListPages(t *testing.T) {
	tg := targets.First(t)
	table := tg.groupTable(t)
	calls := storetest.NewCounter(nil, awstest.ByOperation)
	o := tg.objectsPaged(t, table, "g", tg.NewClient(calls), 2)
	for _, k := range []string{"g/acks/a", "g/acks/b", "g/acks/c", "g/acks/d", "g/acks/e"} {
		if _, err := o.Put(t.Context(), k, []byte(k), ""); err != nil {
			t.Fatal(err)
		}
	}
	calls.Take()
	if list, err := o.List(t.Context(), "g/"); err != nil || len(list) != 5 {
		t.Fatalf("List of 5 items: %v, %v", list, err)
	}
	if n := calls.Take()["Query"]; n < 3 {
		t.Errorf("a listing of 5 items, 2 a page, took %d Queries; want at least 3", n)
	}
}

// TestListSkipsForeignItem: one item in a group's partition that
// Objects did not write (another tool's, a person's note: no "nonce"
// attribute) is left out of the listing, as the other stores list such
// an object like any other, instead of failing every listing of the
// group, which would leave its assigner deciding nothing ever again.
func TestListSkipsForeignItem(t *testing.T) {
	tg := targets.First(t)
	table := tg.groupTable(t)
	c := tg.NewClient(nil)
	o := tg.objects(t, table, "g", c)
	version, err := o.Put(t.Context(), "g/acks/a", []byte("ack"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PutItem(t.Context(), &ddb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		dynamolease.DefaultGroupAttribute:     &types.AttributeValueMemberS{Value: "g"},
		dynamolease.DefaultObjectKeyAttribute: &types.AttributeValueMemberS{Value: "notes/owner"},
		"text":                                &types.AttributeValueMemberS{Value: "team-x"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := o.List(t.Context(), "g/")
	if want := map[string]string{"g/acks/a": version}; err != nil || !maps.Equal(list, want) {
		t.Errorf("List of group g with one foreign item beside its objects: %v, %v; want %v", list, err, want)
	}
}

// TestOpenStore: shard.OpenStore opens dynamodb://TABLE/GROUP URLs with
// the table's key attributes, and refuses what a group's URL cannot
// carry, naming it.
func TestOpenStore(t *testing.T) {
	tg := targets.First(t) // dynalite
	endpoint := url.QueryEscape(os.Getenv("LEASEHOLD_DYNALITE_ENDPOINT"))
	awstest.IsolateEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ctx := t.Context()
	open := func(t *testing.T, urlstr string) shard.Store {
		t.Helper()
		store, group, err := shard.OpenStore(ctx, urlstr, lease.Options{Identity: "w", CallTimeout: tg.CallTimeout})
		if _, ok := store.(*dynamolease.Objects); !ok || group != "groups/jobs" || err != nil {
			t.Fatalf("OpenStore(%q): %T, %q, %v; want *dynamolease.Objects and the group groups/jobs", urlstr, store, group, err)
		}
		if _, err := store.Put(ctx, group+"/acks/w", []byte("x"), ""); err != nil {
			t.Fatalf("Put through the store %q opened: %v", urlstr, err)
		}
		return store
	}
	t.Run("DefaultKeys", func(t *testing.T) {
		open(t, "dynamodb://"+tg.groupTable(t)+"/groups/jobs?region=us-east-1&endpoint="+endpoint)
	})
	t.Run("KeyAttributes", func(t *testing.T) {
		table := tg.CreateTable(t, tg.NewClient(nil), "leasehold-shards", []types.KeySchemaElement{
			{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("k"), KeyType: types.KeyTypeRange},
		}, map[string]types.ScalarAttributeType{"g": types.ScalarAttributeTypeS, "k": types.ScalarAttributeTypeS})
		open(t, "dynamodb://"+table+"/groups/jobs?region=us-east-1&group_attribute=g&key_attribute=k&endpoint="+endpoint)
		_, _, err := shard.OpenStore(ctx, "dynamodb://"+table+"/groups/jobs?region=us-east-1&endpoint="+endpoint, lease.Options{Identity: "w"})
		if !errors.Is(err, lease.ErrNotFound) || !strings.Contains(err.Error(), `HASH "g"`) {
			t.Errorf("OpenStore without the key attributes of a table keyed (g, k): %v; want lease.ErrNotFound naming its keys", err)
		}
	})
	for _, tc := range []struct{ name, url, want string }{
		{"UnknownParam", "dynamodb://shards/jobs?region=us-east-1&ttl=5s", "unknown query parameter(s) ttl (known: anonymous, dualstack, endpoint, fips, group_attribute, hostname_immutable, key_attribute, profile, region, role)"},
		{"NoGroup", "dynamodb://shards?region=us-east-1", "names no group; want dynamodb://TABLE/GROUP"},
		{"EmptyGroupAttribute", "dynamodb://shards/jobs?region=us-east-1&group_attribute=", `has an empty group_attribute; leave it out for the default "group"`},
		{"EmptyKeyAttribute", "dynamodb://shards/jobs?region=us-east-1&key_attribute=", `has an empty key_attribute; leave it out for the default "key"`},
		{"SameAttributes", "dynamodb://shards/jobs?region=us-east-1&group_attribute=k&key_attribute=k", `KeyAttribute ("k") must differ from GroupAttribute`},
		{"HashInGroup", "dynamodb://shards/a%23b?region=us-east-1", `Group ("a#b") must be a non-empty name without '#'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := shard.OpenStore(ctx, tc.url, lease.Options{Identity: "w"}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenStore(%q): %v; want lease.ErrInvalid saying %q", tc.url, err, tc.want)
			}
		})
	}
	if _, err := dynamolease.NewObjects(ctx, dynamolease.ObjectsOptions{Table: "shards", Group: "g", PageSize: -1}); !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "PageSize (-1)") {
		t.Errorf("NewObjects with PageSize -1: %v; want lease.ErrInvalid naming PageSize (-1)", err)
	}
}

// cutClient fails every request while on is set, as a network partition
// would.
type cutClient struct{ on *atomic.Bool }

func (c cutClient) Do(r *http.Request) (*http.Response, error) {
	if c.on.Load() {
		return nil, errors.New("cut off")
	}
	return http.DefaultClient.Do(r)
}

// TestShardsOnDynamoDB runs shardtest.CutOff on each target.
func TestShardsOnDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: about 30s")
	}
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		const ttl = 3 * time.Second
		shardtest.CutOff(t, func(_ string, on *atomic.Bool) shard.Store {
			return tg.objects(t, table, "g", tg.NewClient(cutClient{on}))
		}, shard.Config{TTL: ttl, CallTimeout: tg.CallTimeout}, 8*ttl, 6*ttl)
	})
}

// TestObjectsCallsAreGranted: a group's calls (a lease's life, its
// store's check included, and objects small and large written, replaced,
// read and listed) are exactly what Description grants shard groups
// (ObjectsGrant, on the group's table), and touch only the partitions a
// dynamodb:LeadingKeys condition must list: GROUP, GROUP#parts and
// GROUP.leasehold-probe.
func TestObjectsCallsAreGranted(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		var mu sync.Mutex
		partitions := map[string]bool{}
		calls := storetest.NewCounter(nil, func(r *http.Request) string {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct {
				Key, Item, ExpressionAttributeValues map[string]struct{ S string }
			}
			_ = json.Unmarshal(body, &in)
			mu.Lock()
			defer mu.Unlock()
			for _, p := range []string{in.Key[dynamolease.DefaultGroupAttribute].S, in.Item[dynamolease.DefaultGroupAttribute].S, in.ExpressionAttributeValues[":pk"].S} {
				if p != "" {
					partitions[p] = true
				}
			}
			return "dynamodb:" + awstest.ByOperation(r) + " on arn:aws:dynamodb:REGION:ACCOUNT:table/GROUPTABLE"
		})
		o := tg.objects(t, table, "g", tg.NewClient(calls))
		ctx := t.Context()
		l, err := o.Lease("g/members/w", lease.Options{Identity: "w", CallTimeout: tg.CallTimeout})
		if err != nil {
			t.Fatal(err)
		}
		term, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if term, err = l.Renew(ctx, term); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, term); err != nil {
			t.Fatal(err)
		}
		v, err := o.Put(ctx, "g/assignment", bytes.Repeat([]byte{1}, 400_000), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Put(ctx, "g/assignment", []byte("small"), v); err != nil {
			t.Fatal(err)
		}
		if _, _, err := o.Get(ctx, "g/assignment", v); err != nil {
			t.Fatal(err)
		}
		if _, err := o.List(ctx, "g/"); err != nil {
			t.Fatal(err)
		}
		leasetest.CheckGrants(t, dynamolease.Description, slices.Sorted(maps.Keys(calls.Take())), func(g driver.Grant) bool { return g.Group })
		want := []string{"g", "g#parts", "g" + driver.ProbeSuffix}
		if got := slices.Sorted(maps.Keys(partitions)); !slices.Equal(got, want) {
			t.Errorf("the group's calls touched the partitions %v; want %v", got, want)
		}
	})
}

// TestObjectsPutOverAForeignHead: a head item whose version names more
// parts than Objects writes (1,000: not written by Objects, or garbage) is
// refused as lease.ErrCorrupt, and a Put over it deletes no part for it,
// instead of sending a DeleteItem for each part it names.
func TestObjectsPutOverAForeignHead(t *testing.T) {
	tg := targets.First(t)
	table := tg.groupTable(t)
	calls := storetest.NewCounter(nil, awstest.ByOperation)
	o := tg.objects(t, table, "g", tg.NewClient(calls))
	ctx := t.Context()
	if _, err := tg.NewClient(nil).PutItem(ctx, &ddb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		dynamolease.DefaultGroupAttribute:     &types.AttributeValueMemberS{Value: "g"},
		dynamolease.DefaultObjectKeyAttribute: &types.AttributeValueMemberS{Value: "assignment"},
		"nonce":                               &types.AttributeValueMemberS{Value: "f0f0f0f0/1000"},
	}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := o.Get(ctx, "g/assignment", "")
	storetest.CheckError(t, "Get of a head naming 1,000 parts", err, lease.ErrCorrupt, `version "f0f0f0f0/1000" names parts that no object has`)
	calls.Take()
	if _, err := o.Put(ctx, "g/assignment", []byte("x"), "f0f0f0f0/1000"); err != nil {
		t.Fatalf("Put over the head, at its version: %v", err)
	}
	if n := calls.Take()["DeleteItem"]; n != 0 {
		t.Errorf("Put over a head naming 1,000 parts sent %d DeleteItems; want none", n)
	}
}

// TestObjectsPutRefusesMoreThanAnObjectHolds: an object of more than 64
// parts (22 MB) is refused, naming the field, before any request, so that
// every head Objects writes names parts that Get reads.
func TestObjectsPutRefusesMoreThanAnObjectHolds(t *testing.T) {
	tg := targets.First(t)
	calls := storetest.NewCounter(nil, awstest.ByOperation)
	o := tg.objects(t, tg.groupTable(t), "g", tg.NewClient(calls))
	calls.Take()
	_, err := o.Put(t.Context(), "g/assignment", make([]byte, 64*350_000+1), "")
	if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "data (22400001 bytes) is more than an object holds: 64 parts of 350000 bytes") {
		t.Errorf("Put of 22,400,001 bytes: %v; want lease.ErrInvalid naming the size and the bound", err)
	}
	if n := len(calls.Take()); n != 0 {
		t.Errorf("Put of 22,400,001 bytes sent requests (%d operations); want none", n)
	}
}
