// Package storetest is what the tests of leasehold's cloud backends
// (lease/s3lease, lease/dynamolease, lease/gcslease, lease/azurelease)
// share, whatever the cloud: the stores a test runs against, one subtest
// each (Targets), request counting (Counter, CountRequests), fake and
// unreachable endpoints (Server, ClosedPort, SilentServer, CannedObject,
// Unreachable, ContextErrors), the checks every backend makes the same way
// (RunConformance, CheckError, CheckStoredJSON, RefuseURLs, UseURL), unique
// names for buckets and tables (UniqueName), and TestMain's parallelism
// (Main). The stores themselves, each emulator's from the environment, are
// in lease/internal/emulators; what only the AWS backends share (their
// client configuration, the SDK's error codes) is in lease/internal/awstest.
package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"testing"
)

// Main runs a test package's tests, letting more of them run at once than
// go test's default of one per CPU: the integration tests wait on TTLs, not
// on the CPU, and the conformance suite runs its subtests in parallel to
// keep the package's run near the length of its longest subtest (about 6s
// at a 2s TTL) instead of their sum. Sixteen, not more: the emulators
// serve one request at a time (moto, Azurite), and 64 tests' calls at once
// queued past their CallTimeout on a loaded 2-core machine (beside
// stress-ng: moto 1 s, Azurite 3 s), while 16 take as long in s3lease and
// dynamolease and 15 s more in azurelease. An explicit -parallel is left
// alone. Call it from TestMain.
func Main(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "16")
	}
	os.Exit(m.Run())
}

// Spec says how to reach one store under test from the environment.
type Spec[T any] struct {
	// Name names the store's subtests (TestX/minio).
	Name string
	// Setup returns the store ready for one test (a bucket or a table of
	// its own, removed when the test ends), or calls t.Skip naming what to
	// set.
	Setup func(t *testing.T) T
}

// Targets are the stores a backend's integration tests run against.
type Targets[T any] struct {
	// Specs are the stores, in the order their subtests run.
	Specs []Spec[T]
}

// Run runs f in a parallel subtest per store (TestX/minio, TestX/moto). keep, if not nil, names the stores the test applies to; the
// others get no subtest at all, rather than a skip that would look like a
// missing emulator.
func (ts *Targets[T]) Run(t *testing.T, keep func(name string) bool, f func(t *testing.T, store T)) {
	t.Helper()
	for _, spec := range ts.Specs {
		if keep != nil && !keep(spec.Name) {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			f(t, spec.Setup(t))
		})
	}
}

// First returns the first store, or skips the test.
func (ts *Targets[T]) First(t *testing.T) T {
	t.Helper()
	return ts.Specs[0].Setup(t)
}

// UniqueName returns prefix, a dash and 8 random hex digits.
func UniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + "-" + hex.EncodeToString(b[:])
}

// Wrap returns the stores of ts, each wrapped by f: a test package's own
// type around a store of lease/internal/emulators, for methods of its own.
func Wrap[T, U any](ts Targets[T], f func(T) U) Targets[U] {
	var wrapped Targets[U]
	for _, spec := range ts.Specs {
		wrapped.Specs = append(wrapped.Specs, Spec[U]{Name: spec.Name, Setup: func(t *testing.T) U { return f(spec.Setup(t)) }})
	}
	return wrapped
}
