package dynamolease

import (
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// Description is what dynamolease's store is and needs (driver.Store),
// registered for leasehold check and help: its grants are IAMActions on
// the lease's table, for the lease's item and its probe item; a shard
// group's workers (Objects) need ObjectsGrant instead, on the group's
// table.
var Description = driver.Store{
	Scheme: Scheme,
	Name:   "Amazon DynamoDB",
	Judge:  lease.JudgedByContender,
	Holds:  "the table is there, with the key schema the lease needs, and is not an eventually consistent global table",
	Probe:  "four conditional PutItems (attribute_not_exists, nonce = version) on the probe item beside the lease (NAME" + driver.ProbeSuffix + "), never the lease itself",
	Grants: []driver.Grant{
		{Actions: IAMActions, Resource: "arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE", Why: "describe the table at Open, read and write the lease's item NAME"},
		{Actions: IAMProbeActions, Resource: "arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE (item NAME" + driver.ProbeSuffix + ")", Probe: true, Why: "check, before the first write, that the store enforces conditional writes; a dynamodb:LeadingKeys condition must list the probe item too"},
		ObjectsGrant,
	},
	Price: driver.Price{Service: "DynamoDB", Renew: "PutItem", Poll: "GetItem"},
}

// ObjectsGrant is what a shard group's workers need (Objects), on the
// group's table, beside nothing else: its leases', objects' and parts'
// items, and its leases' probe items. A dynamodb:LeadingKeys condition
// must list GROUP, GROUP#parts and GROUP.leasehold-probe for each group.
// It is among Description's grants as a shard group's (driver.Grant.Group):
// the terraform module aws-lease-iam grants it on dynamodb_shard_table_arn.
var ObjectsGrant = driver.Grant{
	Actions:  ObjectsIAMActions,
	Resource: "arn:aws:dynamodb:REGION:ACCOUNT:table/GROUPTABLE",
	Group:    true,
	Why:      "describe the group's table, read and write its leases and objects (GetItem, PutItem), list the group and read a large object's parts (Query), and delete the parts an object no longer has (DeleteItem); a dynamodb:LeadingKeys condition must list GROUP, GROUP#parts and GROUP" + driver.ProbeSuffix,
}

// IAMProbeActions are the actions Verify calls on the probe item
// (NAME.leasehold-probe, in the lease's table): a subset of IAMActions.
var IAMProbeActions = []string{"dynamodb:GetItem", "dynamodb:PutItem"}
