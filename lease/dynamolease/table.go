package dynamolease

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// tableRecheck is how long a table's check holds: a lease's reads (every
// acquisition starts with one) describe the table again once it is older,
// so that a replica added to a table in use is seen within it.
var tableRecheck = time.Minute

// tableCheck is the outcome of checking one table as clients reach it.
type tableCheck struct {
	mu sync.Mutex
	ok time.Time // when the last check passed
}

// checkedTables holds a *tableCheck per table, by storeID.
var checkedTables sync.Map

// checkTable checks, with one DescribeTable bounded by the lease's
// CallTimeout (on Open; a read's is bounded with the read), that the table exists, its key schema is one HASH key of
// type S named d.keyAttr, and it is not replicated with eventual
// consistency. A success holds for tableRecheck for every lease of the
// process on that table, so that each is described once a minute however
// many leases are opened and read; a failure is not kept, so the next
// Open or read tries again. With again set (a read), it checks only the
// table whose check this conn's Open passed (d.checked), found by that
// Open's key: the key holds the client's access key, which credentials
// that rotate (a task role's) change, and a read that looked its table up
// again after a rotation found nothing to check, and never described it
// again (red team 18). A conn whose Open's check failed has no lease.
func (d *conn) checkTable(ctx context.Context, again bool) (err error) {
	c := d.checked
	if again && c == nil {
		return nil
	}
	if !again {
		v, _ := checkedTables.LoadOrStore(d.storeID(ctx)+" "+d.keyAttr+" "+d.sortAttr, &tableCheck{})
		c = v.(*tableCheck)
		defer func() {
			if err == nil {
				d.checked = c
			}
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok.IsZero() && time.Since(c.ok) < tableRecheck {
		return nil
	}
	var out *ddb.DescribeTableOutput
	describe := func(ctx context.Context) (err error) {
		out, err = d.client.DescribeTable(ctx, &ddb.DescribeTableInput{TableName: &d.table}, callOptions)
		if err != nil {
			return d.classify(ctx, opDescribe, err)
		}
		return nil
	}
	if again { // inside a read, which the engine bounds by CallTimeout
		err = describe(ctx)
	} else {
		err = driver.Call(ctx, d.callTimeout, describe)
	}
	if err != nil {
		return err
	}
	if err := d.checkDescription(out.Table); err != nil {
		return err
	}
	c.ok = time.Now()
	return nil
}

// checkDescription checks the table's status, key schema and replication.
func (d *conn) checkDescription(t *types.TableDescription) error {
	what := fmt.Sprintf("dynamodb: DescribeTable %s", d.url())
	if t == nil {
		return fmt.Errorf("%w: %s: the answer describes no table", lease.ErrUnavailable, what)
	}
	switch t.TableStatus {
	case "", types.TableStatusActive, types.TableStatusUpdating:
	case types.TableStatusCreating:
		return fmt.Errorf("%w: %s: table %q is still being created; try again", lease.ErrUnavailable, what, d.table)
	default:
		return fmt.Errorf("%w: %s: table %q is %s, not ACTIVE", lease.ErrNotFound, what, d.table, t.TableStatus)
	}
	typeOf := map[string]types.ScalarAttributeType{}
	for _, a := range t.AttributeDefinitions {
		if a.AttributeName != nil {
			typeOf[*a.AttributeName] = a.AttributeType
		}
	}
	want := map[types.KeyType]string{types.KeyTypeHash: d.keyAttr}
	if d.sortAttr != "" {
		want[types.KeyTypeRange] = d.sortAttr
	}
	var found []string
	ok := len(t.KeySchema) == len(want)
	for _, k := range t.KeySchema {
		name := ""
		if k.AttributeName != nil {
			name = *k.AttributeName
		}
		found = append(found, fmt.Sprintf("%s %q of type %s", k.KeyType, name, typeOf[name]))
		ok = ok && want[k.KeyType] == name && typeOf[name] == "S"
	}
	switch {
	case !ok && d.sortAttr != "":
		return fmt.Errorf(`%w: %s: table %q has the key schema [%s]; a shard group's table needs %s: create the table with those keys, or name its keys in ObjectsOptions`,
			lease.ErrNotFound, what, d.table, strings.Join(found, ", "), d.schema())
	case !ok:
		return fmt.Errorf(`%w: %s: table %q has the key schema [%s]; a lease table needs %s: create the table with that key, or set KeyAttribute (?key_attribute=) to its HASH key's name`,
			lease.ErrNotFound, what, d.table, strings.Join(found, ", "), d.schema())
	}
	return d.checkReplication(what, t)
}

// checkReplication refuses a global table whose Regions are eventually
// consistent (MultiRegionConsistency EVENTUAL, the default when unset):
// each Region evaluates a write's condition against its own copy and
// replication settles conflicts last-writer-wins, so contenders in two
// Regions can both win the same lease. A strongly consistent (MRSC) global
// table evaluates conditions across Regions, and a table without replicas
// in one Region; both are accepted.
func (d *conn) checkReplication(what string, t *types.TableDescription) error {
	if len(t.Replicas) == 0 || t.MultiRegionConsistency == types.MultiRegionConsistencyStrong {
		return nil
	}
	regions := []string{d.client.Options().Region}
	for _, r := range t.Replicas {
		if r.RegionName != nil {
			regions = append(regions, *r.RegionName)
		}
	}
	slices.Sort(regions)
	regions = slices.Compact(slices.DeleteFunc(regions, func(r string) bool { return r == "" }))
	consistency := string(t.MultiRegionConsistency)
	if consistency == "" {
		consistency = "unset, so EVENTUAL"
	}
	return fmt.Errorf("%w: %s: table %q is a global table replicated in the Regions %s with multi-Region eventual consistency (MultiRegionConsistency %s): each Region checks a write's condition against its own copy and replication keeps the last writer's item, so contenders in two Regions can both be elected; use a table with no replicas, or a multi-Region strongly consistent (MRSC) global table",
		lease.ErrUnsafeStore, what, d.table, strings.Join(regions, ", "), consistency)
}
