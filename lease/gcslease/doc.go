// Package gcslease is a lease backend on one Google Cloud Storage object,
// written only with Cloud Storage's generation preconditions: a driver of
// the compare-and-swap engine in package lease/driver (driver.NewCAS), so it has
// that engine's guarantees. At most one contender holds the lease at a
// time, assuming only that clocks tick at nearly the same rate: a
// contender takes a held lease over only after it has seen the same
// generation of the object, unchanged, for the holder's whole TTL on its
// own monotonic clock, and only by a write conditional on that generation.
// Every write makes a new generation, and every acquisition writes a
// fencing token greater than all earlier ones.
//
// It does not guarantee anything if something other than leasehold writes
// or deletes the object.
//
// # Requests
//
// The driver speaks Cloud Storage's JSON API through Google's client of it,
// google.golang.org/api/storage/v1 (not cloud.google.com/go/storage, whose
// gRPC transport would be linked into every program that imports
// gcslease).
//
// A read is one JSON API download of the object (GET ...?alt=media), which
// returns the record and, in its x-goog-generation header, its
// generation: the version. Acquiring a
// free lease is that read and one upload with ifGenerationMatch=0; a
// renewal, a release and a takeover are one upload with
// ifGenerationMatch=<generation> (a takeover after the reads that judged
// expiry). Each upload is a single multipart request (its media's
// ChunkSize is 0). A write whose outcome is unknown (a timeout, a lost
// response, a failed condition) is followed by one read that resolves it.
// The client retries a call only when asked to (WithRetry), and the driver
// never asks: each call is one request, bounded by
// lease.Options.CallTimeout, and the caller (the runner) retries.
//
// # The store is checked before the first write
//
// Before a contender first writes to a bucket, it checks that the store
// refuses writes whose generation precondition fails (Verify, with
// driver.Probe), on a probe object next to the lease's
// (OBJECT.leasehold-probe, ProbeSuffix), never on the lease's own: an
// upload with ifGenerationMatch=0 twice (or a read when the probe object
// exists), then one on its generation and one more on that generation,
// now stale; four uploads (three and a read once the probe object exists),
// once per store for the life of the process.
// Cloud Storage's JSON API always enforces the preconditions; an emulator
// or a look-alike store that applies a write it must refuse, in two checks
// one after the other (a probe object deleted between two steps fools
// one), is refused with lease.ErrUnsafeStore, not retryable, naming the
// step, and nothing is written to the lease. It cannot catch a store that
// checks preconditions but not atomically. An object name is at most 1008
// bytes, so that the probe object's fits Cloud Storage's 1024, and does
// not end with .leasehold-probe, which would make it another lease's probe
// object; the check writes over no object but a probe object
// (lease.ErrInvalid, naming it, otherwise).
//
// # One write per second
//
// Cloud Storage allows about one write per second to one object name and
// answers faster writes with 429 Too Many Requests. The runner renews
// every RenewInterval, 3/8 of the TTL by default, so Open refuses a TTL under
// MinTTL (3s). With runner.Config.RenewInterval set by hand, keep it at a
// second or more.
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
//	gcloud storage cat gs://BUCKET/OBJECT
//
// An object at the name that is not such a record (written by someone
// else) is reported as lease.ErrCorrupt and never overwritten.
//
// Never delete the object, not even to reset a lease: the fencing token
// lives in it, and a new object would start the tokens again at 1, so a
// downstream system could accept a deposed leader's writes. To hand the
// lease over, release it. The object is at most a few hundred bytes.
//
// # The bucket
//
// The bucket must exist; gcslease never creates one. Cloud Storage answers a
// read in a missing bucket as it answers a read of a missing object, so
// Observe reports lease.ErrNoRecord there; Acquire's write finds the
// bucket missing and reports lease.ErrNotFound naming it. Use uniform bucket-level access, leave
// object versioning off, and turn soft delete off (a retention of 0): by
// default Cloud Storage keeps every overwritten generation for 7 days as
// soft-deleted data, and a lease is overwritten at every renewal (640
// times an hour at the defaults), all of it billed as storage. Standard
// storage class: the others have minimum storage durations, which every
// overwrite would charge again.
//
// # Permissions
//
// The driver needs the three permissions in IAMPermissions on the lease's
// object and on its probe object (OBJECT.leasehold-probe), which the
// store's check creates, reads and overwrites before the first write:
// storage.objects.get, storage.objects.create and storage.objects.delete
// (Cloud Storage requires delete, with create, to overwrite an object). No predefined role holds exactly these
// (roles/storage.objectUser holds them and more): grant a custom role on
// the bucket, optionally with an IAM condition on the object's name,
//
//	resource.name.startsWith("projects/_/buckets/BUCKET/objects/leases/")
//
// or on each lease's object and probe object by name, as
// terraform/modules/gcp-gcs-lease does (Description lists these grants for
// leasehold check and help). Refused credentials are
// reported as lease.ErrPermission naming the object and these
// permissions.
//
// # Shard groups
//
// Objects is a bucket as package shard's Store, for a group of workers
// sharing shards: uploads with ifGenerationMatch, reads with
// ifGenerationNotMatch (304 when unchanged), and objects.list of the
// group's prefix, page by page (all pages or an error), with the leases of
// Open. shard.OpenStore opens it from "gs://BUCKET/GROUP". A group's
// workers need IAMPermissions on the objects under GROUP/ and
// IAMGroupPermissions on the bucket, for listings of GROUP/
// (Description's grants marked Group; terraform/modules/gcp-gcs-lease's
// shard_groups).
//
// # Configuration
//
// In Go, Open takes the bucket, the object's name and, optionally, a
// *storage.Service of google.golang.org/api/storage/v1 (storage.NewService);
// without one it builds a client with Application Default
// Credentials: the attached service account on Cloud Run, GKE (workload
// identity) and Compute Engine, a key file named by
// GOOGLE_APPLICATION_CREDENTIALS, or the login of gcloud auth
// application-default login. By URL, with OpenURL (lease.Open opens the
// URLs of every backend the program imports):
//
//	l, err := gcslease.OpenURL(ctx, "gs://my-bucket/leases/jobs", lease.Options{Identity: lease.DefaultIdentity()})
//
// The URL's path is the object's name. gs:// URLs take no query
// parameters; any is rejected with lease.ErrInvalid naming it.
//
// To use an emulator (fake-gcs-server), set the Cloud Storage client
// libraries' standard variable, which Open and URLs honour when they build
// the client (a client of your own takes the emulator's endpoint,
// http://HOST:PORT/storage/v1/, with option.WithEndpoint, and
// option.WithoutAuthentication):
//
//	STORAGE_EMULATOR_HOST=127.0.0.1:4443
//
// Requests then go to that host over plain HTTP, without credentials.
// fake-gcs-server enforces ifGenerationMatch on the multipart uploads the
// driver sends, atomically under concurrent writers.
//
// # Cost
//
// At the defaults (TTL 15s; the runner renews every RenewInterval = 3/8 of
// the TTL = 5.625s, and a follower reads twice per renewal, just after it
// and once between), a leader makes about 640 uploads an hour (Class A
// operations) and each follower about 1,280 reads an hour (Class B
// operations). At
// Standard storage list prices in a single region ($0.005 per 1,000
// Class A operations, $0.0004 per 1,000 Class B operations; Google Cloud
// Storage pricing page, as of 2026) that is about $0.0032 an hour ($2.34 a
// month) for the leader and about $0.00051 an hour ($0.37 a month) for
// each follower; storage of one small object is negligible, with soft
// delete off. A longer TTL costs proportionally less.
package gcslease
