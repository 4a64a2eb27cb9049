package dynamolease_test

import (
	"bytes"
	"testing"
	"time"

	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// The fault tests run on dynalite, through a fault proxy.
func onDynalite(name string) bool { return name == "dynalite" }

// TestFaultAnswers: DynamoDB's answers to a table under strain or in
// conflict are lease.ErrUnavailable, retryable; a PutItem whose answer was
// lost or replaced by a 500 after DynamoDB applied it is resolved by
// reading back.
func TestFaultAnswers(t *testing.T) {
	targets.Run(t, onDynalite, func(t *testing.T, tg *target) {
		// The store is checked before the faults start, so that they
		// meet the lease's own requests, not the probe's.
		open := func(t *testing.T, endpoint, identity string) lease.Lease {
			l := tg.Open(t, dynamoemu.StaticClient(endpoint, "test")(nil), storetest.UniqueName("dynamodb-fault"), tg.options(identity))
			verify(t, l)
			return l
		}
		get, put := faultproxy.DynamoOp("GetItem"), faultproxy.DynamoOp("PutItem")
		faultproxy.CheckRefusals(t, tg.Endpoint, open, []faultproxy.Refusal{
			{Name: "GetItemThrottling", Rule: faultproxy.Rule{Match: get, Fault: faultproxy.Refuse(faultproxy.DynamoThrottling)}, Mention: "throttled"},
			{Name: "GetItemInternalServerError", Rule: faultproxy.Rule{Match: get, Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError)}, Mention: "InternalServerError"},
			{Name: "PutItemThrottling", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoThrottling)}, Mention: "throttled"},
			{Name: "PutItemTransactionConflict", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoTransactionConflict)}, Mention: "TransactionConflictException"},
			{Name: "PutItemReplicatedWriteConflict", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoReplicatedWriteConflict)}, Mention: "ReplicatedWriteConflictException"},
			{Name: "PutItemInternalServerError", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError)}, Mention: "InternalServerError"},
		})
		faultproxy.CheckLostAnswers(t, tg.Endpoint, open, put, faultproxy.DynamoInternalServerError)
	})
}

// TestConformanceThroughProxy runs the conformance suite through the fault
// proxy, which answers one applied PutItem in seven with a 500
// InternalServerError: the engine's read back resolves each.
func TestConformanceThroughProxy(t *testing.T) {
	targets.Run(t, onDynalite, func(t *testing.T, tg *target) {
		p := faultproxy.Start(t, tg.Endpoint)
		verify(t, tg.Open(t, dynamoemu.StaticClient(p.URL, "test")(nil), storetest.UniqueName("dynamodb-fault"), tg.options("checker")))
		rules := p.Add(faultproxy.Rule{Match: faultproxy.DynamoOp("PutItem"), Fault: faultproxy.Replace(faultproxy.DynamoInternalServerError), Every: 7})
		t.Cleanup(func() {
			t.Logf("PutItems applied whose answer was a 500: %d", p.Applied(rules[0]))
			if p.Applied(rules[0]) == 0 {
				t.Errorf("no answer was replaced: the suite did not meet the fault")
			}
		})
		h := tg.Harness(dynamoemu.StaticClient(p.URL, "test")(nil), tg.NewClient(nil))
		// The proxy is one more hop for each request of a suite that sends
		// many at once: 500ms was too short now and then under -race.
		h.CallTimeout = time.Second
		storetest.RunConformance(t, h)
	})
}

// verify has l check its store, as its first write would.
func verify(t *testing.T, l lease.Lease) {
	t.Helper()
	if err := l.(driver.Verifier).Verify(t.Context()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// TestObjectsCollectOrphanedParts: the parts of a Put whose part or head
// write failed, and a part whose delete failed, are deleted by the next
// successful Put of the same key, leaving only the parts the stored head
// names (none: it is stored in its item).
func TestObjectsCollectOrphanedParts(t *testing.T) {
	targets.Run(t, onDynalite, func(t *testing.T, tg *target) {
		for _, tc := range []struct {
			name string
			rule faultproxy.Rule
		}{
			// 1 MiB is 3 parts: the fourth PutItem is the head.
			{"PartRefused", faultproxy.Rule{Match: faultproxy.DynamoOp("PutItem"), Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError), Every: 2, Times: 1}},
			{"HeadRefused", faultproxy.Rule{Match: faultproxy.DynamoOp("PutItem"), Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError), Every: 4, Times: 1}},
			{"HeadAnswerLost", faultproxy.Rule{Match: faultproxy.DynamoOp("PutItem"), Fault: faultproxy.Replace(faultproxy.DynamoInternalServerError), Every: 4, Times: 1}},
			{"DeleteRefused", faultproxy.Rule{Match: faultproxy.DynamoOp("DeleteItem"), Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError), Times: 1}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				table := tg.groupTable(t)
				p := faultproxy.Start(t, tg.Endpoint)
				o := tg.objects(t, table, "g", dynamoemu.StaticClient(p.URL, "test")(nil))
				ctx := t.Context()
				v, err := o.Put(ctx, "g/big", bytes.Repeat([]byte{1}, 1<<20), "")
				if err != nil {
					t.Fatal(err)
				}
				rules := p.Add(tc.rule)
				_, _ = o.Put(ctx, "g/big", bytes.Repeat([]byte{2}, 1<<20), v)
				if p.Applied(rules[0]) != 1 {
					t.Fatalf("the fault was applied %d times; want 1", p.Applied(rules[0]))
				}
				if _, v, err = o.Get(ctx, "g/big", ""); err != nil {
					t.Fatal(err)
				}
				if _, err := o.Put(ctx, "g/big", []byte("small"), v); err != nil {
					t.Fatal(err)
				}
				out, err := tg.NewClient(nil).Scan(ctx, &ddb.ScanInput{TableName: &table})
				if err != nil {
					t.Fatal(err)
				}
				for _, item := range out.Items {
					if g := item[dynamolease.DefaultGroupAttribute].(*types.AttributeValueMemberS).Value; g != "g" {
						t.Errorf("a part is left in partition %q: %v", g, item[dynamolease.DefaultObjectKeyAttribute])
					}
				}
			})
		}
	})
}
