package dynamolease

import (
	"context"

	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/internal/awsdriver"
)

// storeID names the table as this client reaches it: endpoint, region,
// table and the credentials' access key.
func (d *conn) storeID(ctx context.Context) string {
	o := d.client.Options()
	return awsdriver.StoreID(ctx, "dynamodb", o.BaseEndpoint, o.Region, o.Credentials, d.table)
}

// Verify implements driver.Verifier. Before a contender first writes to
// the lease, it checks that the store refuses conditional writes whose
// condition fails, on the probe item (NAME.leasehold-probe, in the lease's
// table), never on the lease's own, with driver.Probe: a PutItem with
// attribute_not_exists twice (or a GetItem of the probe item when it
// exists), then a PutItem conditional on its nonce, and again on that
// nonce, now stale. DynamoDB always enforces condition expressions; a
// DynamoDB-compatible endpoint that applies a write it must refuse (a
// mock, a gateway, a partial emulator), twice in a row, is reported as
// lease.ErrUnsafeStore, naming the write. The verdict is kept for the life
// of the process per table as this client reaches it (endpoint, region,
// access key).
func (d *conn) Verify(ctx context.Context) error {
	probe := *d
	probe.name = d.name + driver.ProbeSuffix
	return driver.VerifyStore(ctx, d.storeID(ctx), driver.Probe{
		Key:         &probe,
		Name:        "dynamodb: " + probe.url(),
		Create:      "a PutItem with ConditionExpression attribute_not_exists(key)",
		Replace:     "a PutItem with ConditionExpression nonce = :version",
		Remedy:      "use DynamoDB itself, or an endpoint that enforces ConditionExpression, refusing it with ConditionalCheckFailedException",
		CallTimeout: d.callTimeout,
	})
}
