package dynamolease_test

import (
	"context"
	"testing"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// TestConformance runs the conformance suite on each store, one item per
// lease in the target's table.
func TestConformance(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		c := tg.newClient(nil)
		storetest.RunConformance(t, tg.harness(c, c))
	})
}

// harness is the suite's harness on the target: leases opened through c,
// foreign items written and items deleted through direct.
func (tg *target) harness(c, direct *ddb.Client) *storetest.Harness {
	return &storetest.Harness{
		CallTimeout: tg.callTimeout,
		TTL:         tg.ttl,
		OpenLease: func(ctx context.Context, name string, opts lease.Options) (lease.Lease, error) {
			tg.track(name)
			return dynamolease.Open(ctx, dynamolease.Options{Table: tg.table, Name: name, Client: c}, opts)
		},
		// What another tool might keep at the key: a lock of its own, with
		// no format marker, a token that is not a number and no nonce.
		Foreign: func(ctx context.Context, name string) error {
			return tg.put(ctx, direct, map[string]types.AttributeValue{
				dynamolease.DefaultKeyAttribute: s(name), "holder": s("another-tool"), "token": s("banana"),
			})
		},
		Remove: func(ctx context.Context, name string) error {
			_, err := direct.DeleteItem(ctx, &ddb.DeleteItemInput{TableName: &tg.table, Key: key(name)})
			return err
		},
	}
}
