package driver_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// probeKey is an in-memory probe key: a CAS driver that enforces its
// conditions unless ignore is set, and runs afterWrite (if set) after its
// nth write (counting from 1).
type probeKey struct {
	rec        lease.Record
	n          int
	ignore     bool
	afterWrite func(n int, k *probeKey)
	writes     []string // "create" or "replace", in order
}

func (k *probeKey) Get(context.Context) (lease.Record, error) {
	if k.rec.Version == "" {
		return lease.Record{}, lease.ErrNoRecord
	}
	return k.rec, nil
}

func (k *probeKey) Create(ctx context.Context, r lease.Record) (string, error) {
	return k.put(r, "create", k.rec.Version == "")
}

func (k *probeKey) Replace(ctx context.Context, r lease.Record, version string) (string, error) {
	return k.put(r, "replace", k.rec.Version != "" && k.rec.Version == version)
}

func (k *probeKey) put(r lease.Record, what string, holds bool) (string, error) {
	if err := driver.Check(r); err != nil || r.Holder != driver.ProbeHolder || !r.Released {
		return "", errors.New("not a probe record")
	}
	k.writes = append(k.writes, what)
	defer func() {
		if k.afterWrite != nil {
			k.afterWrite(len(k.writes), k)
		}
	}()
	if !holds && !k.ignore {
		return "", driver.ErrConflict
	}
	k.n++
	r.Version = strconv.Itoa(k.n)
	k.rec = r
	return r.Version, nil
}

func probeOf(k *probeKey) driver.Probe {
	return driver.Probe{Key: k, Name: "mem://leases/jobs" + driver.ProbeSuffix, Create: "a create-if-absent", Replace: "a replace-if-version", Remedy: "use another store", CallTimeout: time.Second}
}

// TestProbe: a store that enforces conditions passes, whether or not the
// probe record exists, and even when the record is deleted between two
// steps; one that ignores them is refused, naming the step, after a
// second probe.
func TestProbe(t *testing.T) {
	deleteAfter := func(write int) func(int, *probeKey) {
		return func(n int, k *probeKey) {
			if n == write {
				k.rec = lease.Record{}
			}
		}
	}
	for _, row := range []struct {
		name    string
		key     *probeKey
		mention string // "": passes
		writes  int    // in all
	}{
		{"Enforcing", &probeKey{}, "", 4},
		{"EnforcingProbeExists", &probeKey{rec: lease.Record{Holder: driver.ProbeHolder, Token: 1, TTL: time.Second, Released: true, Nonce: "n", Version: "x"}}, "", 3},
		{"DeletedAfterCreate", &probeKey{afterWrite: deleteAfter(1)}, "", 2 + 3},
		{"DeletedAfterReplace", &probeKey{afterWrite: deleteAfter(3)}, "", 4},
		{"IgnoresConditions", &probeKey{ignore: true}, "step 2, create-if-absent again, over the probe record that step 1 created: the store applied a create-if-absent on a record that exists", 2 + 2},
		{"IgnoresConditionsProbeExists", &probeKey{ignore: true, rec: lease.Record{Holder: driver.ProbeHolder, Token: 1, TTL: time.Second, Released: true, Nonce: "n", Version: "x"}},
			"step 2, create-if-absent again", 2 + 2},
	} {
		t.Run(row.name, func(t *testing.T) {
			err := probeOf(row.key).Run(t.Context())
			if row.mention == "" && err != nil {
				t.Fatalf("Run: %v, want nil", err)
			}
			if row.mention != "" && (!errors.Is(err, lease.ErrUnsafeStore) || !strings.Contains(err.Error(), row.mention) || !strings.Contains(err.Error(), "mem://leases/jobs.leasehold-probe") || !strings.Contains(err.Error(), "use another store")) {
				t.Fatalf("Run: %v, want lease.ErrUnsafeStore naming the probe key and saying %q", err, row.mention)
			}
			if len(row.key.writes) != row.writes {
				t.Errorf("writes %q, want %d", row.key.writes, row.writes)
			}
		})
	}
}

