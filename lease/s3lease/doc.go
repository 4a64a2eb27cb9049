// Package s3lease is a lease backend on one Amazon S3 object, written only
// with S3's conditional writes: a driver of the compare-and-swap engine in
// package lease/driver (driver.NewCAS), so it has that engine's guarantees. At most
// one contender holds the lease at a time, assuming only that clocks tick
// at nearly the same rate: a contender takes a held lease over only after
// it has seen the same ETag, unchanged, for the holder's whole TTL on its
// own monotonic clock, and only by a write conditional on that ETag. Every
// write carries a fresh nonce, so every write changes the ETag, and every
// acquisition writes a fencing token greater than all earlier ones.
//
// It does not guarantee anything if something other than leasehold writes
// or deletes the object.
//
// # The store is checked before the first write
//
// Every guarantee rests on the store refusing a conditional write whose
// condition fails. Some S3-compatible stores accept If-None-Match and
// If-Match on PutObject and ignore them (older MinIO and SeaweedFS
// releases; Google Cloud Storage's XML API applies them to reads only): on
// such a store contenders that start together all create the lease and all
// lead, with every request answered 200. So before a process first writes
// to a bucket (the first write that could make it leader), the lease
// checks the store (Verify), on a probe object next to the lease's,
// KEY.leasehold-probe, never on the lease's own object (driver.Probe):
//
//  1. PutObject If-None-Match: * creates the probe object (or is refused
//     with 412, as the object exists, and a GetObject reads its ETag);
//  2. PutObject If-None-Match: * again must be refused with 412;
//  3. PutObject If-Match on the ETag replaces the object;
//  4. PutObject If-Match on that ETag, now stale, must be refused with 412.
//
// A store that applies step 2 or 4 is checked once more (a conforming
// store looks the same when a lifecycle rule deletes the probe object
// between two steps), and then refused: Acquire returns
// lease.ErrUnsafeStore, not retryable, naming the step and the write the
// store applied, and nothing is written to the lease. The verdict is kept
// for the life of the process per store, as the client reaches it
// (endpoint, region, addressing, bucket, access key): four PUT requests
// per process and bucket, whatever the number of leases and contenders in
// it. A check that could not finish (throttling, refused credentials, a
// timeout) is not kept, and the next write checks again. A key is at most
// 1008 bytes, so that its probe object's key fits S3's 1024, and does not
// end with .leasehold-probe, which would make it another lease's probe
// object. The check writes over nothing but a probe object: when the
// probe key holds a lease record all the same (one an older leasehold
// wrote there), Acquire returns lease.ErrInvalid naming it, and writes
// nothing.
// A lease opened by s3lease implements driver.Verifier, so a tool can run
// the check without acquiring anything.
//
// What the check cannot catch: a store that checks conditions but not
// atomically, so that two writes racing past the same check both land.
// One write at a time, it looks like a store that keeps its promises.
// A store that rejects conditional writes outright (501 NotImplemented) is
// reported as lease.ErrNotFound.
//
// # Requests
//
// A read is one GetObject of the record and its ETag. Acquiring a free
// lease is that read and one PutObject with If-None-Match: *; a renewal,
// a release and a takeover are one PutObject with If-Match: <ETag> (a
// takeover after the reads that judged expiry). A write whose outcome is
// unknown (a timeout, a lost response, a failed condition) is followed by
// one GetObject that resolves it. The first write of a process to a bucket
// comes after the store's check: four PutObject requests of the probe
// object, or three and a GetObject once the probe object exists. The SDK's
// own retries are off: each call is one request, bounded by
// lease.Options.CallTimeout, and the caller (the runner) retries.
//
// # What it stores
//
// The object holds one line of JSON, content type application/json:
//
//	{"leasehold":1,"holder":"worker-1","token":7,"ttl_ms":15000,"released":false,"nonce":"4f1c9a0b7e22d3c5;renew=5625"}
//
// The nonce is fresh with every write, followed by the holder's renew
// interval in milliseconds. A record with annotations (lease.Annotations:
// here the runner's, once a scheduled job has run under the lease) holds
// them in an "annotations" object, and mirrors the runner's into the nonce
// for versions before annotations, which read them there (see
// driver.EncodeNonce):
//
//	{"leasehold":1,"holder":"worker-1","token":8,"ttl_ms":15000,"released":true,"nonce":"4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1;renew=5625","annotations":{"runner/period":"2026-11-23T10:00:00Z","runner/period-done":"1"}}
//
// Records of every stored form this and earlier versions write are in
// lease/driver/testdata/rule11, each read by the other version's decoder.
//
// Anyone allowed to read it can see who leads with:
//
//	aws s3 cp s3://BUCKET/KEY -
//
// An object at the key that is not such a record (written by someone else)
// is reported as lease.ErrCorrupt and never overwritten.
//
// Never delete the object, not even to reset a lease: the fencing token
// lives in it, and a new object would start the tokens again at 1 in any
// process started afterwards, so a downstream system could accept a
// deposed leader's writes. To hand the lease over, release it. The object
// is at most a few hundred bytes. If it is deleted all the same, the
// holder's next renewal finds it gone and reports lease.ErrLost (the
// runner cancels the task), and running contenders continue the count from
// the highest token they have seen.
//
// No lifecycle rule may expire or transition current objects under the
// lease's key: an expiration counts from the last write, and a released
// lease is not written again until someone acquires it, so a rule of N days
// deletes a lease left released for N days; an archive storage class
// (Glacier, Deep Archive) makes it unreadable.
//
// # The bucket
//
// The bucket must exist; s3lease never creates one, and reports a missing
// bucket as lease.ErrNotFound naming it. Versioning is not needed. If the
// bucket has versioning on, every renewal leaves a noncurrent version
// behind (640 an hour at the defaults): add a lifecycle rule that expires
// noncurrent versions after a day or so. Any storage class that allows
// frequent overwrites without a minimum storage duration works; S3 Standard
// is the usual choice.
//
// # Permissions
//
// The driver calls two actions on the lease's object, listed in
// IAMActions, and needs one more on the bucket, listed in
// IAMBucketActions:
//
//	{
//	  "Effect": "Allow",
//	  "Action": ["s3:GetObject", "s3:PutObject"],
//	  "Resource": "arn:aws:s3:::BUCKET/KEY"
//	},
//	{
//	  "Effect": "Allow",
//	  "Action": ["s3:ListBucket"],
//	  "Resource": "arn:aws:s3:::BUCKET",
//	  "Condition": {"StringEquals": {"s3:prefix": ["KEY", "KEY.leasehold-probe"]}}
//	}
//
// The store's check reads and writes the probe object next to the lease's,
// and needs IAMProbeActions there:
//
//	{
//	  "Effect": "Allow",
//	  "Action": ["s3:GetObject", "s3:PutObject"],
//	  "Resource": "arn:aws:s3:::BUCKET/KEY.leasehold-probe"
//	}
//
// Description lists these grants (a driver.Store) for leasehold check and
// help, and TestCallsAreGranted checks them against the requests the
// driver sends. s3:ListBucket is never called. It is there because Amazon S3 answers a
// GetObject of a missing object with 404 NoSuchKey only to a caller that
// may list the bucket, and with 403 AccessDenied to anyone else, so without
// it a lease that was never acquired cannot be told from a refused read and
// its first Acquire fails with lease.ErrPermission. Once the object exists
// s3:ListBucket is no longer used; a deployment that creates the lease
// with broader credentials may leave it out. S3 judges it with s3:prefix
// set to the key read, so the condition limits it to the lease's key and
// its probe's: the role cannot list the bucket's other key names. Refused credentials are reported as lease.ErrPermission
// naming the object and these actions.
//
// A directory bucket (S3 Express One Zone; its name ends in --x-s3)
// authorises every request through a session instead: the role needs
// s3express:CreateSession on arn:aws:s3express:REGION:ACCOUNT:bucket/BUCKET,
// and a refusal names that action.
//
// # Shard groups
//
// Objects is a bucket as package shard's Store, for a group of workers
// sharing shards: PutObject with If-None-Match: * or If-Match, GetObject
// with If-None-Match (304 when unchanged), and ListObjectsV2 of the group's
// prefix, page by page (all pages or an error), with the leases of Open.
// shard.OpenStore opens it from "s3://BUCKET/GROUP" with the parameters
// of a lease URL. A group's workers need IAMActions on
// arn:aws:s3:::BUCKET/GROUP/* and IAMGroupActions on the bucket, with
// s3:prefix = GROUP/ (Description's grants marked Group;
// terraform/modules/aws-lease-iam's s3_shard_groups).
//
// # Configuration
//
// In Go, Open takes the bucket, the key and, optionally, an *s3.Client;
// without one it builds a client from the default AWS configuration chain
// (environment, shared config files, ECS task role, EC2 instance role).
// By URL, with OpenURL (lease.Open opens the URLs of
// every backend the program imports):
//
//	l, err := s3lease.OpenURL(ctx, "s3://my-bucket/leases/jobs?region=eu-west-1", lease.Options{Identity: lease.DefaultIdentity()})
//
// The URL's path is the key. Its query parameters are those of
// gocloud.dev's s3:// URLs that configure the client (see URLParams):
// region, endpoint, use_path_style, hostname_immutable, profile, role,
// anonymous, dualstack, fips, request_checksum_calculation and
// response_checksum_validation. Any other parameter is rejected with
// lease.ErrInvalid naming it.
//
// To use LocalStack, MinIO or another S3-compatible store, either set the
// SDK's standard variable, which Open and URLs honour when no endpoint is
// given (and set UsePathStyle, or use_path_style=true in a URL):
//
//	AWS_ENDPOINT_URL_S3=http://localhost:4566   # or AWS_ENDPOINT_URL
//
// or name the endpoint in the URL:
//
//	s3://my-bucket/leases/jobs?region=us-east-1&endpoint=http://127.0.0.1:9000&use_path_style=true
//
// The store must implement conditional writes (If-None-Match: * and
// If-Match on PutObject): Amazon S3 since 2024, MinIO, LocalStack and moto
// do, and the lease checks it before the first write (see above).
//
// # Cost
//
// At the defaults (TTL 15s; the runner renews every RenewInterval = 3/8 of
// the TTL = 5.625s, and a follower reads twice per renewal, just after it
// and once between), a leader makes about 640 PUT requests an hour and each
// follower about 1,280 GET requests an hour. At S3 Standard list prices in us-east-1 (PUT
// $0.005 per 1,000 requests, GET $0.0004 per 1,000; AWS S3 pricing page,
// as of 2026) that is about $0.0032 an hour ($2.34 a month, 730 hours)
// for the leader and about $0.00051 an hour ($0.37 a month) for each
// follower; storage of one small object is negligible. A longer TTL costs
// proportionally less. The store's check adds four PUT requests per
// process and bucket ($0.00002; three PUTs and a GET once the probe
// object exists): nothing for a long-running worker, and about $0.67 a
// month for a `leasehold run --once` started every minute.
package s3lease
