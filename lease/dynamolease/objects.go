package dynamolease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// ObjectsIAMActions are the DynamoDB actions Objects calls, on the group's
// table only: DescribeTable once, GetItem and PutItem for leases and
// objects, Query to list the group and read a large object's parts, and
// DeleteItem to remove the parts an object no longer has.
var ObjectsIAMActions = []string{"dynamodb:DeleteItem", "dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"}

// The default names of a shard group table's keys.
const (
	DefaultGroupAttribute     = "group"
	DefaultObjectKeyAttribute = "key"
)

// The attributes of an object's items besides their keys and the nonce.
const (
	attrData  = "data"   // B: the bytes, or a part of them
	partsMark = "#parts" // the partition of a group's parts: GROUP#parts
)

// Objects' limits: an object of up to inlineMax bytes is stored in its
// item (which stays within 4 KB, one read unit); a larger one in parts of
// up to partSize bytes (DynamoDB's items hold 400 KB).
var (
	inlineMax = 3 << 10
	partSize  = 350_000
)

// ObjectsOptions locate a shard group's items and the client that reaches
// them.
type ObjectsOptions struct {
	// Table is the name of an existing table whose key schema is a
	// partition (HASH) key named GroupAttribute and a sort (RANGE) key
	// named KeyAttribute, both of type S. Required.
	Table string
	// Group is the group's name (shard.Config.Group): the partition key
	// of its items. Required; it must not contain '#' nor end with
	// .leasehold-probe (another group's probe item).
	Group string
	// GroupAttribute is the name of the table's partition key. Default
	// DefaultGroupAttribute ("group").
	GroupAttribute string
	// KeyAttribute is the name of the table's sort key. Default
	// DefaultObjectKeyAttribute ("key").
	KeyAttribute string
	// Client is the DynamoDB client, as in Options.
	Client *ddb.Client
	// CallTimeout bounds NewObjects' DescribeTable. Default
	// lease.DefaultTTL/5, a lease's default. Each lease's requests are
	// bounded by its own lease.Options.CallTimeout, and the other calls by
	// their context.
	CallTimeout time.Duration
	// PageSize is how many items each Query reads at most (its Limit).
	// Default 0: DynamoDB's pages of 1 MB. Tests set a few to list across
	// pages without writing megabytes.
	PageSize int
}

// Objects is a shard group's store (shard.Store) in a DynamoDB table whose
// partition key is the group and sort key an item's key in the group, so
// that the group's listing is one strongly consistent Query of one
// partition; a table keyed by lease name alone would need a Scan of the
// whole table, charged for every item in it, three times per renew
// interval. Every key is GROUP/REST, stored at (GROUP, REST).
//
// Leases (GROUP/members/ID, GROUP/assigner) are this package's leases,
// their items as in a lease table with the sort key added. An object is
// an item whose nonce attribute is its version, fresh with every Put: the
// bytes in its data attribute when they are at most 3 KiB (so that the
// item is one read unit), else in parts of 350,000 bytes, each an item at
// (GROUP#parts, REST/NONCE/I), written before the head item that names
// them (its version is NONCE/N, N the number of parts). A reader reads the
// head, then the parts of that head's nonce: never a mix of two writes.
// The parts of the version a Put replaced are deleted after the head is
// written; a reader that read the old head and finds its parts gone reads
// the head again. A head read twice at one version whose parts are missing
// names parts that are gone for good: a restore of the head item (a
// point-in-time restore of the item, a person putting an earlier item
// back) after a later Put deleted them. Get reports it as lease.ErrCorrupt,
// not as a store that may answer later, and the object stays so until a
// Put over its version replaces it (a shard group's assigner writes a
// fence over it). So does a head whose version names more than 64 parts
// (22 MB), which Put refuses to write. Parts live outside the group's partition so that
// listings, charged by the size of the items they read, read heads only.
// A Put whose part write fails, or whose head write fails other than by
// its condition (its answer lost, refused or throttled), leaves its parts
// behind and, if its head was
// applied, those of the version it replaced; a delete that fails leaves its
// part. The Objects keeps those versions, and its next successful Put of
// the same key deletes their parts, after its head replaced the version it
// read. No head names them then, nor ever will: a head names its own fresh
// nonce, written once, and the one write of it that could still land is
// conditional on a version that is gone. Parts left by a process that
// stopped between its parts and its head stay, and nothing reads them.
//
// Get with a known version is one GetItem of the head (DynamoDB has no
// conditional read; the head is small), plus a Query of the parts when it
// changed. List is a Query with ConsistentRead of the group's partition,
// 1 MB a page, projecting the sort key and nonce.
type Objects struct {
	base     conn // the group's conn: name the group, sort unset
	pageSize *int32

	mu sync.Mutex
	// orphans are the versions, by key (REST), whose parts this Objects
	// wrote or failed to delete and that no head names, unless the head
	// write of one of them was applied and its answer lost: the next
	// successful Put of the key deletes them.
	orphans map[string][]string
}

