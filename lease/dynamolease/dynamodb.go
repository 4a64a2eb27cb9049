package dynamolease

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// IAMActions are the only DynamoDB actions the driver calls, each on the
// lease's table only (arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE): Open
// describes the table once, reads are GetItem and every write is a
// conditional PutItem. A least-privilege policy grants exactly these.
// dynamodb:UpdateItem is not among them: the driver never calls it.
var IAMActions = []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem"}

// DefaultKeyAttribute is the name of the table's partition key when
// Options.KeyAttribute is empty.
const DefaultKeyAttribute = "lease"

// DynamoDB's limits on the names and keys Open accepts.
const (
	maxNameLen = 2048 // a partition key value, in bytes
	maxAttrLen = 255  // a key attribute's name, in bytes
)

// tableChars are the characters DynamoDB allows in a table name; compiled
// when first used, not at every process's start.
var tableChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9_.-]*$`) })

// validTable reports whether table is a valid DynamoDB table name: 3 to
// 255 of tableChars. The length is counted apart: the counted repetition
// {3,255} compiles into 255 copies of the class, 230 KB and some
// milliseconds of every process's start-up (issue 38).
func validTable(table string) bool {
	return len(table) >= 3 && len(table) <= 255 && tableChars().MatchString(table)
}

// Options locate one lease item and the client that reaches it.
type Options struct {
	// Table is the name of an existing table whose key schema is a single
	// partition (HASH) key of type S named KeyAttribute, with no sort key.
	// Required.
	Table string
	// Name is the lease's name: the partition key value of its item, such
	// as "jobs/nightly-report". Required; at most 2032 bytes, so that the
	// name of its probe item (NAME.leasehold-probe, 16 bytes more) fits
	// DynamoDB's limit of 2048 on a partition key; not ending with
	// .leasehold-probe, another lease's probe item.
	Name string
	// KeyAttribute is the name of the table's partition key attribute.
	// Default DefaultKeyAttribute ("lease"). It must not be one of the
	// attributes the item stores (see the package doc).
	KeyAttribute string
	// Client is the DynamoDB client (package
	// github.com/aws/aws-sdk-go-v2/service/dynamodb) to use. If nil, Open
	// builds one from the default AWS configuration chain: credentials from
	// the environment, the shared config and credentials files, or the
	// ECS/EC2 role; region from AWS_REGION or the profile; endpoint from
	// AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL when set (LocalStack,
	// dynalite). Whichever client is used, the driver turns the SDK's own
	// retries off for its calls, so that they do not multiply with the
	// caller's.
	Client *ddb.Client
}

// Open returns a lease on the item opts names, for the contender lopts
// describes. It checks the options, then the table: one DescribeTable,
// bounded by lopts.CallTimeout and sent once per client and table (later
// Opens with the same client reuse the first success). A missing table, or
// one whose key schema is not a single HASH key of type S named
// KeyAttribute, is reported as lease.ErrNotFound saying what was expected
// and what was found; a global table whose Regions are eventually
// consistent as lease.ErrUnsafeStore, naming its Regions; refused
// credentials as lease.ErrPermission; a table
// that could not be described (throttling, a timeout, an unreachable
// endpoint) as lease.ErrUnavailable, after which Open may be retried.
func Open(ctx context.Context, opts Options, lopts lease.Options) (lease.Lease, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	lopts, err := lopts.Validate()
	if err != nil {
		return nil, err
	}
	client, err := awsdriver.Client(ctx, "dynamolease", opts.Client, ddb.NewFromConfig, func(c *ddb.Client) string { return c.Options().Region })
	if err != nil {
		return nil, err
	}
	d := &conn{client: client, table: opts.Table, name: opts.Name, keyAttr: opts.KeyAttribute, callTimeout: lopts.CallTimeout}
	if err := d.checkTable(ctx, false); err != nil {
		return nil, err
	}
	return driver.NewCAS(d, lopts)
}

func (o Options) withDefaults() Options {
	if o.KeyAttribute == "" {
		o.KeyAttribute = DefaultKeyAttribute
	}
	return o
}

func (o Options) validate() error {
	invalid := func(field, value, reason string) error {
		return &lease.OptionError{Pkg: "dynamolease", Field: field, Value: value, Reason: reason}
	}
	switch {
	case !validTable(o.Table):
		return invalid("Table", strconv.Quote(o.Table), "must be 3 to 255 letters, digits, '_', '-' or '.'")
	case o.Name == "":
		return invalid("Name", `""`, "must not be empty")
	case len(o.KeyAttribute) > maxAttrLen:
		return invalid("KeyAttribute", strconv.Quote(o.KeyAttribute[:64]+"..."), fmt.Sprintf("is %d bytes long; DynamoDB allows at most %d", len(o.KeyAttribute), maxAttrLen))
	case slices.Contains(recordAttributes, o.KeyAttribute):
		return invalid("KeyAttribute", strconv.Quote(o.KeyAttribute), fmt.Sprintf("is an attribute of the lease item; choose a name other than %v", recordAttributes))
	}
	return driver.CheckProbeKey("dynamolease", "Name", o.Name, maxNameLen, "DynamoDB's partition key")
}

// conn is the driver.CAS for one item. A record's version is its
// nonce, which every write makes afresh: Replace is a PutItem conditional
// on the stored nonce being the version read.
type conn struct {
	client  *ddb.Client
	table   string
	name    string
	keyAttr string
	// sortAttr, if set, is the table's sort (RANGE) key, and sort the
	// item's value of it: a lease of a shard group (Objects), whose
	// table's partition key is the group and sort key the lease's key in
	// it.
	sortAttr, sort string
	// callTimeout bounds each request of Verify and of the table's
	// check (the engine bounds the others): the lease's CallTimeout.
	callTimeout time.Duration
	// checked is the check of the table that Open passed (set before
	// the conn is shared), which its reads repeat; nil until then.
	checked *tableCheck
}

// callOptions apply to every request: no SDK retries (the caller retries,
// within its own deadlines), and request bodies that cannot break an
// answered request (see awsdriver.PlainBodies: every DynamoDB request has a
// body).
func callOptions(o *ddb.Options) {
	awsdriver.NoRetries(&o.Retryer, &o.RetryMaxAttempts)
	o.HTTPClient = awsdriver.PlainBodies(o.HTTPClient)
}

func (d *conn) key() map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{d.keyAttr: &types.AttributeValueMemberS{Value: d.name}}
	if d.sortAttr != "" {
		k[d.sortAttr] = &types.AttributeValueMemberS{Value: d.sort}
	}
	return k
}

// actions are the IAM actions the conn's errors name: IAMActions, or
// ObjectsIAMActions for a shard group's table.
func (d *conn) actions() []string {
	if d.sortAttr != "" {
		return ObjectsIAMActions
	}
	return IAMActions
}

// schema describes the key schema the conn's table must have.
func (d *conn) schema() string {
	if d.sortAttr != "" {
		return fmt.Sprintf("exactly two keys, HASH %q and RANGE %q, both of type S", d.keyAttr, d.sortAttr)
	}
	return fmt.Sprintf("exactly one key, HASH %q of type S, and no sort (RANGE) key", d.keyAttr)
}

// Get reads the item, after checking the table again if its last check is
// older than tableRecheck: a replica added since is seen within that time.
func (d *conn) Get(ctx context.Context) (lease.Record, error) {
	if err := d.checkTable(ctx, true); err != nil {
		return lease.Record{}, err
	}
	out, err := d.client.GetItem(ctx, &ddb.GetItemInput{TableName: &d.table, Key: d.key(), ConsistentRead: aws.Bool(true)}, callOptions)
	if err != nil {
		return lease.Record{}, d.classify(ctx, opGet, err)
	}
	if len(out.Item) == 0 {
		return lease.Record{}, fmt.Errorf("%w: dynamodb: GetItem %s: no item", lease.ErrNoRecord, d.url())
	}
	r, err := decodeItem(out.Item)
	if err != nil {
		return lease.Record{}, fmt.Errorf("%w (%s)", err, d.url())
	}
	return r, nil
}

func (d *conn) Create(ctx context.Context, r lease.Record) (string, error) {
	return d.put(ctx, opCreate, r, &ddb.PutItemInput{
		ConditionExpression:      aws.String("attribute_not_exists(#key)"),
		ExpressionAttributeNames: map[string]string{"#key": d.keyAttr},
	})
}

func (d *conn) Replace(ctx context.Context, r lease.Record, version string) (string, error) {
	return d.put(ctx, opReplace, r, &ddb.PutItemInput{
		ConditionExpression:       aws.String("#version = :version"),
		ExpressionAttributeNames:  map[string]string{"#version": attrNonce},
		ExpressionAttributeValues: map[string]types.AttributeValue{":version": &types.AttributeValueMemberS{Value: version}},
	})
}

// put writes r with in's condition and returns the new version, r's
// stored nonce.
func (d *conn) put(ctx context.Context, op op, r lease.Record, in *ddb.PutItemInput) (string, error) {
	in.TableName = &d.table
	in.Item = encodeItem(r, d.keyAttr, d.name)
	maps.Copy(in.Item, d.key())
	if _, err := d.client.PutItem(ctx, in, callOptions); err != nil {
		return "", d.classify(ctx, op, err)
	}
	return driver.EncodeNonce(r), nil
}

// url names the item in errors, as a URL that would open it.
func (d *conn) url() string {
	u := Scheme + "://" + d.table + "/" + d.name
	if d.sortAttr != "" {
		return u + "/" + d.sort + " (" + d.keyAttr + ", " + d.sortAttr + ")"
	}
	if d.keyAttr != DefaultKeyAttribute {
		u += "?key_attribute=" + d.keyAttr
	}
	return u
}

// Credentials implements driver.CredentialSource: where the client's
// credentials come from, or that none were found and where the SDK looked.
func (d *conn) Credentials(ctx context.Context) (string, error) {
	return awsdriver.CredentialSource(ctx, d.client.Options().Credentials)
}
