package dynamolease_test

import (
	"context"
	"errors"
	"maps"
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
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// target is one DynamoDB-compatible store under test.
type target struct {
	name string
	// table is this test's table on the store.
	table string
	// given is set when the table was given (LEASEHOLD_DYNAMODB_TABLE):
	// the tests use it as it is and create no tables.
	given bool
	// newClient returns a client of the store; hc, if not nil, carries its
	// requests.
	newClient func(hc ddb.HTTPClient) *ddb.Client
	// callTimeout is the CallTimeout the conformance suite's leases get.
	callTimeout time.Duration
	// ttl is the conformance suite's TTL: storetest.ConformanceTTL if zero.
	ttl time.Duration
	// endpoint reaches the store through another address (a fault
	// proxy): set for dynalite.
	endpoint string
	// elsewhere, if not nil, returns a client of the same store with other
	// keys: a store whose check this process has not made yet, as another
	// process's.
	elsewhere func(hc ddb.HTTPClient) *ddb.Client

	mu    sync.Mutex
	names map[string]bool // the lease names this test wrote
}

// The stores the integration tests run against. dynalite and moto come
// from the local test stack (scripts/stack up dynalite moto; eval
// "$(scripts/stack env)"); their subtests skip, naming the variable, when
// it is not set. "aws" runs only when AWS_ENDPOINT_URL_DYNAMODB
// (LocalStack) or LEASEHOLD_DYNAMODB_TABLE (a table in a real account, with
// the default key schema, used as it is) is set, with credentials and
// region from the default AWS chain; it is left out, not skipped,
// otherwise, as nothing on this machine provides it.
var targets = storetest.Targets[*target]{Prepare: (*target).ensureTable, Specs: []storetest.Spec[*target]{
	{Name: "dynalite", Setup: func(t *testing.T) *target {
		endpoint := storetest.Endpoint(t, "dynamodb", "dynalite", "dynalite", "LEASEHOLD_DYNALITE_ENDPOINT")
		return &target{name: "dynalite", callTimeout: time.Second, newClient: staticClient(endpoint, "test"), endpoint: endpoint, elsewhere: staticClient(endpoint, "elsewhere")}
	}},
	{Name: "moto", Setup: func(t *testing.T) *target {
		endpoint := storetest.Endpoint(t, "dynamodb", "moto", "moto", "LEASEHOLD_MOTO_ENDPOINT")
		// moto is one Python process: under the conformance suite's burst
		// of parallel requests, with the race detector, some of its
		// answers take more than 500ms.
		return &target{name: "moto", callTimeout: time.Second, ttl: storetest.MotoTTL, newClient: staticClient(endpoint, "test"), elsewhere: staticClient(endpoint, "elsewhere")}
	}},
}}

func init() {
	table := os.Getenv("LEASEHOLD_DYNAMODB_TABLE")
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" && table == "" {
		return
	}
	targets.Specs = append(targets.Specs, storetest.Spec[*target]{Name: "aws", Setup: func(t *testing.T) *target {
		cfg, err := config.LoadDefaultConfig(context.Background())
		if err != nil {
			t.Fatalf("loading the default AWS config for AWS_ENDPOINT_URL_DYNAMODB / LEASEHOLD_DYNAMODB_TABLE: %v", err)
		}
		return &target{name: "aws", callTimeout: time.Second, table: table, given: table != "", newClient: func(hc ddb.HTTPClient) *ddb.Client {
			return ddb.NewFromConfig(cfg, func(o *ddb.Options) {
				if hc != nil {
					o.HTTPClient = hc
				}
			})
		}}
	}})
}

// staticClient returns a client builder for an endpoint and an access key,
// isolated from the AWS_* environment. Neither emulator checks credentials.
func staticClient(endpoint, accessKey string) func(hc ddb.HTTPClient) *ddb.Client {
	return func(hc ddb.HTTPClient) *ddb.Client {
		return ddb.NewFromConfig(awstest.StaticConfig(endpoint, accessKey, "test", hc))
	}
}

