package dynamolease_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestVerifyProbes: on a store that enforces condition expressions, the
// lease's check passes, and it did write its probe item, beside the
// lease's, which it left alone.
func TestVerifyProbes(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		name := storetest.UniqueName("dynamodb-verify")
		tg.Track(name + driver.ProbeSuffix)
		l := tg.Open(t, c, name, tg.options("worker-1"))
		if err := l.(driver.Verifier).Verify(t.Context()); err != nil {
			t.Fatalf("Verify: %v, want nil", err)
		}
		probe := tg.Get(t, c, name+driver.ProbeSuffix)
		t.Logf("probe item: %s", show(probe))
		if h, _ := probe["holder"].(*types.AttributeValueMemberS); h == nil || h.Value != driver.ProbeHolder {
			t.Errorf("probe item %s, want one held by %q", show(probe), driver.ProbeHolder)
		}
		out, err := c.GetItem(t.Context(), &ddb.GetItemInput{TableName: &tg.Table, Key: dynamoemu.Key(name), ConsistentRead: aws.Bool(true)})
		if err != nil || len(out.Item) != 0 {
			t.Errorf("GetItem of the lease: %v, %s; want no item: the check writes only its probe item", err, show(out.Item))
		}
	})
}

// TestLegacyGlobalTableItemRefused: an item carrying the attributes a
// legacy (2017.11.29) global table adds (aws:rep:*) comes from a table
// that settles conflicts last-writer-wins: reading it is refused with
// lease.ErrUnsafeStore, naming the attribute, and it is never taken over.
func TestLegacyGlobalTableItemRefused(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.NewClient(nil)
		name := storetest.UniqueName("dynamodb-legacy-global")
		item := dynamolease.ValidItem(dynamolease.DefaultKeyAttribute, name, map[string]types.AttributeValue{
			"aws:rep:updateregion": s("eu-west-1"), "aws:rep:updatetime": n("1767225600.123001"),
			"released": &types.AttributeValueMemberBOOL{Value: true},
		})
		if err := tg.Put(t.Context(), c, item); err != nil {
			t.Fatalf("PutItem: %v", err)
		}
		l := tg.Open(t, c, name, tg.options("worker-1"))
		_, err := l.Acquire(t.Context())
		if !errors.Is(err, lease.ErrUnsafeStore) || lease.Retryable(err) || !strings.Contains(err.Error(), `"aws:rep:updateregion"`) {
			t.Errorf("Acquire of an item of a legacy global table: %v, want lease.ErrUnsafeStore, not retryable, naming aws:rep:updateregion", err)
		}
		if got := tg.Get(t, c, name); show(got) != show(item) {
			t.Errorf("the item is now %s, want it untouched: %s", show(got), show(item))
		}
	})
}
