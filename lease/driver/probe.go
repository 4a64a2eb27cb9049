package driver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// ProbeSuffix ends the key of a lease's probe record: the key beside the
// lease's (KEY.leasehold-probe) where Probe checks the store, never the
// lease's own. The record there holds no lease (it is released, and its
// holder is ProbeHolder); deleting it is harmless. No lease's key ends
// with it (CheckProbeKey), so no lease lives at another's probe key.
const ProbeSuffix = ".leasehold-probe"

// ProbeHolder is the holder of the records Probe writes.
const ProbeHolder = "leasehold-probe"

// CheckProbeKey reports, as a *lease.OptionError of package pkg naming
// field, a lease key that ends with ProbeSuffix, being then the probe key
// of the lease named without it, which Probe would write to; or one so
// long that its probe key (the key and ProbeSuffix) would not fit store's
// limit on keys, limit bytes, which the store would refuse at every probe.
// A driver refuses such keys at Open.
func CheckProbeKey(pkg, field, key string, limit int, store string) error {
	if strings.HasSuffix(key, ProbeSuffix) {
		return &lease.OptionError{Pkg: pkg, Field: field, Value: strconv.Quote(key),
			Reason: fmt.Sprintf("must not end with %s: that names the probe key of %s, where leasehold checks the store before a process first writes to that lease", ProbeSuffix, strconv.Quote(strings.TrimSuffix(key, ProbeSuffix)))}
	}
	most := limit - len(ProbeSuffix)
	if len(key) <= most {
		return nil
	}
	return &lease.OptionError{Pkg: pkg, Field: field, Value: strconv.Quote(key[:64] + "..."),
		Reason: fmt.Sprintf("is %d bytes long; at most %d are allowed, so that its probe key (%s%s) fits %s's limit of %d", len(key), most, strings.ToUpper(field), ProbeSuffix, store, limit)}
}

// Probe is the check of one store that a CAS driver's Verify runs (through
// VerifyStore): that the store refuses conditional writes whose condition
// fails. It writes only at the probe key, with a driver of its own there.
type Probe struct {
	// Key is a CAS driver on the probe key, in the lease's bucket or table,
	// beside the lease's key and never the lease's own (KEY and
	// ProbeSuffix): a key that nothing but Probe writes.
	Key CAS
	// Name names the probe key in errors, as a URL:
	// s3://bucket/key.leasehold-probe.
	Name string
	// Create and Replace say what the store receives for Key's Create and
	// Replace, in errors: "a PutObject with If-None-Match: *".
	Create, Replace string
	// Remedy ends the error that refuses a store: what to use instead.
	Remedy string
	// CallTimeout bounds each request (lease.Options.CallTimeout).
	CallTimeout time.Duration
}

// The steps of a probe, as errors name them.
const (
	stepCreate      = "step 1, create-if-absent of the probe record"
	stepCreateAgain = "step 2, create-if-absent again, over the probe record that step 1 created"
	stepRead        = "step 2, a read of the probe record, which exists"
	stepReplace     = "step 3, a replace of the probe record on its current version"
	stepStale       = "step 4, a replace of the probe record on the version that step 3 replaced"
)

// applied is what a probe's run found when the store applied a write it
// must refuse.
type applied struct{ step, what string }

func (a *applied) Error() string { return a.step + ": the store applied " + a.what }

// errVanished: the probe record vanished between two steps.
var errVanished = errors.New("the probe record vanished between two steps of the probe (deleted by a lifecycle rule or a cleanup job?)")

// Run checks the store, on the probe key only:
//
//  1. Create (create-if-absent) writes a probe record, or is refused
//     because one exists (an earlier probe, another process's);
//  2. if step 1 created it, Create again must be refused; if not, a Get
//     reads the version of the record that exists;
//  3. Replace on that version writes a new record (or is refused: another
//     process's probe, or a deletion, replaced it meanwhile);
//  4. Replace on that same version, now stale, must be refused.
//
// A store that applies step 2 or 4 looks as if it ignores conditions. So
// does a conforming store whose probe record was deleted between steps 1
// and 2, so Run probes once more before it refuses the store: a store
// that applies a write it must refuse in both runs is refused with an
// error wrapping lease.ErrUnsafeStore that names the probe key, the step
// and the write. A run that could not tell (a refused credential,
// throttling, a record that vanished twice) returns that error, which is
// not lease.ErrUnsafeStore. Every record Probe writes is released and held
// by ProbeHolder, and each carries a fresh nonce, so every write changes
// the probe key's version. Probe writes over no record but such a probe
// record: when the probe key holds any other (a lease's, written by
// someone that let a lease's key end with ProbeSuffix), Run writes
// nothing and returns an error wrapping lease.ErrInvalid that names the
// key and the record's holder.
func (p Probe) Run(ctx context.Context) error {
	err := p.once(ctx)
	var a *applied
	if !errors.As(err, &a) && !errors.Is(err, errVanished) {
		return err
	}
	first := err
	err = p.once(ctx)
	switch {
	case errors.As(err, &a):
		return fmt.Errorf("%w: %s: %s, which it must refuse, in two probes running one after the other: it ignores the conditions of conditional writes, so contenders starting together could each create or take over the lease and lead at once; %s",
			lease.ErrUnsafeStore, p.Name, a, p.Remedy)
	case errors.Is(err, errVanished):
		return fmt.Errorf("%w: %s: could not check that the store enforces conditional writes: %v; then %v", lease.ErrUnavailable, p.Name, first, err)
	}
	return err
}

