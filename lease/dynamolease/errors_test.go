package dynamolease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

var testRecord = lease.Record{Holder: "worker-1", Token: 3, TTL: 15 * time.Second, Nonce: "0123456789abcdef"}

// storedItem is GetItem's answer holding testRecord.
const storedItem = `{"Item":{"lease":{"S":"jobs"},"leasehold":{"N":"1"},"holder":{"S":"worker-1"},"token":{"N":"3"},"ttl_ms":{"N":"15000"},"released":{"BOOL":false},"nonce":{"S":"0123456789abcdef"}}}`

// TestClassify checks the mapping of every DynamoDB answer the driver
// knows to the lease package's errors, call by call, and that each call is
// one request: the SDK's retries are off even for a client configured to
// retry.
func TestClassify(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name    string
		op      op
		answer  string // the answer's body; status 200 unless code is set
		status  int
		code    string // a DynamoDB error code to answer with, and for errors.As to find
		want    error  // nil: success
		mention string // in the message
	}{
		{"GetItem", opGet, storedItem, 200, "", nil, ""},
		{"GetNoItem", opGet, `{}`, 200, "", lease.ErrNoRecord, "dynamodb://leases/jobs: no item"},
		{"GetLegacyReplicatedItem", opGet, strings.Replace(storedItem, `"nonce"`, `"aws:rep:updatetime":{"N":"1767225600.123001"},"aws:rep:updateregion":{"S":"eu-west-1"},"aws:rep:deleting":{"BOOL":false},"nonce"`, 1), 200, "", lease.ErrUnsafeStore,
			`the item carries "aws:rep:deleting", an attribute of a legacy (2017.11.29) global table`},
		{"GetForeignItem", opGet, `{"Item":{"lease":{"S":"jobs"},"owner":{"S":"cron"}}}`, 200, "", lease.ErrCorrupt, `no "leasehold" attribute`},
		{"GetResourceNotFound", opGet, "", 400, "ResourceNotFoundException", lease.ErrNotFound, `table "leases" does not exist`},
		{"GetValidation", opGet, "", 400, "ValidationException", lease.ErrNotFound, `its key schema must be exactly one key, HASH "lease" of type S`},
		{"GetAccessDenied", opGet, "", 400, "AccessDeniedException", lease.ErrPermission, "[dynamodb:DescribeTable dynamodb:GetItem dynamodb:PutItem] on arn:aws:dynamodb:us-east-1:ACCOUNT:table/leases"},
		{"GetUnrecognizedClient", opGet, "", 400, "UnrecognizedClientException", lease.ErrPermission, "refused (UnrecognizedClientException)"},
		{"GetInvalidSignature", opGet, "", 400, "InvalidSignatureException", lease.ErrPermission, "dynamodb:GetItem"},
		{"GetSignatureExpired", opGet, "Signature expired: 20260101T000000Z is now earlier than 20260101T000500Z", 400, "InvalidSignatureException", lease.ErrUnavailable, "clock"},
		{"GetExpiredToken", opGet, "", 400, "ExpiredTokenException", lease.ErrPermission, "ExpiredTokenException"},
		{"GetForbidden", opGet, "", 403, "UnknownOperationException", lease.ErrPermission, "refused"},
		{"GetProvisionedThroughputExceeded", opGet, "", 400, "ProvisionedThroughputExceededException", lease.ErrUnavailable, "throttled"},
		{"GetThrottling", opGet, "", 400, "ThrottlingException", lease.ErrUnavailable, "throttled"},
		{"GetRequestLimitExceeded", opGet, "", 400, "RequestLimitExceeded", lease.ErrUnavailable, "throttled"},
		{"GetInternalServerError", opGet, "", 500, "InternalServerError", lease.ErrUnavailable, "dynamodb://leases/jobs"},
		{"GetServiceUnavailable", opGet, "", 503, "ServiceUnavailable", lease.ErrUnavailable, ""},
		{"GetBadGatewayHTML", opGet, "<html>bad gateway</html>", 502, "", lease.ErrUnavailable, ""},
		{"GetUnknownCode", opGet, "", 400, "SomethingNewException", lease.ErrUnavailable, ""},
		{"GetTransactionConflict", opGet, "", 400, "TransactionConflictException", lease.ErrUnavailable, ""},

		{"CreateOK", opCreate, `{}`, 200, "", nil, ""},
		{"CreateConditionFailed", opCreate, "", 400, "ConditionalCheckFailedException", driver.ErrConflict, "an item exists at the key"},
		{"CreateThrottled", opCreate, "", 400, "ProvisionedThroughputExceededException", lease.ErrUnavailable, "throttled"},
		{"CreateResourceNotFound", opCreate, "", 400, "ResourceNotFoundException", lease.ErrNotFound, `table "leases"`},
		{"CreateAccessDenied", opCreate, "", 400, "AccessDeniedException", lease.ErrPermission, "dynamodb:PutItem"},

		{"ReplaceOK", opReplace, `{}`, 200, "", nil, ""},
		{"ReplaceConditionFailed", opReplace, "", 400, "ConditionalCheckFailedException", driver.ErrConflict, "nonce is not the version expected"},
		{"ReplaceValidation", opReplace, "", 400, "ValidationException", lease.ErrNotFound, "key schema"},
		{"ReplaceInternalServerError", opReplace, "", 500, "InternalServerError", lease.ErrUnavailable, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			answer := jsonAnswer(row.status, row.answer)
			if row.code != "" {
				answer = ddbError(row.status, row.code, row.answer)
			}
			srv := fakeServer(t, leaseTable, answer)
			d := &conn{client: fakeClient(srv), table: "leases", name: "jobs", keyAttr: DefaultKeyAttribute}
			version, err := row.op.call(t, d)
			if row.want == nil {
				if err != nil || version != testRecord.Nonce {
					t.Errorf("%v: (%q, %v), want the version %q", row.op, version, err, testRecord.Nonce)
				}
			} else {
				awstest.CheckError(t, fmt.Sprintf("%v answered %d", row.op, row.status), err, row.want, row.mention, row.code)
			}
			ops, bodies := operations(t, srv)
			if len(ops) != 1 {
				t.Fatalf("%v sent %v, want exactly 1 request (SDK retries off)", row.op, ops)
			}
			checkRequest(t, row.op, ops[0], bodies[0])
		})
	}
}

