// Package azurelease is a lease backend on one Azure Blob Storage blob,
// using the blob's native lease (Lease Blob: acquire, renew, change,
// release). It is the port of the MSDN Leader Election sample's
// BlobLeaseManager, and it implements lease.Lease itself rather than
// driving the compare-and-swap engine of package lease/driver: Azure, not
// the contender, judges when a lease has lapsed.
//
// # What it guarantees
//
// At most one contender holds the lease at a time: Azure grants a blob's
// lease to one lease ID at a time, for the TTL (15s to 60s), and lets
// another contender acquire it only once the holder released it or did not
// renew it for the TTL, measured on Azure's clock from when Azure received
// the last acquire or renewal. The holder counts from when it sent that
// request (lease.Term.Sent), so it gives up first, assuming only that
// clocks tick at nearly the same rate.
//
// Every acquisition gets a fencing token greater than all earlier ones.
// The token lives in the blob's metadata: a contender that has acquired the
// Azure lease reads the metadata, writes the next token under its new
// lease ID (the write is conditional on the ETag it read before acquiring,
// so no acquisition in between is missed), and only then reports the
// acquisition. If the write fails, it releases the Azure lease and reports
// the error. Release marks the record released and keeps the token; the
// blob is never deleted.
//
// A holder hands the lease to a named contender (lease.Handoffer's
// ReleaseTo) without its ever being free: it writes, under its lease, the
// record naming the successor and a new lease ID, then changes its Azure
// lease to that ID (LeaseBlob change), which ends its own term. The
// successor's Acquire renews the lease under the ID the record names, on
// condition that the blob is unchanged, and writes its term's record, with
// the next token; every other contender sees the blob leased and waits, and
// if the successor never comes Azure ends the lease a TTL after the
// holder's last renewal. Status and Observe do not show the new ID, but the
// blob's metadata holds it until the successor's record replaces it: who
// can read the blob can take the lease handed over, as who can write it can
// break any lease.
//
// It does not guarantee anything if something other than leasehold writes
// the blob's metadata or breaks its lease, other than that the contender
// notices (see below). A write whose outcome is unknown is resolved by
// reading the blob back; an acquire whose outcome is unknown is undone
// with a release of its lease ID.
//
// # What it stores
//
// The lease blob is an empty block blob whose metadata is the record:
//
//	leasehold = 1                  the format version
//	holder    = worker-1           the holder's identity, percent-encoded
//	token     = 7                  the fencing token
//	ttl_ms    = 15000              the holder's TTL in milliseconds
//	released  = false              whether the holder released it
//	nonce     = 4f1c9a0b7e22d3c5   fresh random text with every write
//
// A record with annotations (lease.Annotations: here the runner's, once a
// scheduled job has run under the lease) holds them in one more key, as
// URL query text, and mirrors the runner's into the nonce for versions
// before annotations, which read them there (see driver.EncodeNonce):
//
//	nonce       = 4f1c9a0b7e22d3c5;period=2026-11-23T10:00:00Z;done=1
//	annotations = runner%2Fperiod=2026-11-23T10%3A00%3A00Z&runner%2Fperiod-done=1
//
// Metadata of every form this and earlier versions write is in
// testdata/rule11, each read by the other version's decoder.
//
// # Renewals show
//
// An Azure lease renewal does not change the blob, so a follower could not
// tell when the holder renews, and would poll at a phase unrelated to the
// renewals. So each renewal is followed by a write of the record under the
// lease (Set Blob Metadata with the lease ID, and a fresh nonce), which
// changes the blob's ETag: the lease implements lease.RenewalShower, and
// the runner's followers read just after the holder's renewals, as on the
// compare-and-swap stores. A renewal whose write fails is reported as
// failed (the runner retries it within its deadline), and the write also
// carries the term's annotations (a period marked).
//
// Azure still judges the lease; the follower's reads only decide when it
// asks. A follower that saw the blob's ETag change knows that the renewal
// before that write reached Azure before its read returned, so the lease
// lapses no later than a TTL after that read, on a clock that ticks at the
// rate of the follower's: Acquire's lease.HeldError.Wait is the time left
// until then, counted from this Lease's first read of the blob as it is,
// and then a fiftieth of the TTL, for a tenth of it, in case the lease
// lapses a little late; after that a TTL, as for a holder whose renewals
// do not show (a version before this one). An Acquire made early is
// refused by Azure, as always.
//
// Azure keeps metadata keys case-insensitively, and some services return
// them in another case (Azurite capitalises them: Holder, Token): they are
// read case-insensitively. Anyone who may read the blob can see who leads:
//
//	az storage blob metadata show --container-name CONTAINER --name BLOB --auth-mode login
//
// lease.Record.Released is true when no Azure lease holds the blob (the
// holder released it, or its lease lapsed); Version is the blob's ETag,
// which every write of the record changes, each renewal's included.
//
// The blob is created, empty, by the first Acquire if it does not exist
// (a create that never overwrites). It must be used for nothing but this
// lease. A blob with content, or with metadata that leasehold did not write
// (no leasehold=1, a key of the record missing, a token that is not a
// number, ...) is reported as lease.ErrCorrupt and never touched. Keys a
// later version of leasehold adds beside leasehold=1 are read past, so that
// a fleet in a rolling upgrade reads each other's records. A blob that an Azure
// lease holds while its metadata names no current holder (a contender
// between its acquire and its metadata write, or another tool) is
// lease.ErrHeld with an empty Holder and token 0, and Observe reads it so,
// not released, with TTL the longest the Azure lease may still last (Azure
// does not say how much is left): MaxTTL for a lease of fixed duration, 0
// for an infinite one. If that lease is infinite
// (taken by another tool or by hand: az storage blob lease acquire
// --lease-duration -1), the error says so, because it never lapses: break
// it (leasehold break --force, or az storage blob lease break) to let
// contenders in. Break (lease.Breaker) breaks the Azure lease at once,
// only if the blob's ETag is still the one observed, and leaves the
// metadata and its token as they are; the acquisition that finds the
// lease broken (not released, nor expired) marks the record it writes
// (lease.AnnotationBroken). That is also a
// way to pause an election: hold an infinite lease by hand, and break it
// to resume.
//
// When a lease expires without being released (its holder died), Azure may
// refuse new acquires (409 LeaseAlreadyPresent) for up to a minute while
// the blob's lease state already reads expired or available. An acquire
// refused so, of a blob that a read just before and a read just after show
// not leased, is a lapsing lease: no holder exists, and Acquire reports
// lease.ErrUnavailable saying so, to retry, never lease.ErrHeld. The runner
// retries it, and runner.RunOnce waits it out within its OnceTimeout.
//
// Never delete the blob: the fencing token lives in it, and a new blob
// would start the tokens again at 1 in any process started afterwards. If
// it is deleted all the same, the holder's next renewal finds it gone and
// reports lease.ErrLost (the runner cancels the task), and running
// contenders continue the count from the highest token they have seen.
//
// Lifecycle management rules must exclude the lease container. Azure's
// lease operations do not update a blob's Last-Modified time; the record's
// write after each renewal does, but a rule must not depend on it: a
// leader of a version before renewals showed, or a lease left released
// for N days, has a blob that looks N days idle, and a rule "delete base
// blobs not modified for N days" deletes it, restarting the fencing
// tokens, and tiering it to Archive makes it unreadable.
//
// # The container and the role
//
// The container must exist; azurelease never creates one, and reports a
// missing container as lease.ErrNotFound naming it. The identity the lease
// runs as needs two data actions, DataActions (blob read and blob write),
// assigned with the container as its scope (not the account): it reads
// properties, creates the blob, writes its metadata and leases it. A
// custom role with exactly these is least privilege
// (terraform/modules/azure-blob-lease makes one); the built-in Storage Blob
// Data Contributor also lets its holder delete the lease blob, which
// restarts the fencing tokens. Refused credentials are reported as
// lease.ErrPermission naming the data actions and the container; a
// connection string refused because the account has Shared Key
// authorization off is reported as such, as no role helps there. Keep
// leases in a container of their own: the role lets its holder write every
// blob in the container.
//
// # Configuration
//
// In Go, Open takes the container, the blob, and one of: an *azblob.Client,
// a connection string, or the account's service URL, which Open reaches
// with azidentity.NewDefaultAzureCredential (a managed identity on Azure
// workers, workload identity, environment variables, or an Azure CLI
// login). By URL, with OpenURL (lease.Open opens the URLs of
// every backend the program imports):
//
//	l, err := azurelease.OpenURL(ctx, "azblob://leases/nightly-report?account=mystorageaccount", lease.Options{Identity: lease.DefaultIdentity()})
//
// The URL's host is the container and its path the blob. Its query
// parameters (URLParams) are account=NAME (https://NAME.blob.core.windows.net/),
// endpoint=URL (another cloud or a custom domain; https only), or
// connection_string_env=VAR (a connection string in the variable VAR);
// with none of them, the connection string is read from
// AZURE_STORAGE_CONNECTION_STRING. infinite_lease=true sets
// Options.InfiniteLease. Any other parameter is rejected with
// lease.ErrInvalid naming it.
//
// The TTL must be a whole number of seconds from 15s to 60s, the
// durations an Azure lease can have; Open rejects any other with an
// *lease.OptionError giving the range. The default, 15s, fits. An infinite
// Azure lease is taken only with Options.InfiniteLease, whose doc says why
// it is rarely what you want: a holder that crashes keeps it until a person
// breaks it.
//
// The SDK's retries are off for every call (each call is one request,
// bounded by lease.Options.CallTimeout; the runner retries within its
// deadlines), even with a Client built to retry.
//
// # Shard groups
//
// Objects is package shard's Store in one container (NewObjects; by URL,
// for shard.OpenStore and leasehold run --shards,
// azblob://CONTAINER/GROUP with GroupURLParams): each
// key of a group is a blob of that name, GROUP/members/ID and
// GROUP/assigner leases of this package, GROUP/assignment and GROUP/acks/ID
// plain blobs written with Put Blob conditional on their ETag. A version is
// the blob's ETag, in a listing as in a read. Every renewal writes the
// record under the lease, which changes the ETag, and a renewal whose write
// fails is reported failed (lease.RenewalsShow), so the assigner judges a
// worker's liveness as on every store: expired once the listings have
// shown its blob at one ETag for a TTL on the assigner's clock (rule 2; see
// package shard's doc for the argument). The group's TTL must be one of
// Azure's lease durations (15s to 60s), and infinite leases are refused.
// List Blobs and Get Blob need blobs/read, Put Blob blobs/write:
// DataActions cover them. A listing is one List Blobs request per 5,000
// blobs; in steady state a worker's read of the assignment is a Get Blob
// answered 304.
//
// # Azurite
//
// Azurite, Microsoft's emulator, implements blob leases and honours their
// expiry. Start it with --skipApiVersionCheck (this SDK sends a newer API
// version than Azurite knows, and Azurite refuses it with 400
// InvalidHeaderValue, reported as lease.ErrInvalid):
//
//	azurite-blob --blobHost 127.0.0.1 --blobPort 10000 --skipApiVersionCheck --inMemoryPersistence
//
// (scripts/stack up azurite does that), create a container, and use its
// full connection string; the Go SDK does not understand the shorthand
// UseDevelopmentStorage=true, which Open rejects saying so:
//
//	DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;
//
// # Requests and cost
//
// A renewal is two requests (Lease Blob renew, and Set Blob Metadata to
// show it). A follower's read of a held lease is one Get Blob Properties. Acquiring a free lease is Get Blob
// Properties, Lease Blob acquire and Set Blob Metadata (plus a Put Blob
// and a second read, once, when the blob does not exist yet); a release is
// Set Blob Metadata and Lease Blob release. TestRequestCounts checks these.
//
// At the runner's defaults (TTL 15s; it renews every RenewInterval =
// 3/8 of the TTL = 5.625s, and a follower reads six times per renewal,
// just after each and five times between: Description.FollowerReads, as
// Azure's TTL cannot be shortened below 15s to make a handover quicker, so
// a follower sees a release within a sixth of a renew interval instead),
// a leader makes 640 renewals and 640 metadata writes an hour, and each
// follower 3,840 reads. On a standard general-purpose v2
// account, Lease Blob, Set Blob Metadata and Get Blob Properties are all
// billed as "other operations" (Put Blob, once per blob, at the write
// price: negligible; "Map each REST operation to a price", Azure Blob
// Storage docs). At the Hot LRS list price of $0.0044 per 10,000 other
// operations (Azure Blob Storage pricing page, as of 2026; prices vary by
// region), that is 1,280 × $0.0044 / 10,000 = $0.00056 an hour, about
// $0.41 a month (730 hours), for the leader, and 3,840 × $0.0044 / 10,000
// = $0.0017 an hour, $1.23 a month, for each follower. Storage of one
// empty blob is negligible. A longer TTL costs proportionally less: at
// 60s, a quarter.
package azurelease
