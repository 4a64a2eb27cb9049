// Package dynamoemu opens the DynamoDB-compatible stores that
// dynamolease's integration tests and the quorum's mixed conformance
// suites run on: dynalite and moto from the local test stack, and a real
// account's when one is configured (see package emulators). Import it from
// _test.go files only.
package dynamoemu

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// Store is one DynamoDB-compatible store under test, with a table for one
// test.
type Store struct {
	// Name names the store in test names and messages ("dynalite", "moto").
	Name string
	// Table is this test's table on the store.
	Table string
	// Given is set when the table was given (LEASEHOLD_DYNAMODB_TABLE):
	// the tests use it as it is and create no tables.
	Given bool
	// NewClient returns a client of the store; hc, if not nil, carries its
	// requests.
	NewClient func(hc ddb.HTTPClient) *ddb.Client
	// CallTimeout is the CallTimeout the conformance suite's leases get.
	CallTimeout time.Duration
	// TTL is the conformance suite's TTL: storetest.ConformanceTTL if zero.
	TTL time.Duration
	// Endpoint is an emulator's address (empty for a real account's
	// store), which a fault proxy can stand in front of.
	Endpoint string
	// Elsewhere, if not nil, returns a client of the same store with other
	// keys: a store whose check this process has not made yet, as another
	// process's.
	Elsewhere func(hc ddb.HTTPClient) *ddb.Client

	mu    sync.Mutex
	names map[string]bool // the lease names this test wrote
}

// Dynalite returns dynalite from the local test stack
// (LEASEHOLD_DYNALITE_ENDPOINT) with a table of the test's own, or skips
// the test naming the variable.
func Dynalite(t *testing.T) *Store {
	t.Helper()
	endpoint := emulators.Endpoint(t, "dynalite", "dynalite", "LEASEHOLD_DYNALITE_ENDPOINT")
	tg := &Store{Name: "dynalite", CallTimeout: time.Second, NewClient: StaticClient(endpoint, "test"), Endpoint: endpoint, Elsewhere: StaticClient(endpoint, "elsewhere")}
	tg.ensureTable(t)
	return tg
}

// Moto returns moto's DynamoDB from the local test stack
// (LEASEHOLD_MOTO_ENDPOINT) with a table of the test's own, or skips the
// test naming the variable.
func Moto(t *testing.T) *Store {
	t.Helper()
	endpoint := emulators.Endpoint(t, "moto", "moto", "LEASEHOLD_MOTO_ENDPOINT")
	// moto is one Python process: under the conformance suite's burst of
	// parallel requests, with the race detector, some of its answers take
	// more than 500ms.
	tg := &Store{Name: "moto", CallTimeout: time.Second, TTL: storetest.MotoTTL, NewClient: StaticClient(endpoint, "test"), Endpoint: endpoint, Elsewhere: StaticClient(endpoint, "elsewhere")}
	tg.ensureTable(t)
	return tg
}

// Targets returns the stores dynamolease's integration tests run
// against: dynalite and moto, whose subtests skip, naming the variable,
// when it is not set; and "aws" when AWS_ENDPOINT_URL_DYNAMODB (LocalStack)
// or LEASEHOLD_DYNAMODB_TABLE (a table in a real account, with the default
// key schema, used as it is) is set, with credentials and region from the
// default AWS chain. "aws" is left out, not skipped, otherwise, as nothing
// on this machine provides it.
func Targets() storetest.Targets[*Store] {
	targets := storetest.Targets[*Store]{Specs: []storetest.Spec[*Store]{{Name: "dynalite", Setup: Dynalite}, {Name: "moto", Setup: Moto}}}
	table := os.Getenv("LEASEHOLD_DYNAMODB_TABLE")
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" && table == "" {
		return targets
	}
	targets.Specs = append(targets.Specs, storetest.Spec[*Store]{Name: "aws", Setup: func(t *testing.T) *Store {
		cfg, err := config.LoadDefaultConfig(context.Background())
		if err != nil {
			t.Fatalf("loading the default AWS config for AWS_ENDPOINT_URL_DYNAMODB / LEASEHOLD_DYNAMODB_TABLE: %v", err)
		}
		tg := &Store{Name: "aws", CallTimeout: time.Second, Table: table, Given: table != "", NewClient: func(hc ddb.HTTPClient) *ddb.Client {
			return ddb.NewFromConfig(cfg, func(o *ddb.Options) {
				if hc != nil {
					o.HTTPClient = hc
				}
			})
		}}
		tg.ensureTable(t)
		return tg
	}})
	return targets
}

// StaticClient returns a client builder for an endpoint and an
// access key, isolated from the AWS_* environment. Neither emulator checks
// credentials.
func StaticClient(endpoint, accessKey string) func(hc ddb.HTTPClient) *ddb.Client {
	return func(hc ddb.HTTPClient) *ddb.Client {
		return ddb.NewFromConfig(awstest.StaticConfig(endpoint, accessKey, "test", hc))
	}
}

// leaseKey is the key schema leasehold needs, with the default key
// attribute.
var leaseKey = []types.KeySchemaElement{{AttributeName: aws.String(dynamolease.DefaultKeyAttribute), KeyType: types.KeyTypeHash}}

// ensureTable creates a table for this test unless the target names one,
// and removes what the test stored when it ends: the table it created, or
// in a table it was given, only the items this test wrote.
func (tg *Store) ensureTable(t *testing.T) {
	t.Helper()
	c := tg.NewClient(nil)
	tg.names = map[string]bool{}
	if tg.Given {
		t.Cleanup(func() { tg.deleteItems(t, c) })
		return
	}
	tg.Table = tg.CreateTable(t, c, "leasehold-test", leaseKey, map[string]types.ScalarAttributeType{dynamolease.DefaultKeyAttribute: types.ScalarAttributeTypeS})
}

