package dynamolease_test

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/leasehold/leasehold/lease/internal/emulators/dynamoemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

// target is one DynamoDB-compatible store under test, with a table of the
// test's own.
type target struct{ *dynamoemu.Store }

// targets are the stores the integration tests run against: dynalite and
// moto from the local test stack, whose subtests skip, naming the
// variable, when it is not set, and a real account's when one is
// configured (see dynamoemu.Targets).
var targets = storetest.Wrap(dynamoemu.Targets(), func(d *dynamoemu.Store) *target { return &target{d} })

func TestMain(m *testing.M) { storetest.Main(m) }

// canCreateTables keeps the stores on which a test may create tables of
// its own: all but a real account's given table (LEASEHOLD_DYNAMODB_TABLE).
func canCreateTables(name string) bool {
	return name != "aws" || os.Getenv("LEASEHOLD_DYNAMODB_TABLE") == ""
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
