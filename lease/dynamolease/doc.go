// Package dynamolease is a lease backend on one Amazon DynamoDB item, written
// only with DynamoDB's conditional writes: a driver of the compare-and-swap
// engine in package lease/driver (driver.NewCAS), so it has that engine's
// guarantees. At most one contender holds the lease at a time, assuming
// only that clocks tick at nearly the same rate: a contender takes a held
// lease over only after it has seen the same version, unchanged, for the
// holder's whole TTL on its own monotonic clock, and only by a write
// conditional on that version. Every write carries a fresh nonce, which is
// the item's version, so every write changes the version, and every
// acquisition writes a fencing token greater than all earlier ones.
//
// It does not guarantee anything if something other than leasehold writes
// or deletes the item, nor if DynamoDB's time to live is allowed to delete
// it (see The table).
//
// # Requests
//
// Open sends one DescribeTable to check the table (once per table as
// clients reach it: endpoint, region and access key); a read describes it
// again when that check is over a minute old, so that a replica added to
// a table in use is seen. A read is one strongly consistent GetItem.
// Acquiring a free lease is that read and one PutItem conditional on
// attribute_not_exists(<key>); a renewal, a release and a takeover are one
// PutItem conditional on "nonce = <version>" (a takeover after the reads
// that judged expiry). A write whose outcome is unknown (a timeout, a lost
// response, a failed condition) is followed by one GetItem that resolves
// it; the driver does not ask for the old item with a failed condition
// (ReturnValuesOnConditionCheckFailure), which dynalite ignores anyway. The
// first write of a process to a table comes after the store's check: four
// PutItems of the probe item, or three and a GetItem once it exists (see
// below). The SDK's own retries are off: each call is one request, bounded
// by lease.Options.CallTimeout, and the caller (the runner) retries.
//
// # What it stores
//
// One item per lease, keyed by the lease's name, with these attributes
// (here for a lease called "jobs/nightly" with the default KeyAttribute):
//
//	lease      S     "jobs/nightly"       the key: the lease's name
//	leasehold  N     1                    format marker (driver.FormatVersion)
//	holder     S     "worker-1"           the holder's identity
//	token      N     7                    the fencing token
//	ttl_ms     N     15000                the holder's TTL, in milliseconds
//	released   BOOL  false                whether the holder gave the lease up
//	nonce      S     "4f1c9a0b7e22d3c5;renew=5625"
//	                                      fresh with every write (the version),
//	                                      then the holder's renew interval in ms
//	annotations M    {"runner/period": {"S": "2026-11-23T10:00:00Z"},
//	                  "runner/period-done": {"S": "1"}}
//	                                      lease.Annotations, if any (here the
//	                                      runner's, once a scheduled job ran)
//
// The item's version (lease.Record.Version, lease.Term.Version) is its
// stored nonce: 16 random hex digits that every write makes afresh, and
// attributes after them, so every write changes it, and Replace is
// conditional on it. The runner's annotations are mirrored into the
// nonce, "4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625"
// (see driver.EncodeNonce), for versions before annotations, which read
// them there; items of every form this and earlier versions write are in
// testdata/rule11, each read by the other version's decoder. There is no other version
// attribute. Anyone allowed to read the table can see who leads with:
//
//	aws dynamodb get-item --table-name leases --key '{"lease":{"S":"jobs/nightly"}}' --consistent-read
//
// An item at the key that is not such a record (no "leasehold" marker or
// another format, an attribute of the record missing, of another type or
// unparsable) is reported as lease.ErrCorrupt, saying which, and is never
// overwritten. Other attributes are read past: those a later version of
// leasehold adds beside leasehold=1, so that a fleet in a rolling upgrade
// reads each other's records. An item carrying the aws:rep:* attributes
// that legacy (2017.11.29) global tables add to every item is refused
// with lease.ErrUnsafeStore, naming the attribute (see The table).
//
// Never delete the item, not even to reset a lease: the fencing token
// lives in it, and a new item would start the tokens again at 1 in any
// process started afterwards, so a downstream system could accept a
// deposed leader's writes. To hand the lease over, release it. The item is
// about 150 bytes. If it is deleted all the same, the holder's next
// renewal finds it gone and reports lease.ErrLost (the runner cancels the
// task), and running contenders continue the count from the highest token
// they have seen.
//
// # The table
//
// The table must exist; Open never creates one. Its key schema must be a
// single partition (HASH) key of type S named KeyAttribute (default
// DefaultKeyAttribute, "lease"), with no sort (RANGE) key. Open checks this
// with DescribeTable and reports a missing table, or any other key schema,
// as lease.ErrNotFound saying what it found and what it wants:
//
//	aws dynamodb create-table --table-name leases \
//	  --attribute-definitions AttributeName=lease,AttributeType=S \
//	  --key-schema AttributeName=lease,KeyType=HASH \
//	  --billing-mode PAY_PER_REQUEST
//
// A global table is accepted only in multi-Region strong consistency
// (MRSC, MultiRegionConsistency STRONG). One with replicas in multi-Region
// eventual consistency (EVENTUAL, the default, also when DescribeTable
// leaves the field out) is refused with lease.ErrUnsafeStore, naming the
// table and its Regions: each Region checks a write's condition against
// its own copy and replication keeps the last writer's item, so contenders
// in two Regions could both be elected. DescribeTable does not show the
// replicas of a legacy (2017.11.29) global table, which settle conflicts
// the same way; its items carry aws:rep:* attributes, and reading one is
// refused with lease.ErrUnsafeStore, naming the attribute.
//
// # The store is checked before the first write
//
// DynamoDB always enforces condition expressions; a DynamoDB-compatible
// endpoint (a mock, a gateway, a partial emulator) may answer 200 and
// ignore them. So before a process first writes to a table, the lease
// checks the store (Verify, with driver.Probe) on a probe item beside the
// lease's, NAME.leasehold-probe in the same table, never on the lease's
// own: a PutItem with attribute_not_exists twice (or a GetItem when the
// probe item exists), then a PutItem conditional on its nonce, and again
// on that nonce, now stale. An endpoint that applies a write it must
// refuse, in two checks one after the other, is refused with
// lease.ErrUnsafeStore, not retryable, naming the step, and nothing is
// written to the lease. Four PutItems per process and table (three and a
// GetItem once the probe item exists); the verdict is kept for the life of
// the process. A name is at most 2032 bytes, so
// that the probe item's fits the 2048 of a partition key, and does not end
// with .leasehold-probe, which would make it another lease's probe item;
// the check writes over no item but a probe item (lease.ErrInvalid, naming
// it, otherwise).
//
// On-demand billing (PAY_PER_REQUEST) is advised: a lease makes a steady
// trickle of requests, and provisioned capacity that throttles a renewal
// can cost the leader its lease. Throttling is reported as
// lease.ErrUnavailable, which the runner retries within its deadline.
//
// Do not enable DynamoDB's time to live on the table, on any attribute (in
// particular not on ttl_ms, whose milliseconds DynamoDB would read as a date
// in 1970): TTL deletes items, a deleted lease item restarts its fencing
// tokens at 1, and DynamoDB deletes expired items at a time of its choosing,
// which no contender can observe. A lease's expiry is judged by the
// contenders, never by the table. Other items may share the table, as long
// as none is keyed by a lease's name.
//
// # Permissions
//
// The driver calls three actions, listed in IAMActions, on the lease's
// table only:
//
//	{
//	  "Effect": "Allow",
//	  "Action": ["dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:PutItem"],
//	  "Resource": "arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE"
//	}
//
// A lease never calls dynamodb:UpdateItem, DeleteItem, Query or Scan (a
// shard group does: see Shard groups). To confine
// a role to some leases of a shared table, add a condition on the items'
// keys:
//
//	"Condition": {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["jobs/nightly", "jobs/nightly.leasehold-probe"]}}
//
// listing each lease's probe item (NAME.leasehold-probe), where the store's
// check calls IAMProbeActions before the first write. Description lists
// these grants for leasehold check and help. Refused credentials are reported as lease.ErrPermission naming the table
// and these actions.
//
// # Shard groups
//
// Objects (NewObjects) is package shard's Store on DynamoDB, in a table of
// its own whose partition (HASH) key is the group's name and sort (RANGE)
// key an item's key in the group, both S (default names "group" and "key";
// terraform/modules/aws-dynamodb-lease creates it with shard_table_name):
//
//	aws dynamodb create-table --table-name shards \
//	  --attribute-definitions AttributeName=group,AttributeType=S AttributeName=key,AttributeType=S \
//	  --key-schema AttributeName=group,KeyType=HASH AttributeName=key,KeyType=RANGE \
//	  --billing-mode PAY_PER_REQUEST
//
// By URL, shard.OpenStore and leasehold run --shards name a group
// dynamodb://TABLE/GROUP ("dynamodb://shards/orders?region=eu-west-1"),
// with URLParams' AWS parameters and the keys' names in group_attribute
// and key_attribute (GroupURLParams).
//
// Why a table of its own: the group's assigner lists the group three times
// per renew interval. In this table a listing is one strongly consistent
// Query of the group's partition (1 MB a page), charged for the group's
// items alone; in the lease table, keyed by name only, it would be a Scan
// of the whole table, charged for every item of every lease and group in
// it. The group's items are small: a worker's lease (about 200 bytes), its
// acknowledgement, the assigner's lease and the assignment's head (at most
// 3 KiB; a larger assignment, beyond about 400 shards, goes in parts of
// 350,000 bytes in partition GROUP#parts, written before the head that
// names them and keyed by its version, so a reader never mixes two writes;
// the parts a failed write leaves behind are deleted by the writer's next
// successful write of that object, once no head can name them).
// So a listing of M workers reads about 400·M bytes: one read unit per ten
// workers, a hundred units (one request) for 1,000; and a worker's
// steady-state read of the assignment is one GetItem of the head, one read
// unit, whatever N is (DynamoDB has no conditional read: the head is
// small instead). The leases' probe items go in partition
// GROUP.leasehold-probe. Objects calls ObjectsIAMActions on the table
// (ObjectsGrant, Description's shard group grant, which leasehold help
// lists; terraform/modules/aws-lease-iam grants it with
// dynamodb_shard_table_arn, limited to the groups' partitions with
// dynamodb_shard_groups). An item of a group's partition that Objects did
// not write (no "nonce" attribute of type S: another tool's, a person's
// note) is left out of its listings, and costs the group nothing.
//
// # Configuration
//
// In Go, Open takes the table, the lease's name, the key attribute and,
// optionally, a *dynamodb.Client of package
// github.com/aws/aws-sdk-go-v2/service/dynamodb; without one it builds a
// client from the default AWS configuration chain (environment, shared
// config files, ECS task role, EC2 instance role). By URL, with OpenURL (lease.Open opens the URLs
// of every backend the program imports):
//
//	l, err := dynamolease.OpenURL(ctx, "dynamodb://leases/jobs/nightly?region=eu-west-1", lease.Options{Identity: lease.DefaultIdentity()})
//
// The URL's host is the table and its path the lease's name. Its query
// parameters (see URLParams) are key_attribute and those of gocloud.dev's
// AWS URLs that configure the client: region, endpoint,
// hostname_immutable, profile, role, anonymous, dualstack and fips. Any
// other parameter is rejected with lease.ErrInvalid naming it.
//
// To use LocalStack, dynalite or another DynamoDB-compatible store, either
// set the SDK's standard variable, which Open and URLs honour when no
// endpoint is given:
//
//	AWS_ENDPOINT_URL_DYNAMODB=http://localhost:4566   # or AWS_ENDPOINT_URL
//
// or name the endpoint in the URL:
//
//	dynamodb://leases/jobs/nightly?region=us-east-1&endpoint=http://127.0.0.1:8000
//
// dynalite (4.0.0) and moto (5.2.1, LocalStack's engine) implement all the
// driver needs; the conformance suite runs against both.
//
// # Cost
//
// At the defaults (TTL 15s; the runner renews every RenewInterval = 3/8 of
// the TTL = 5.625s, and a follower reads twice per renewal, just after it
// and once between), a leader makes about 640 writes an hour and each
// follower about 1,280 strongly consistent reads an hour. The item is well under 1 KB, so
// a write is one write request unit and a strongly consistent read one
// read request unit; a write whose condition fails is charged too. At
// on-demand list prices in us-east-1 ($0.625 per million write request
// units, $0.125 per million read request units; AWS DynamoDB pricing page,
// as of 2026) that is about $0.0004 an hour ($0.29 a month) for the leader
// and about $0.00016 an hour ($0.12 a month) for each follower.
// DescribeTable is not charged, and storage of one small item is
// negligible. A longer TTL costs proportionally less.
package dynamolease
