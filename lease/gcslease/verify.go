package gcslease

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease/driver"
)

// ProbeSuffix ends the name of the probe object: the object next to the
// lease's (OBJECT.leasehold-probe) that Verify writes to check that the
// store enforces generation preconditions. It holds no lease; deleting it
// is harmless. It needs the same permissions as the lease's object
// (IAMPermissions), which a grant on the lease objects' prefix covers.
const ProbeSuffix = driver.ProbeSuffix

// Verify implements driver.Verifier. Before a contender first writes to
// the lease, it checks that the store refuses writes whose generation
// precondition fails, on the probe object, never on the lease's own, with
// driver.Probe: an upload with ifGenerationMatch=0 twice (or a read of the
// probe object when it exists), then one with ifGenerationMatch on its
// generation, and again on that generation, now stale. A store that
// applies a write it must refuse, twice in a row, is reported as
// lease.ErrUnsafeStore, naming the write.
//
// Cloud Storage's JSON API always enforces them; an emulator or a
// look-alike store may not. The verdict is kept for the life of the
// process per store, as this client reaches it: the emulator's address
// (STORAGE_EMULATOR_HOST) or Cloud Storage for a client Open built, the
// client itself for one of the caller's (whose endpoint the client does
// not tell), and the bucket. It cannot catch a store that checks
// preconditions but not atomically.
func (d *conn) Verify(ctx context.Context) error {
	endpoint := "client " + strconv.FormatUint(clientID(d.client), 10)
	switch {
	case d.adc && d.emulator != "":
		endpoint = "emulator " + d.emulator
	case d.adc:
		endpoint = "storage.googleapis.com"
	}
	probe := newConn(d.client, d.bucket, d.object+ProbeSuffix, d.callTimeout)
	return driver.VerifyStore(ctx, "gs "+endpoint+" "+d.bucket, driver.Probe{
		Key:         probe,
		Name:        "gcslease: " + probe.url(),
		Create:      "an upload with ifGenerationMatch=0",
		Replace:     "an upload with ifGenerationMatch",
		Remedy:      "use Cloud Storage itself, or a store that enforces ifGenerationMatch, refusing it with 412 conditionNotMet",
		CallTimeout: d.callTimeout,
	})
}

// clients numbers the clients of callers, never reusing a number, as an
// address could be reused once its client is collected.
var (
	clients    sync.Map // weak.Pointer[storage.Service] -> uint64
	lastClient atomic.Uint64
)

// clientID returns c's number.
func clientID(c *storage.Service) uint64 {
	k := weak.Make(c)
	if id, ok := clients.Load(k); ok {
		return id.(uint64)
	}
	id, loaded := clients.LoadOrStore(k, lastClient.Add(1))
	if !loaded {
		runtime.AddCleanup(c, func(k weak.Pointer[storage.Service]) { clients.Delete(k) }, k)
	}
	return id.(uint64)
}
