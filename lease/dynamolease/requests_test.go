package dynamolease_test

import (
	"fmt"
	"maps"
	"testing"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestRequestCounts counts the requests of each lease operation by DynamoDB
// operation: Open's DescribeTable, once per table as clients reach it
// (endpoint, region, access key), the store's check, four PutItems of the
// probe item once per process and table, then the lease's (see
// storetest.CountRequests): a renewal is one PutItem, a follower's poll one
// GetItem. They set the cost of a lease (see the package doc).
func TestRequestCounts(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		name := storetest.UniqueName("dynamodb-requests")
		leaderHTTP := storetest.NewCounter(nil, awstest.ByOperation)
		followerHTTP := storetest.NewCounter(nil, awstest.ByOperation)
		leaderClient := tg.NewClient(leaderHTTP)
		opens := []struct {
			what   string
			id     string
			client *ddb.Client
			name   string
			http   *storetest.Counter
			want   map[string]int
		}{
			{"the leader's Open", "leader", leaderClient, name, leaderHTTP, map[string]int{"DescribeTable": 1}},
			{"an Open of another lease through the leader's client", "leader", leaderClient, name + "-other", leaderHTTP, map[string]int{}},
			{"the follower's Open, through a client of its own to the same store", "follower", tg.NewClient(followerHTTP), name, followerHTTP, map[string]int{}},
		}
		leases := make([]lease.Lease, len(opens))
		for i, o := range opens {
			leases[i] = tg.Open(t, o.client, o.name, tg.options(o.id))
			if got := o.http.Take(); !maps.Equal(got, o.want) {
				t.Errorf("%s sent %v, want %v", o.what, got, o.want)
			}
		}
		if err := leases[0].(driver.Verifier).Verify(t.Context()); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if got, want := leaderHTTP.Take(), map[string]int{"PutItem": 4}; !maps.Equal(got, want) {
			t.Errorf("the store's check sent %v, want %v", got, want)
		}
		storetest.CountRequests(t, leases[0], leases[2], leaderHTTP, followerHTTP, "GetItem", "PutItem")
	})
}

// TestIAMActions: the actions the package doc and the terraform module
// grant are exactly the operations the driver sends (TestRequestCounts sees
// no others).
func TestIAMActions(t *testing.T) {
	want := []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem"}
	if fmt.Sprint(dynamolease.IAMActions) != fmt.Sprint(want) || dynamolease.DefaultKeyAttribute != "lease" {
		t.Errorf("IAMActions = %v, DefaultKeyAttribute = %q; want %v and \"lease\"", dynamolease.IAMActions, dynamolease.DefaultKeyAttribute, want)
	}
}