// NewObjects returns the store of opts.Group in opts.Table, after checking
// the table with one DescribeTable, as Open does: a missing table, or one
// without the key schema Objects needs, is lease.ErrNotFound saying what it
// found and wants. Invalid options are lease.ErrInvalid naming the field.
func NewObjects(ctx context.Context, opts ObjectsOptions) (*Objects, error) {
	if opts.CallTimeout == 0 {
		opts.CallTimeout = lease.DefaultTTL / 5
	}
	if opts.GroupAttribute == "" {
		opts.GroupAttribute = DefaultGroupAttribute
	}
	if opts.KeyAttribute == "" {
		opts.KeyAttribute = DefaultObjectKeyAttribute
	}
	invalid := func(field, value, reason string) error {
		return &lease.OptionError{Pkg: "dynamodb", Field: field, Value: value, Reason: reason}
	}
	switch {
	case !validTable(opts.Table):
		return nil, invalid("Table", strconv.Quote(opts.Table), "must be 3 to 255 letters, digits, '_', '-' or '.'")
	case opts.Group == "" || strings.Contains(opts.Group, "#"):
		return nil, invalid("Group", strconv.Quote(opts.Group), "must be a non-empty name without '#' (GROUP#parts holds the group's large objects)")
	case opts.GroupAttribute == opts.KeyAttribute:
		return nil, invalid("KeyAttribute", strconv.Quote(opts.KeyAttribute), "must differ from GroupAttribute")
	case opts.PageSize < 0 || opts.PageSize > math.MaxInt32:
		return nil, &lease.OptionError{Pkg: "dynamodb", Field: "PageSize", Value: opts.PageSize, Reason: "must be 0 (DynamoDB's pages of 1 MB) or a positive number of items"}
	}
	for field, a := range map[string]string{"GroupAttribute": opts.GroupAttribute, "KeyAttribute": opts.KeyAttribute} {
		if a == attrData || a == attrAnnotations || slices.Contains(recordAttributes, a) {
			return nil, invalid(field, strconv.Quote(a), fmt.Sprintf("is an attribute of the group's items; choose a name other than %v, %q and %q", recordAttributes, attrAnnotations, attrData))
		}
	}
	if err := driver.CheckProbeKey("dynamodb", "Group", opts.Group, maxNameLen, "DynamoDB's partition key"); err != nil {
		return nil, err
	}
	client, err := awsdriver.Client(ctx, "dynamodb", opts.Client, ddb.NewFromConfig, func(c *ddb.Client) string { return c.Options().Region })
	if err != nil {
		return nil, err
	}
	o := &Objects{base: conn{client: client, table: opts.Table, name: opts.Group, keyAttr: opts.GroupAttribute, sortAttr: opts.KeyAttribute, callTimeout: opts.CallTimeout}}
	if opts.PageSize > 0 {
		o.pageSize = aws.Int32(int32(opts.PageSize))
	}
	if err := o.base.checkTable(ctx, false); err != nil {
		return nil, err
	}
	return o, nil
}

