package dynamolease

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestReplicaAddedLaterIsSeen: a replica added to the table after Open
// checked it is seen by the lease's next read once the check is older
// than tableRecheck, and refused with lease.ErrUnsafeStore. Not parallel:
// it shortens tableRecheck.
func TestReplicaAddedLaterIsSeen(t *testing.T) {
	defer func(d time.Duration) { tableRecheck = d }(tableRecheck)
	tableRecheck = 0
	srv, replicated := replicaServer(t)
	l, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: fakeClient(srv)}, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatalf("Open of a table without replicas: %v", err)
	}
	replicated.Store(true)
	_, err = l.Observe(t.Context())
	awstest.CheckError(t, "a read after a replica was added", err, lease.ErrUnsafeStore, "replicated in the Regions eu-west-1, us-east-1", "")
}

// TestFailedTableCheckIsNotRepeatedByARead: an Open whose table check
// failed leaves no lease behind, so a later read on the same table (a
// conn made without Open, or a test server that reuses the port of one
// whose check failed) sends only its GetItem, not a DescribeTable of its
// own. CI once failed TestClassify on that port reuse.
func TestFailedTableCheckIsNotRepeatedByARead(t *testing.T) {
	t.Parallel()
	srv := fakeServer(t, jsonAnswer(200, `{"Table":{"TableStatus":"DELETING"}}`), jsonAnswer(200, storedItem))
	d := &conn{client: fakeClient(srv), table: "leases", name: "jobs", keyAttr: DefaultKeyAttribute, callTimeout: 5 * time.Second}
	if err := d.checkTable(t.Context(), false); !errors.Is(err, lease.ErrNotFound) {
		t.Fatalf("the check of a table being deleted: %v, want lease.ErrNotFound", err)
	}
	if _, err := d.Get(t.Context()); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if ops, _ := operations(t, srv); len(ops) != 2 || ops[1] != "GetItem" {
		t.Errorf("a failed check then a Get sent %v, want [DescribeTable GetItem]", ops)
	}
}

// replicaServer is a fake DynamoDB whose table of leases, empty, is
// replicated with eventual consistency once *replicated is set.
func replicaServer(t *testing.T) (*storetest.Server, *atomic.Bool) {
	var replicated atomic.Bool
	return storetest.NewServer(t, func(r *http.Request) storetest.Answer {
		switch {
		case awstest.ByOperation(r) != "DescribeTable":
			return jsonAnswer(200, `{}`)
		case replicated.Load():
			return jsonAnswer(200, globalTable("EVENTUAL", "eu-west-1"))
		}
		return leaseTable
	}), &replicated
}

// TestRedTeam18ReplicaSeenAfterCredentialsRotate: the table's checks are
// kept per table as the client reaches it, its access key included, and a
// read re-described only a table whose check had passed under the key
// the read's client holds now. Credentials that rotate (an ECS task
// role's, STS's: the default chain's) change the key, and after the
// first rotation no read described the table again: a replica added to
// it later was never seen, and the lease ran on a table whose Regions
// resolve conflicts last-writer-wins (rule 9; red team 18). Not
// parallel: it shortens tableRecheck.
func TestRedTeam18ReplicaSeenAfterCredentialsRotate(t *testing.T) {
	defer func(d time.Duration) { tableRecheck = d }(tableRecheck)
	tableRecheck = 0
	srv, replicated := replicaServer(t)
	var keys atomic.Int64
	client := ddb.New(ddb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		// A new key at every retrieval, each expired at once.
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: fmt.Sprintf("ASIA%d", keys.Add(1)), SecretAccessKey: "s", CanExpire: true, Expires: time.Now()}, nil
		}),
	})
	l, err := Open(t.Context(), Options{Table: "leases", Name: "jobs", Client: client}, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatalf("Open of a table without replicas: %v", err)
	}
	replicated.Store(true)
	_, err = l.Observe(t.Context())
	awstest.CheckError(t, "a read after the credentials rotated and a replica was added", err, lease.ErrUnsafeStore, "replicated in the Regions eu-west-1, us-east-1", "")
}