// call makes the driver call o with testRecord, on the version
// "fedcba9876543210" for Replace, and returns the version it returns or
// reads. A record read must be testRecord.
func (o op) call(t *testing.T, d *conn) (string, error) {
	t.Helper()
	if o != opGet {
		write := map[op]func(context.Context, lease.Record) (string, error){
			opCreate: d.Create,
			opReplace: func(ctx context.Context, r lease.Record) (string, error) {
				return d.Replace(ctx, r, "fedcba9876543210")
			},
		}[o]
		return write(t.Context(), testRecord)
	}
	r, err := d.Get(t.Context())
	if want := testRecord; err == nil && (r.Holder != want.Holder || r.Token != want.Token || r.TTL != want.TTL || r.Released || r.Nonce != want.Nonce) {
		t.Errorf("Get: %+v, want %+v", r, want)
	}
	return r.Version, err
}

// checkRequest checks the operation and the parameters of the driver's
// request: the table, the key, a strongly consistent read, the write's
// condition.
func checkRequest(t *testing.T, o op, operation string, body map[string]any) {
	t.Helper()
	key := map[string]any{"lease": map[string]any{"S": "jobs"}}
	want := map[op]struct {
		operation string
		params    map[string]any
	}{
		opGet: {"GetItem", map[string]any{"TableName": "leases", "Key": key, "ConsistentRead": true}},
		opCreate: {"PutItem", map[string]any{"TableName": "leases", "ConditionExpression": "attribute_not_exists(#key)",
			"ExpressionAttributeNames": map[string]any{"#key": "lease"}}},
		opReplace: {"PutItem", map[string]any{"TableName": "leases", "ConditionExpression": "#version = :version",
			"ExpressionAttributeNames":  map[string]any{"#version": "nonce"},
			"ExpressionAttributeValues": map[string]any{":version": map[string]any{"S": "fedcba9876543210"}}}},
	}[o]
	if operation != want.operation {
		t.Errorf("%v sent %s, want %s", o, operation, want.operation)
	}
	for k, v := range want.params {
		if !reflect.DeepEqual(body[k], v) {
			t.Errorf("%v sent %s = %v, want %v", o, k, body[k], v)
		}
	}
	if o != opGet {
		item, _ := json.Marshal(body["Item"])
		wantItem := `{"holder":{"S":"worker-1"},"lease":{"S":"jobs"},"leasehold":{"N":"1"},"nonce":{"S":"0123456789abcdef"},"released":{"BOOL":false},"token":{"N":"3"},"ttl_ms":{"N":"15000"}}`
		if string(item) != wantItem {
			t.Errorf("%v sent the item %s, want %s", o, item, wantItem)
		}
	}
}