// once runs the probe's four steps once. It returns nil when the store
// refused both writes it must refuse, an *applied when it applied one,
// errVanished when the record vanished under it, and any other error as
// the driver returned it.
func (p Probe) once(ctx context.Context) error {
	version, err := p.write(ctx, "")
	switch {
	case errors.Is(err, ErrConflict):
		var r lease.Record
		err := Call(ctx, p.CallTimeout, func(ctx context.Context) (err error) {
			r, err = p.Key.Get(ctx)
			return err
		})
		switch {
		case errors.Is(err, lease.ErrNoRecord):
			return fmt.Errorf("%s: %w", stepRead, errVanished)
		case errors.Is(err, lease.ErrCorrupt):
			return fmt.Errorf("%w: %s: the probe key holds something that leasehold's probe did not write; delete it", err, p.Name)
		case err != nil:
			return err
		case !isProbeRecord(r):
			return fmt.Errorf("%w: %s holds a lease record that no probe wrote (holder %q, token %d, released %t), which the probe does not write over: a lease's key ends with %s there, so this store cannot be checked for the lease beside it until that lease has moved to a key without that ending and its record is gone",
				lease.ErrInvalid, p.Name, r.Holder, r.Token, r.Released, ProbeSuffix)
		}
		version = r.Version
	case err != nil:
		return err
	default:
		if _, err := p.write(ctx, ""); err == nil {
			return &applied{stepCreateAgain, p.Create + " on a record that exists"}
		} else if !errors.Is(err, ErrConflict) {
			return err
		}
	}
	// Refused (ErrConflict) or not, the version read or created is stale
	// after this step.
	if _, err := p.write(ctx, version); err != nil && !errors.Is(err, ErrConflict) {
		return err
	}
	_, err = p.write(ctx, version)
	switch {
	case err == nil:
		return &applied{stepStale, p.Replace + " on a version the record no longer has"}
	case errors.Is(err, ErrConflict):
		return nil
	}
	return err
}

// isProbeRecord reports whether r is a record that Probe writes (released,
// token 1, held by ProbeHolder), which holds no lease: writing over one
// loses nothing. Any other record may be a lease's.
func isProbeRecord(r lease.Record) bool {
	return r.Holder == ProbeHolder && r.Released && r.Token == 1
}

// write stores a fresh probe record, created when version is empty, else
// replacing version, in one request bounded by CallTimeout.
func (p Probe) write(ctx context.Context, version string) (string, error) {
	r := lease.Record{Holder: ProbeHolder, Token: 1, TTL: time.Second, Released: true, Nonce: NewNonce()}
	var v string
	err := Call(ctx, p.CallTimeout, func(ctx context.Context) (err error) {
		if version == "" {
			v, err = p.Key.Create(ctx, r)
		} else {
			v, err = p.Key.Replace(ctx, r, version)
		}
		return err
	})
	return v, err
}

// stores keeps every store's verdict, by the identity VerifyStore is given.
var stores Verdicts

// VerifyStore returns the verdict kept for the store that id identifies,
// or, when none is known yet, runs p and keeps its verdict (nil or
// lease.ErrUnsafeStore) for the life of the process: a driver's Verify is
// one call of it. id must name the store and the way the driver's client
// reaches it, so that two leases share a verdict only when their writes
// meet the same store the same way: the scheme, the endpoint (or the
// service's default), the region, the bucket or table, and the
// credentials' access key when the driver knows it without a request; not
// a client's address, which a later client may reuse.
func VerifyStore(ctx context.Context, id string, p Probe) error {
	return stores.Check(ctx, id, p.Run)
}
