package dynamolease_test

import (
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
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
			l := tg.open(t, staticClient(endpoint, "test")(nil), storetest.UniqueName("dynamodb-fault"), tg.options(identity))
			verify(t, l)
			return l
		}
		get, put := faultproxy.DynamoOp("GetItem"), faultproxy.DynamoOp("PutItem")
		faultproxy.CheckRefusals(t, tg.endpoint, open, []faultproxy.Refusal{
			{Name: "GetItemThrottling", Rule: faultproxy.Rule{Match: get, Fault: faultproxy.Refuse(faultproxy.DynamoThrottling)}, Mention: "throttled"},
			{Name: "GetItemInternalServerError", Rule: faultproxy.Rule{Match: get, Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError)}, Mention: "InternalServerError"},
			{Name: "PutItemThrottling", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoThrottling)}, Mention: "throttled"},
			{Name: "PutItemTransactionConflict", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoTransactionConflict)}, Mention: "TransactionConflictException"},
			{Name: "PutItemReplicatedWriteConflict", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoReplicatedWriteConflict)}, Mention: "ReplicatedWriteConflictException"},
			{Name: "PutItemInternalServerError", Rule: faultproxy.Rule{Match: put, Fault: faultproxy.Refuse(faultproxy.DynamoInternalServerError)}, Mention: "InternalServerError"},
		})
		faultproxy.CheckLostAnswers(t, tg.endpoint, open, put, faultproxy.DynamoInternalServerError)
	})
}

// TestConformanceThroughProxy runs the conformance suite through the fault
// proxy, which answers one applied PutItem in seven with a 500
// InternalServerError: the engine's read back resolves each.
func TestConformanceThroughProxy(t *testing.T) {
	targets.Run(t, onDynalite, func(t *testing.T, tg *target) {
		p := faultproxy.Start(t, tg.endpoint)
		verify(t, tg.open(t, staticClient(p.URL, "test")(nil), storetest.UniqueName("dynamodb-fault"), tg.options("checker")))
		rules := p.Add(faultproxy.Rule{Match: faultproxy.DynamoOp("PutItem"), Fault: faultproxy.Replace(faultproxy.DynamoInternalServerError), Every: 7})
		t.Cleanup(func() {
			t.Logf("PutItems applied whose answer was a 500: %d", p.Applied(rules[0]))
			if p.Applied(rules[0]) == 0 {
				t.Errorf("no answer was replaced: the suite did not meet the fault")
			}
		})
		h := tg.harness(staticClient(p.URL, "test")(nil), tg.newClient(nil))
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
