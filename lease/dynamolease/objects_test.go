package dynamolease_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
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
	"github.com/leasehold/leasehold/shard"
)

var _ shard.Store = (*dynamolease.Objects)(nil)

// The tests of Objects check the promises of shard.Store on dynalite and
// moto, one by one. When the shard conformance suite exists, it replaces
// them.

// groupKey is the key schema of a shard group's table, with the default
// attributes.
var groupKey = []types.KeySchemaElement{
	{AttributeName: aws.String(dynamolease.DefaultGroupAttribute), KeyType: types.KeyTypeHash},
	{AttributeName: aws.String(dynamolease.DefaultObjectKeyAttribute), KeyType: types.KeyTypeRange},
}

// groupTable creates a shard group's table on the target.
func (tg *target) groupTable(t *testing.T) string {
	return tg.createTable(t, tg.newClient(nil), "leasehold-shards", groupKey, map[string]types.ScalarAttributeType{
		dynamolease.DefaultGroupAttribute: types.ScalarAttributeTypeS, dynamolease.DefaultObjectKeyAttribute: types.ScalarAttributeTypeS,
	})
}

// objects opens the store of group g in table through c (a new client of
// the target if nil).
func (tg *target) objects(t *testing.T, table, g string, c *ddb.Client) *dynamolease.Objects {
	t.Helper()
	if c == nil {
		c = tg.newClient(nil)
	}
	o, err := dynamolease.NewObjects(t.Context(), dynamolease.ObjectsOptions{Table: table, Group: g, Client: c, CallTimeout: tg.callTimeout})
	if err != nil {
		t.Fatalf("%s: NewObjects: %v", tg.name, err)
	}
	return o
}

func TestNewObjectsChecks(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		for _, tc := range []struct {
			opts dynamolease.ObjectsOptions
			err  error
			want string
		}{
			{dynamolease.ObjectsOptions{Table: tg.table, Group: "g#1", Client: c}, lease.ErrInvalid, "Group"},
			{dynamolease.ObjectsOptions{Table: tg.table, Group: "g", KeyAttribute: "nonce", Client: c}, lease.ErrInvalid, "KeyAttribute"},
			{dynamolease.ObjectsOptions{Table: tg.table, Group: "g", KeyAttribute: "group", Client: c}, lease.ErrInvalid, "KeyAttribute"},
			{dynamolease.ObjectsOptions{Table: tg.table, Group: "g", GroupAttribute: "annotations", Client: c}, lease.ErrInvalid, "GroupAttribute"},
			// The lease table has one key: a group needs two.
			{dynamolease.ObjectsOptions{Table: tg.table, Group: "g", Client: c}, lease.ErrNotFound, `RANGE "key"`},
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

// TestObjectsPut: Put creates only an absent key, replaces only the
// stored version, returns a new version when the bytes change, and keeps
// objects up to 1 MiB, in parts, and removes the parts it replaced.
func TestObjectsPut(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		o := tg.objects(t, table, "g", nil)
		ctx := t.Context()
		v1, err := o.Put(ctx, "g/a", []byte("one"), "")
		if err != nil {
			t.Fatalf("Put(create): %v", err)
		}
		if _, err := o.Put(ctx, "g/a", []byte("again"), ""); !errors.Is(err, driver.ErrConflict) {
			t.Fatalf("Put(create) of an existing key: %v; want driver.ErrConflict", err)
		}
		v2, err := o.Put(ctx, "g/a", []byte("two"), v1)
		if err != nil || v2 == v1 {
			t.Fatalf("Put(replace %s): %q, %v; want a new version", v1, v2, err)
		}
		if _, err := o.Put(ctx, "g/a", []byte("three"), v1); !errors.Is(err, driver.ErrConflict) {
			t.Fatalf("Put(replace) of a stale version: %v; want driver.ErrConflict", err)
		}
		if _, err := o.Put(ctx, "g/absent", []byte("x"), v2); !errors.Is(err, driver.ErrConflict) {
			t.Fatalf("Put(replace) of an absent key: %v; want driver.ErrConflict", err)
		}
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
			if _, err := o.Put(ctx, "g/big", []byte("stale"), prev); prev != "" && !errors.Is(err, driver.ErrConflict) {
				t.Fatalf("Put of a stale version over %d bytes: %v; want driver.ErrConflict", size, err)
			}
			prev = v
		}
		// Only the parts of the stored version are left: none, for the last
		// object is stored in its item.
		out, err := tg.newClient(nil).Scan(ctx, &ddb.ScanInput{TableName: &table})
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

// TestObjectsGet: Get returns the bytes and version, the version alone
// when it is known, and lease.ErrNoRecord for an absent key.
func TestObjectsGet(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		o := tg.objects(t, tg.groupTable(t), "g", nil)
		ctx := t.Context()
		if _, _, err := o.Get(ctx, "g/a", ""); !errors.Is(err, lease.ErrNoRecord) {
			t.Fatalf("Get of an absent key: %v; want lease.ErrNoRecord", err)
		}
		for _, size := range []int{3, 500_000} {
			one, two := bytes.Repeat([]byte{1}, size), bytes.Repeat([]byte{2}, size)
			key := fmt.Sprintf("g/%d", size)
			v1, err := o.Put(ctx, key, one, "")
			if err != nil {
				t.Fatal(err)
			}
			data, v, err := o.Get(ctx, key, "")
			if err != nil || v != v1 || !bytes.Equal(data, one) {
				t.Fatalf("Get: %d bytes, %q, %v; want %d at %q", len(data), v, err, size, v1)
			}
			data, v, err = o.Get(ctx, key, v1)
			if err != nil || v != v1 || data != nil {
				t.Fatalf("Get known %q: %d bytes, %q, %v; want the version alone", v1, len(data), v, err)
			}
			v2, err := o.Put(ctx, key, two, v1)
			if err != nil {
				t.Fatal(err)
			}
			data, v, err = o.Get(ctx, key, v1)
			if err != nil || v != v2 || !bytes.Equal(data, two) {
				t.Fatalf("Get known %q after a write: %d bytes, %q, %v; want the new bytes at %q", v1, len(data), v, err, v2)
			}
		}
	})
}

