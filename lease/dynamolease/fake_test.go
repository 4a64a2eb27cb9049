package dynamolease

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// jsonAnswer is a DynamoDB answer with a JSON body.
func jsonAnswer(status int, body string) storetest.Answer {
	return storetest.Answer{Status: status, Body: body, Headers: map[string]string{"Content-Type": "application/x-amz-json-1.0"}}
}

// ddbError is a DynamoDB error answer: HTTP 400 unless status says
// otherwise.
func ddbError(status int, code, message string) storetest.Answer {
	if message == "" {
		message = "canned " + code
	}
	return jsonAnswer(status, `{"__type":"com.amazonaws.dynamodb.v20120810#`+code+`","message":"`+message+`"}`)
}

// described is DescribeTable's answer for a table named leases with the
// given key schema and attribute definitions (JSON arrays).
func described(status, keySchema, attrs string) storetest.Answer {
	return jsonAnswer(200, `{"Table":{"TableName":"leases","TableStatus":"`+status+`","KeySchema":`+keySchema+`,"AttributeDefinitions":`+attrs+`}}`)
}

// leaseTable is DescribeTable's answer for a table with the default key
// schema.
var leaseTable = described("ACTIVE", `[{"AttributeName":"lease","KeyType":"HASH"}]`, `[{"AttributeName":"lease","AttributeType":"S"}]`)

// fakeServer is a fake DynamoDB that answers DescribeTable with
// describe, and every other operation with answer.
func fakeServer(t *testing.T, describe, answer storetest.Answer) *storetest.Server {
	t.Helper()
	return storetest.NewServer(t, func(r *http.Request) storetest.Answer {
		if awstest.ByOperation(r) == "DescribeTable" {
			return describe
		}
		return answer
	})
}

// fakeClient returns a client of srv whose own configuration would retry
// up to 5 times.
func fakeClient(srv *storetest.Server) *ddb.Client {
	return ddb.New(ddb.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 5,
	})
}

// operations returns the operations of the requests srv received, and
// their JSON bodies.
func operations(t *testing.T, srv *storetest.Server) (ops []string, bodies []map[string]any) {
	t.Helper()
	for _, r := range srv.Requests() {
		ops = append(ops, awstest.ByOperation(r))
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s request body %q is not JSON: %v", awstest.ByOperation(r), b, err)
		}
		bodies = append(bodies, body)
	}
	return ops, bodies
}

// ignoringTable is a fake DynamoDB-compatible endpoint holding one lease
// table in memory that answers 200 to every PutItem and ignores its
// ConditionExpression (a mock, a gateway, a partial emulator), and counts
// the PutItems of each item.
type ignoringTable struct {
	*storetest.Server
	mu    sync.Mutex
	items map[string]json.RawMessage
	puts  map[string]int
}

func newIgnoringTable(t *testing.T) *ignoringTable {
	t.Helper()
	f := &ignoringTable{items: map[string]json.RawMessage{}, puts: map[string]int{}}
	f.Server = storetest.NewServer(t, f.route)
	return f
}

func (f *ignoringTable) route(r *http.Request) storetest.Answer {
	var in struct {
		Item, Key map[string]json.RawMessage
	}
	_ = json.NewDecoder(r.Body).Decode(&in)
	name := func(attrs map[string]json.RawMessage) string {
		var s struct{ S string }
		_ = json.Unmarshal(attrs[DefaultKeyAttribute], &s)
		return s.S
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch awstest.ByOperation(r) {
	case "DescribeTable":
		return leaseTable
	case "PutItem":
		item, _ := json.Marshal(in.Item)
		f.items[name(in.Item)] = item
		f.puts[name(in.Item)]++
		return jsonAnswer(200, `{}`)
	case "GetItem":
		if item, ok := f.items[name(in.Key)]; ok {
			return jsonAnswer(200, `{"Item":`+string(item)+`}`)
		}
		return jsonAnswer(200, `{}`)
	}
	return ddbError(400, "UnknownOperationException", "")
}

// writes returns the number of PutItems of the item called name.
func (f *ignoringTable) writes(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts[name]
}