// CreateTable creates a table named prefix and a random suffix, with the
// key schema keys whose attributes have the types attrs, billed per
// request, and deletes it when the test ends.
func (tg *Store) CreateTable(t *testing.T, c *ddb.Client, prefix string, keys []types.KeySchemaElement, attrs map[string]types.ScalarAttributeType) string {
	t.Helper()
	name := storetest.UniqueName(prefix)
	in := &ddb.CreateTableInput{TableName: &name, KeySchema: keys, BillingMode: types.BillingModePayPerRequest}
	for _, a := range slices.Sorted(maps.Keys(attrs)) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: attrs[a]})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The name is this test's own (a random suffix): a table that already
	// exists is the one an earlier attempt of this call created, its answer
	// lost and the call tried again by the SDK (moto, beside stress-ng).
	var inUse *types.ResourceInUseException
	if _, err := c.CreateTable(ctx, in); err != nil && !errors.As(err, &inUse) {
		t.Fatalf("%s: CreateTable %q: %v", tg.Name, name, err)
	}
	if err := ddb.NewTableExistsWaiter(c).Wait(ctx, &ddb.DescribeTableInput{TableName: &name}, 30*time.Second,
		func(o *ddb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond }); err != nil {
		t.Fatalf("%s: waiting for table %q: %v", tg.Name, name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &ddb.DeleteTableInput{TableName: &name}); err != nil {
			t.Logf("%s: cleanup: DeleteTable %q: %v", tg.Name, name, err)
		}
	})
	return name
}

func (tg *Store) deleteItems(t *testing.T, c *ddb.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg.mu.Lock()
	names := slices.Sorted(maps.Keys(tg.names))
	tg.mu.Unlock()
	for _, name := range names {
		if _, err := c.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: &tg.Table, Key: Key(name)}); err != nil {
			t.Logf("%s: cleanup: DeleteItem %q: %v", tg.Name, name, err)
		}
	}
}

// Track notes that the test writes the lease called name.
func (tg *Store) Track(name string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.names[name] = true
}

// Open opens the lease called name in the target's table, through c.
func (tg *Store) Open(t *testing.T, c *ddb.Client, name string, opts lease.Options) lease.Lease {
	t.Helper()
	tg.Track(name)
	l, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: tg.Table, Name: name, Client: c}, opts)
	if err != nil {
		t.Fatalf("%s: dynamolease.Open(%q): %v", tg.Name, name, err)
	}
	return l
}

// URL returns the dynamodb:// URL of the lease called name on an
// emulator, its endpoint in the URL; lease.Open signs its requests with
// the keys of the AWS_* environment, which neither emulator checks.
func (tg *Store) URL(name string) string {
	tg.Track(name)
	return "dynamodb://" + tg.Table + "/" + name + "?region=" + awstest.Region + "&endpoint=" + url.QueryEscape(tg.Endpoint)
}

// Put stores item unconditionally, as someone other than leasehold would.
func (tg *Store) Put(ctx context.Context, c *ddb.Client, item map[string]types.AttributeValue) error {
	if k, ok := item[dynamolease.DefaultKeyAttribute].(*types.AttributeValueMemberS); ok {
		tg.Track(k.Value)
	}
	_, err := c.PutItem(ctx, &ddb.PutItemInput{TableName: &tg.Table, Item: item})
	return err
}

// Get returns the item of the lease called name as stored, read strongly
// consistently.
func (tg *Store) Get(t *testing.T, c *ddb.Client, name string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: &tg.Table, Key: Key(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("%s: GetItem %q: %v", tg.Name, name, err)
	}
	if len(out.Item) == 0 {
		t.Fatalf("%s: GetItem %q: no item", tg.Name, name)
	}
	return out.Item
}

// Key is the key of the lease called name, with the default key attribute.
func Key(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{dynamolease.DefaultKeyAttribute: &types.AttributeValueMemberS{Value: name}}
}

// Conformance is the conformance suite's harness on the target, through
// one new client.
func (tg *Store) Conformance() *storetest.Harness {
	c := tg.NewClient(nil)
	return tg.Harness(c, c)
}

// Harness is the conformance suite's harness on the target: leases opened
// through c, foreign items written and items deleted through direct.
func (tg *Store) Harness(c, direct *ddb.Client) *storetest.Harness {
	return &storetest.Harness{
		CallTimeout: tg.CallTimeout,
		TTL:         tg.TTL,
		OpenLease: func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
			tg.Track(name)
			return dynamolease.Open(ctx, dynamolease.Options{Table: tg.Table, Name: name, Client: c}, opts)
		},
		// What another tool might keep at the key: a lock of its own, with
		// no format marker, a token that is not a number and no nonce.
		Foreign: func(ctx context.Context, name string) error {
			return tg.Put(ctx, direct, map[string]types.AttributeValue{
				dynamolease.DefaultKeyAttribute: &types.AttributeValueMemberS{Value: name},
				"holder":                        &types.AttributeValueMemberS{Value: "another-tool"},
				"token":                         &types.AttributeValueMemberS{Value: "banana"},
			})
		},
		Remove: func(ctx context.Context, name string) error {
			_, err := direct.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: &tg.Table, Key: Key(name)})
			return err
		},
	}
}