// globalTable is DescribeTable's answer for a lease table with replicas in
// regions, and the given MultiRegionConsistency ("" leaves it out, as
// DynamoDB does for tables made before the field existed).
func globalTable(consistency string, regions ...string) string {
	var replicas []string
	for _, r := range regions {
		replicas = append(replicas, `{"RegionName":"`+r+`","ReplicaStatus":"ACTIVE"}`)
	}
	mode := ""
	if consistency != "" {
		mode = `,"MultiRegionConsistency":"` + consistency + `"`
	}
	return strings.Replace(leaseTable.Body, `"TableStatus"`, `"GlobalTableVersion":"2019.11.21","Replicas":[`+strings.Join(replicas, ",")+`]`+mode+`,"TableStatus"`, 1)
}

// TestCheckTable: Open's DescribeTable, answer by answer: each is one
// request; a table that is missing, has another key schema or is going
// away is lease.ErrNotFound saying so, and a global table whose Regions
// are eventually consistent is lease.ErrUnsafeStore naming them.
func TestCheckTable(t *testing.T) {
	t.Parallel()
	hashLease := `[{"AttributeName":"lease","KeyType":"HASH"}]`
	lww := "last writer's item, so contenders in two Regions can both be elected"
	rows := []struct {
		name    string
		answer  func() (status int, body string, code string)
		want    error
		mention string
	}{
		{"Active", func() (int, string, string) { return 200, leaseTable.Body, "" }, nil, ""},
		{"Updating", func() (int, string, string) {
			return 200, described("UPDATING", hashLease, `[{"AttributeName":"lease","AttributeType":"S"}]`).Body, ""
		}, nil, ""},
		{"Creating", func() (int, string, string) {
			return 200, described("CREATING", hashLease, `[{"AttributeName":"lease","AttributeType":"S"}]`).Body, ""
		}, lease.ErrUnavailable, `table "leases" is still being created`},
		{"Deleting", func() (int, string, string) {
			return 200, described("DELETING", hashLease, `[{"AttributeName":"lease","AttributeType":"S"}]`).Body, ""
		}, lease.ErrNotFound, `table "leases" is DELETING, not ACTIVE`},
		{"OtherKeyName", func() (int, string, string) {
			return 200, described("ACTIVE", `[{"AttributeName":"id","KeyType":"HASH"}]`, `[{"AttributeName":"id","AttributeType":"S"}]`).Body, ""
		}, lease.ErrNotFound, `table "leases" has the key schema [HASH "id" of type S]; a lease table needs exactly one key, HASH "lease" of type S, and no sort (RANGE) key`},
		{"BinaryKey", func() (int, string, string) {
			return 200, described("ACTIVE", hashLease, `[{"AttributeName":"lease","AttributeType":"B"}]`).Body, ""
		}, lease.ErrNotFound, `[HASH "lease" of type B]`},
		{"SortKey", func() (int, string, string) {
			return 200, described("ACTIVE", `[{"AttributeName":"lease","KeyType":"HASH"},{"AttributeName":"at","KeyType":"RANGE"}]`,
				`[{"AttributeName":"lease","AttributeType":"S"},{"AttributeName":"at","AttributeType":"N"}]`).Body, ""
		}, lease.ErrNotFound, `[HASH "lease" of type S, RANGE "at" of type N]`},
		{"GlobalEventual", func() (int, string, string) { return 200, globalTable("EVENTUAL", "us-west-2", "eu-west-1"), "" },
			lease.ErrUnsafeStore, `table "leases" is a global table replicated in the Regions eu-west-1, us-east-1, us-west-2 with multi-Region eventual consistency (MultiRegionConsistency EVENTUAL)`},
		{"GlobalEventualReasons", func() (int, string, string) { return 200, globalTable("EVENTUAL", "us-west-2"), "" }, lease.ErrUnsafeStore, lww},
		{"GlobalConsistencyUnset", func() (int, string, string) { return 200, globalTable("", "us-east-1", "us-west-2"), "" },
			lease.ErrUnsafeStore, `in the Regions us-east-1, us-west-2 with multi-Region eventual consistency (MultiRegionConsistency unset, so EVENTUAL)`},
		{"GlobalStrong", func() (int, string, string) { return 200, globalTable("STRONG", "us-east-2", "us-west-2"), "" }, nil, ""},
		{"NoReplicasEventual", func() (int, string, string) { return 200, globalTable("EVENTUAL"), "" }, nil, ""},
		{"Missing", func() (int, string, string) { return 400, "", "ResourceNotFoundException" }, lease.ErrNotFound, `table "leases" does not exist`},
		{"AccessDenied", func() (int, string, string) { return 400, "", "AccessDeniedException" }, lease.ErrPermission, "dynamodb:DescribeTable"},
		{"Throttled", func() (int, string, string) { return 400, "", "ThrottlingException" }, lease.ErrUnavailable, "throttled"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			status, body, code := row.answer()
			answer := jsonAnswer(status, body)
			if code != "" {
				answer = ddbError(status, code, "")
			}
			srv := fakeServer(t, answer, ddbError(500, "InternalServerError", "not the test's request"))
			_, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(srv)}, lease.Options{Identity: "worker-1"})
			t.Logf("Open: %v", err)
			if row.want == nil && err != nil {
				t.Errorf("Open: %v, want a lease", err)
			}
			if row.want != nil && (!errors.Is(err, row.want) || !strings.Contains(err.Error(), row.mention)) {
				t.Errorf("Open: %v, want an error matching %v that says %q", err, row.want, row.mention)
			}
			if ops, _ := operations(t, srv); !reflect.DeepEqual(ops, []string{"DescribeTable"}) {
				t.Errorf("Open sent %v, want exactly one DescribeTable", ops)
			}
		})
	}
}