// at returns the conn of key, which must be GROUP/REST.
func (o *Objects) at(key string) (*conn, error) {
	rest, ok := strings.CutPrefix(key, o.base.name+"/")
	if !ok || rest == "" {
		return nil, &lease.OptionError{Pkg: "dynamodb", Field: "key", Value: strconv.Quote(key), Reason: fmt.Sprintf("is not a key of group %q (%s/...)", o.base.name, o.base.name)}
	}
	c := o.base
	c.sort = rest
	return &c, nil
}

// Lease opens this package's lease on the item of key, for the contender
// lopts describes.
func (o *Objects) Lease(key string, lopts lease.Options) (lease.Lease, error) {
	c, err := o.at(key)
	if err != nil {
		return nil, err
	}
	if lopts, err = lopts.Validate(); err != nil {
		return nil, err
	}
	c.callTimeout = lopts.CallTimeout
	return driver.NewCAS(c, lopts)
}

// maxParts is the most parts an object has: up to maxParts·partSize bytes
// (22 MB; the assignment of shard.MaxShards shards is about 700 kB). A
// head naming more was not written by Objects: nothing is read or deleted
// for it.
const maxParts = 64

// parts returns the number of parts of an object's version: N of
// NONCE/N, 0 for an object stored in its item; ok is false for a version
// that names parts Objects cannot have written (N not 1 to maxParts).
func parts(version string) (n int, ok bool) {
	_, s, found := strings.Cut(version, "/")
	if !found {
		return 0, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxParts {
		return 0, false
	}
	return n, true
}

// partKey is the key of part i of the object rest at version.
func (o *Objects) partKey(rest, version string, i int) map[string]types.AttributeValue {
	nonce, _, _ := strings.Cut(version, "/")
	return map[string]types.AttributeValue{
		o.base.keyAttr:  &types.AttributeValueMemberS{Value: o.base.name + partsMark},
		o.base.sortAttr: &types.AttributeValueMemberS{Value: fmt.Sprintf("%s/%s/%04d", rest, nonce, i)},
	}
}

// Get returns the object at key and its version, or only its version
// when it is known. A key without an item is lease.ErrNoRecord.
func (o *Objects) Get(ctx context.Context, key, known string) ([]byte, string, error) {
	c, err := o.at(key)
	if err != nil {
		return nil, "", err
	}
	// Another round only when the parts of the head read were replaced
	// before they were read; a head read twice at one version whose parts
	// are missing names parts that are gone (see Get's doc).
	var prev string
	for range 3 {
		out, err := c.client.GetItem(ctx, &ddb.GetItemInput{TableName: &c.table, Key: c.key(), ConsistentRead: aws.Bool(true)}, callOptions)
		if err != nil {
			return nil, "", c.classify(ctx, opGet, err)
		}
		if len(out.Item) == 0 {
			return nil, "", fmt.Errorf("%w: dynamodb: GetItem %s: no item", lease.ErrNoRecord, c.url())
		}
		nonce, ok := out.Item[attrNonce].(*types.AttributeValueMemberS)
		if !ok {
			return nil, "", fmt.Errorf("%w (%s)", driver.Corruptf("the item has no %q attribute of type S: not an object (attributes: %s)", attrNonce, strings.Join(names(out.Item), ", ")), c.url())
		}
		version := nonce.Value
		n, ok := parts(version)
		switch {
		case version == known:
			return nil, version, nil
		case !ok:
			return nil, "", fmt.Errorf("%w (%s)", driver.Corruptf("the item's version %+.64q names parts that no object has (at most %d): not an object", version, maxParts), c.url())
		case n == 0:
			data, ok := out.Item[attrData].(*types.AttributeValueMemberB)
			if !ok {
				return nil, "", fmt.Errorf("%w (%s)", driver.Corruptf("the item has no %q attribute of type B: not an object (attributes: %s)", attrData, strings.Join(names(out.Item), ", ")), c.url())
			}
			return data.Value, version, nil
		}
		data, found, err := o.readParts(ctx, c, version)
		switch {
		case err != nil:
			return nil, "", err
		case found == n:
			return data, version, nil
		case version == prev:
			return nil, "", fmt.Errorf("%w (%s)", driver.Corruptf("the head item at version %q names %d parts, of which %d are stored: a head put back (a restore) after a later write deleted its parts; the next Put over it replaces it", version, n, found), c.url())
		}
		prev = version
	}
	return nil, "", fmt.Errorf("%w: dynamodb: %s: the object's parts were replaced twice while it was read", lease.ErrUnavailable, c.url())
}

// readParts reads the parts of c's object at version, with a strongly
// consistent Query, and returns them and how many it found.
func (o *Objects) readParts(ctx context.Context, c *conn, version string) ([]byte, int, error) {
	nonce, _, _ := strings.Cut(version, "/")
	var data []byte
	i := 0
	err := o.query(ctx, o.base.name+partsMark, c.sort+"/"+nonce+"/", nil, func(item map[string]types.AttributeValue) error {
		b, ok := item[attrData].(*types.AttributeValueMemberB)
		if !ok {
			return driver.Corruptf("part %d of %s has no %q attribute of type B", i, c.url(), attrData)
		}
		data = append(data, b.Value...)
		i++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return data, i, nil
}

// query calls f for every item of partition whose sort key begins with
// prefix, in order, page by page, with strongly consistent reads.
func (o *Objects) query(ctx context.Context, partition, prefix string, projection *string, f func(map[string]types.AttributeValue) error) error {
	in := &ddb.QueryInput{
		TableName:                &o.base.table,
		ConsistentRead:           aws.Bool(true),
		Limit:                    o.pageSize,
		KeyConditionExpression:   aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames: map[string]string{"#pk": o.base.keyAttr, "#sk": o.base.sortAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     &types.AttributeValueMemberS{Value: partition},
			":prefix": &types.AttributeValueMemberS{Value: prefix},
		},
	}
	if prefix == "" {
		in.KeyConditionExpression = aws.String("#pk = :pk")
		delete(in.ExpressionAttributeValues, ":prefix")
	}
	if projection != nil {
		in.ProjectionExpression = projection
		in.ExpressionAttributeNames["#nonce"] = attrNonce
	}
	for {
		out, err := o.base.client.Query(ctx, in, callOptions)
		if err != nil {
			return o.base.classify(ctx, opQuery, err)
		}
		for _, item := range out.Items {
			if err := f(item); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Put stores data at key if it has no item (version "") or its item's
// version is version, and returns the new version. A larger object's
// parts are written first, the head last, conditionally; then the parts
// of the version it replaced are deleted. A failed condition wraps
// driver.ErrConflict.
func (o *Objects) Put(ctx context.Context, key string, data []byte, version string) (string, error) {
	c, err := o.at(key)
	if err != nil {
		return "", err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	next := hex.EncodeToString(b[:])
	item := c.key()
	if n := (len(data) + partSize - 1) / partSize; n > maxParts {
		return "", &lease.OptionError{Pkg: "dynamodb", Field: "data", Value: fmt.Sprintf("%d bytes", len(data)), Reason: fmt.Sprintf("is more than an object holds: %d parts of %d bytes", maxParts, partSize)}
	}
	if len(data) <= inlineMax {
		item[attrData] = &types.AttributeValueMemberB{Value: data}
	} else {
		n := (len(data) + partSize - 1) / partSize
		next += "/" + strconv.Itoa(n)
		for i := range n {
			part := o.partKey(c.sort, next, i)
			part[attrData] = &types.AttributeValueMemberB{Value: data[i*partSize : min(len(data), (i+1)*partSize)]}
			if _, err := c.client.PutItem(ctx, &ddb.PutItemInput{TableName: &c.table, Item: part}, callOptions); err != nil {
				o.orphan(c.sort, next)
				return "", c.classify(ctx, opPutPart, err)
			}
		}
	}
	item[attrNonce] = &types.AttributeValueMemberS{Value: next}
	in := &ddb.PutItemInput{TableName: &c.table, Item: item}
	o.condition(in, version)
	if _, err := c.client.PutItem(ctx, in, callOptions); err != nil {
		which := opReplace
		if version == "" {
			which = opCreate
		}
		err = c.classify(ctx, which, err)
		if errors.Is(err, driver.ErrConflict) {
			o.deleteParts(ctx, c, next)
		} else {
			// Unknown: the head may have replaced version, or not.
			o.orphan(c.sort, next)
			o.orphan(c.sort, version)
		}
		return "", err
	}
	o.deleteParts(ctx, c, version)
	o.mu.Lock()
	orphans := o.orphans[c.sort]
	delete(o.orphans, c.sort)
	o.mu.Unlock()
	for _, v := range orphans {
		o.deleteParts(ctx, c, v)
	}
	return next, nil
}

// orphan keeps version of the object rest for the next successful Put of
// it to delete, if it has parts.
func (o *Objects) orphan(rest, version string) {
	if n, _ := parts(version); n == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.orphans == nil {
		o.orphans = map[string][]string{}
	}
	if !slices.Contains(o.orphans[rest], version) {
		o.orphans[rest] = append(o.orphans[rest], version)
	}
}

// condition makes in conditional on the stored version.
func (o *Objects) condition(in *ddb.PutItemInput, version string) {
	if version == "" {
		in.ConditionExpression = aws.String("attribute_not_exists(#pk)")
		in.ExpressionAttributeNames = map[string]string{"#pk": o.base.keyAttr}
		return
	}
	in.ConditionExpression = aws.String("#nonce = :version")
	in.ExpressionAttributeNames = map[string]string{"#nonce": attrNonce}
	in.ExpressionAttributeValues = map[string]types.AttributeValue{":version": &types.AttributeValueMemberS{Value: version}}
}

// deleteParts deletes the parts of c's object at version, if it has any,
// which no head names. A delete that fails leaves its part behind, for the
// next successful Put of the object to delete (orphan): nothing reads it.
func (o *Objects) deleteParts(ctx context.Context, c *conn, version string) {
	n, _ := parts(version)
	for i := range n {
		if _, err := c.client.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: &c.table, Key: o.partKey(c.sort, version, i)}, callOptions); err != nil {
			o.orphan(c.sort, version)
		}
	}
}

// List returns the version of every item of the group whose key starts
// with prefix (GROUP/...), from one strongly consistent Query of the
// group's partition, page by page, or an error: never part of the list.
// An item with no "nonce" attribute of type S, which Objects never writes
// (another tool's, a person's note), is not an object and is left out, so
// that it costs the group nothing, as an object of someone else's costs a
// listing on the other stores nothing.
func (o *Objects) List(ctx context.Context, prefix string) (map[string]string, error) {
	group := o.base.name + "/"
	rest, ok := strings.CutPrefix(prefix, group)
	if !ok && prefix+"/" != group {
		return nil, &lease.OptionError{Pkg: "dynamodb", Field: "prefix", Value: strconv.Quote(prefix), Reason: fmt.Sprintf("is not in group %q (%s/...)", o.base.name, o.base.name)}
	}
	out := map[string]string{}
	err := o.query(ctx, o.base.name, rest, aws.String("#sk, #nonce"), func(item map[string]types.AttributeValue) error {
		sk, _ := item[o.base.sortAttr].(*types.AttributeValueMemberS)
		if nonce, ok := item[attrNonce].(*types.AttributeValueMemberS); sk != nil && ok {
			out[group+sk.Value] = nonce.Value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