// TestObjectsList: List shows every key under the prefix, leases and
// objects, at their versions, over more than one page, and nothing of
// another group or of a large object's parts.
func TestObjectsList(t *testing.T) {
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		o := tg.objects(t, table, "g", nil)
		other := tg.objects(t, table, "g2", nil)
		ctx := t.Context()
		want := map[string]string{}
		pad := bytes.Repeat([]byte{9}, 3<<10) // 400 of them fill more than one 1 MB page
		for i := range 400 {
			key := fmt.Sprintf("g/acks/w%03d", i)
			v, err := o.Put(ctx, key, pad, "")
			if err != nil {
				t.Fatal(err)
			}
			want[key] = v
		}
		v, err := o.Put(ctx, "g/assignment", bytes.Repeat([]byte{1}, 800_000), "")
		if err != nil {
			t.Fatal(err)
		}
		want["g/assignment"] = v
		l, err := o.Lease("g/members/w", lease.Options{Identity: "w", CallTimeout: tg.callTimeout})
		if err != nil {
			t.Fatal(err)
		}
		term, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Put(ctx, "g2/acks/w", []byte("x"), ""); err != nil {
			t.Fatal(err)
		}
		got, err := o.List(ctx, "g/")
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if got["g/members/w"] != term.Version {
			t.Errorf("List: the lease at %q; want its term's version %q", got["g/members/w"], term.Version)
		}
		delete(got, "g/members/w")
		if len(got) != len(want) {
			t.Errorf("List: %d keys; want %d", len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("List: %s at %q; want %q", k, got[k], v)
			}
		}
		renewed, err := l.Renew(ctx, term)
		if err != nil {
			t.Fatal(err)
		}
		got, err = o.List(ctx, "g/members/")
		if err != nil || len(got) != 1 || got["g/members/w"] != renewed.Version || renewed.Version == term.Version {
			t.Fatalf("List of g/members/ after a renewal: %v, %v; want the lease alone at %q", got, err, renewed.Version)
		}
	})
}

// cutClient fails every request while on is set, as a partition would.
type cutClient struct {
	on atomic.Bool
}

func (c *cutClient) Do(r *http.Request) (*http.Response, error) {
	if c.on.Load() {
		return nil, errors.New("cut off")
	}
	return http.DefaultClient.Do(r)
}

// TestShardsOnDynamoDB runs a group in real time: two workers share four
// shards, then one is cut off (as kill -9 would leave it), and the other
// runs all four once the assigner has judged the cut one's liveness
// expired.
func TestShardsOnDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("real time: about 30s")
	}
	targets.Run(t, canCreateTables, func(t *testing.T, tg *target) {
		table := tg.groupTable(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		const ttl = 3 * time.Second
		start := func(id string, c *cutClient) *shard.Worker {
			w, err := shard.New(shard.Config{Store: tg.objects(t, table, "g", tg.newClient(c)), Group: "g", Shards: 4, Identity: id,
				TTL: ttl, CallTimeout: tg.callTimeout,
				Run: func(ctx context.Context, s shard.Shard) error { <-ctx.Done(); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				if err := w.Run(ctx); err != nil {
					t.Errorf("Run(%s): %v", id, err)
				}
			})
			return w
		}
		waitFor := func(what string, d time.Duration, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("not within %v: %s", d, what)
				}
			}
		}
		a := start("a", &cutClient{})
		waitFor("a runs all four shards", 5*ttl, func() bool { return len(a.Owned()) == 4 })
		bCut := &cutClient{}
		b := start("b", bCut)
		waitFor("a and b run two shards each", 8*ttl, func() bool { return len(a.Owned()) == 2 && len(b.Owned()) == 2 })
		bCut.on.Store(true)
		waitFor("a runs all four shards again", 6*ttl, func() bool { return len(a.Owned()) == 4 })
		if got := b.Owned(); len(got) != 0 {
			t.Errorf("b, cut off, still runs %v", got)
		}
		cancel()
	})
}

// TestObjectsCallsAreGranted: a group's calls (a lease's life, its
// store's check included, and objects small and large written, replaced,
// read and listed) are exactly ObjectsGrant's actions, and touch only the
// partitions a dynamodb:LeadingKeys condition must list: GROUP,
// GROUP#parts and GROUP.leasehold-probe.
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
			return "dynamodb:" + awstest.ByOperation(r)
		})
		o := tg.objects(t, table, "g", tg.newClient(calls))
		ctx := t.Context()
		l, err := o.Lease("g/members/w", lease.Options{Identity: "w", CallTimeout: tg.callTimeout})
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
		got := slices.Sorted(maps.Keys(calls.Take()))
		if !slices.Equal(got, dynamolease.ObjectsGrant.Actions) {
			t.Errorf("the group's calls: %v; ObjectsGrant grants %v", got, dynamolease.ObjectsGrant.Actions)
		}
		want := []string{"g", "g#parts", "g" + driver.ProbeSuffix}
		if got := slices.Sorted(maps.Keys(partitions)); !slices.Equal(got, want) {
			t.Errorf("the group's calls touched the partitions %v; want %v", got, want)
		}
	})
}