func TestMain(m *testing.M) { storetest.Main(m) }

// canCreateTables keeps the stores on which a test may create tables of
// its own: all but a real account's given table (LEASEHOLD_DYNAMODB_TABLE).
func canCreateTables(name string) bool {
	return name != "aws" || os.Getenv("LEASEHOLD_DYNAMODB_TABLE") == ""
}

// leaseKey is the key schema leasehold needs, with the default key
// attribute.
var leaseKey = []types.KeySchemaElement{{AttributeName: aws.String(dynamolease.DefaultKeyAttribute), KeyType: types.KeyTypeHash}}

// ensureTable creates a table for this test unless the target names one,
// and removes what the test stored when it ends: the table it created, or
// in a table it was given, only the items this test wrote.
func (tg *target) ensureTable(t *testing.T) {
	t.Helper()
	c := tg.newClient(nil)
	tg.names = map[string]bool{}
	if tg.given {
		t.Cleanup(func() { tg.deleteItems(t, c) })
		return
	}
	tg.table = tg.createTable(t, c, "leasehold-test", leaseKey, map[string]types.ScalarAttributeType{dynamolease.DefaultKeyAttribute: types.ScalarAttributeTypeS})
}

// createTable creates a table named prefix and a random suffix, with the
// key schema keys whose attributes have the types attrs, billed per
// request, and deletes it when the test ends.
func (tg *target) createTable(t *testing.T, c *ddb.Client, prefix string, keys []types.KeySchemaElement, attrs map[string]types.ScalarAttributeType) string {
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
		t.Fatalf("%s: CreateTable %q: %v", tg.name, name, err)
	}
	if err := ddb.NewTableExistsWaiter(c).Wait(ctx, &ddb.DescribeTableInput{TableName: &name}, 30*time.Second,
		func(o *ddb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond }); err != nil {
		t.Fatalf("%s: waiting for table %q: %v", tg.name, name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &ddb.DeleteTableInput{TableName: &name}); err != nil {
			t.Logf("%s: cleanup: DeleteTable %q: %v", tg.name, name, err)
		}
	})
	return name
}

func (tg *target) deleteItems(t *testing.T, c *ddb.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg.mu.Lock()
	names := slices.Sorted(maps.Keys(tg.names))
	tg.mu.Unlock()
	for _, name := range names {
		if _, err := c.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: &tg.table, Key: key(name)}); err != nil {
			t.Logf("%s: cleanup: DeleteItem %q: %v", tg.name, name, err)
		}
	}
}

// track notes that the test writes the lease called name.
func (tg *target) track(name string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	tg.names[name] = true
}

// open opens the lease called name in the target's table, through c.
func (tg *target) open(t *testing.T, c *ddb.Client, name string, opts lease.Options) lease.Lease {
	t.Helper()
	tg.track(name)
	l, err := dynamolease.Open(t.Context(), dynamolease.Options{Table: tg.table, Name: name, Client: c}, opts)
	if err != nil {
		t.Fatalf("%s: dynamolease.Open(%q): %v", tg.name, name, err)
	}
	return l
}

// put stores item unconditionally, as someone other than leasehold would.
func (tg *target) put(ctx context.Context, c *ddb.Client, item map[string]types.AttributeValue) error {
	if k, ok := item[dynamolease.DefaultKeyAttribute].(*types.AttributeValueMemberS); ok {
		tg.track(k.Value)
	}
	_, err := c.PutItem(ctx, &ddb.PutItemInput{TableName: &tg.table, Item: item})
	return err
}

// get returns the item of the lease called name as stored, read strongly
// consistently.
func (tg *target) get(t *testing.T, c *ddb.Client, name string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: &tg.table, Key: key(name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("%s: GetItem %q: %v", tg.name, name, err)
	}
	if len(out.Item) == 0 {
		t.Fatalf("%s: GetItem %q: no item", tg.name, name)
	}
	return out.Item
}

// key is the key of the lease called name, with the default key attribute.
func key(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{dynamolease.DefaultKeyAttribute: s(name)}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