// TestProbeStaleReplace: a store that enforces create-if-absent but
// applies a replace on a stale version is refused at step 4.
func TestProbeStaleReplace(t *testing.T) {
	k := &probeKey{}
	p := probeOf(k)
	p.Key = staleBlind{k}
	err := p.Run(t.Context())
	if !errors.Is(err, lease.ErrUnsafeStore) || !strings.Contains(err.Error(), "step 4, a replace of the probe record on the version that step 3 replaced: the store applied a replace-if-version on a version the record no longer has") {
		t.Fatalf("Run: %v, want lease.ErrUnsafeStore naming step 4", err)
	}
}

// staleBlind applies every Replace, whatever its version.
type staleBlind struct{ *probeKey }

func (s staleBlind) Replace(ctx context.Context, r lease.Record, _ string) (string, error) {
	return s.probeKey.Replace(ctx, r, s.rec.Version)
}

// TestVerifyStoreKeepsVerdictByIdentity: a verdict is kept per store
// identity, and only when it is one.
func TestVerifyStoreKeepsVerdictByIdentity(t *testing.T) {
	id := "mem " + t.Name()
	unsafe := &probeKey{ignore: true}
	if err := driver.VerifyStore(t.Context(), id, probeOf(unsafe)); !errors.Is(err, lease.ErrUnsafeStore) {
		t.Fatalf("VerifyStore: %v, want lease.ErrUnsafeStore", err)
	}
	other := &probeKey{}
	if err := driver.VerifyStore(t.Context(), id, probeOf(other)); !errors.Is(err, lease.ErrUnsafeStore) || len(other.writes) != 0 {
		t.Errorf("VerifyStore of the same store again: %v after %d writes, want the kept verdict and no write", err, len(other.writes))
	}
	if err := driver.VerifyStore(t.Context(), id+" elsewhere", probeOf(other)); err != nil || len(other.writes) != 4 {
		t.Errorf("VerifyStore of another store: %v after %d writes, want a probe of its own, passed", err, len(other.writes))
	}
}

// TestProbeWritesOverNoLease: a probe key that holds a record no probe
// wrote (a lease's, held or released: a lease whose key ends with
// ProbeSuffix) is left as it is, and Run says why it cannot check the
// store, naming the key and the holder; it is not a verdict on the store.
// Red team #9.
func TestProbeWritesOverNoLease(t *testing.T) {
	for _, row := range []struct {
		name string
		rec  lease.Record
	}{
		{"Held", lease.Record{Holder: "holder", Token: 3, TTL: 10 * time.Second, Nonce: "n", Version: "x"}},
		{"Released", lease.Record{Holder: "holder", Token: 3, TTL: 10 * time.Second, Released: true, Nonce: "n", Version: "x"}},
		{"HeldByAnIdentityNamedLikeTheProbe", lease.Record{Holder: driver.ProbeHolder, Token: 1, TTL: time.Second, Nonce: "n", Version: "x"}},
		{"ReleasedWithAHigherToken", lease.Record{Holder: driver.ProbeHolder, Token: 2, TTL: time.Second, Released: true, Nonce: "n", Version: "x"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			k := &probeKey{rec: row.rec}
			err := probeOf(k).Run(t.Context())
			if !errors.Is(err, lease.ErrInvalid) || errors.Is(err, lease.ErrUnsafeStore) || !strings.Contains(err.Error(), "mem://leases/jobs.leasehold-probe holds a lease record that no probe wrote") || !strings.Contains(err.Error(), strconv.Quote(row.rec.Holder)) {
				t.Errorf("Run: %v, want lease.ErrInvalid naming the probe key and the record's holder", err)
			}
			if k.rec != row.rec || len(k.writes) != 1 {
				t.Errorf("the probe key holds %+v after writes %q, want %+v after the one refused create", k.rec, k.writes, row.rec)
			}
		})
	}
}