// TestTableCheckedOnce: a table is described once per store as clients
// reach it (endpoint, region, access key), however many leases are opened
// on it and through however many clients; a failed check is not
// remembered.
func TestTableCheckedOnce(t *testing.T) {
	t.Parallel()
	var describes atomic.Int32
	srv := storetest.NewServer(t, func(r *http.Request) storetest.Answer {
		if describes.Add(1) == 1 {
			return ddbError(400, "ThrottlingException", "")
		}
		return leaseTable
	})
	c := fakeClient(srv)
	opts := lease.Options{Identity: "worker-1"}
	if _, err := Open(t.Context(), Options{Table: "leases", Name: "a", Client: c}, opts); !errors.Is(err, lease.ErrUnavailable) {
		t.Fatalf("first Open, DescribeTable throttled: %v, want lease.ErrUnavailable", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := Open(t.Context(), Options{Table: "leases", Name: name, Client: c}, opts); err != nil {
			t.Fatalf("Open(%q): %v", name, err)
		}
	}
	if _, err := Open(t.Context(), Options{Table: "leases", Name: "a", Client: fakeClient(srv)}, opts); err != nil {
		t.Fatalf("Open with another client: %v", err)
	}
	if ops, _ := operations(t, srv); !reflect.DeepEqual(ops, []string{"DescribeTable", "DescribeTable"}) {
		t.Errorf("a failed Open, then three Opens through one client and one through another of the same store sent %v, want 2 DescribeTable", ops)
	}
}

// TestThrottled: a throttled table gets one request per call, since the
// SDK's retries are off, and the lease reports lease.ErrUnavailable,
// retryable, whether Open's DescribeTable or a later read is throttled.
func TestThrottled(t *testing.T) {
	t.Parallel()
	for _, code := range throttlingCodes {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			check := func(what string, err error) {
				t.Helper()
				awstest.CheckError(t, what, err, lease.ErrUnavailable, "throttled", code)
			}
			srv := fakeServer(t, ddbError(400, code, ""), ddbError(500, "InternalServerError", ""))
			_, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(srv)}, lease.Options{Identity: "worker-1"})
			check("Open", err)
			if ops, _ := operations(t, srv); !reflect.DeepEqual(ops, []string{"DescribeTable"}) {
				t.Errorf("Open sent %v, want exactly one DescribeTable", ops)
			}

			srv = fakeServer(t, leaseTable, ddbError(400, code, ""))
			l, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(srv)}, lease.Options{Identity: "worker-1"})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			_, err = l.Observe(t.Context())
			check("Observe", err)
			_, err = l.Acquire(t.Context())
			check("Acquire", err)
			if ops, _ := operations(t, srv); !reflect.DeepEqual(ops, []string{"DescribeTable", "GetItem", "GetItem"}) {
				t.Errorf("Open, Observe and Acquire sent %v, want DescribeTable, then one GetItem each", ops)
			}
		})
	}
}

// TestClassifyContextErrors: when the call's context ends, its error comes
// back unwrapped, for the engine to tell a caller's cancellation from its
// own CallTimeout; Open's too.
func TestClassifyContextErrors(t *testing.T) {
	t.Parallel()
	storetest.ContextErrors(t, func(endpoint string) map[string]func(context.Context) error {
		c := ddb.New(ddb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		d := &conn{client: c, table: "leases", name: "jobs", keyAttr: DefaultKeyAttribute}
		return map[string]func(context.Context) error{
			"Get":     func(ctx context.Context) error { _, err := d.Get(ctx); return err },
			"Replace": func(ctx context.Context) error { _, err := d.Replace(ctx, testRecord, "fedcba9876543210"); return err },
			"Open": func(ctx context.Context) error {
				_, err := Open(ctx, Options{Table: "leases", Name: "jobs", Client: c}, lease.Options{Identity: "worker-1", TTL: time.Minute})
				return err
			},
		}
	})
}
