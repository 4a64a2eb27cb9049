// Package emulators and its packages open the stores that leasehold's
// integration tests run on: each cloud backend's emulator from the local
// test stack, found from the variables that scripts/stack env sets, or a
// real account where one is configured. There is one package per backend,
// so that a backend's tests link its own cloud's SDK and register its own
// URL scheme only: s3emu (MinIO and moto), dynamoemu (dynalite and moto),
// gcsemu (fake-gcs-server) and azureemu (Azurite). The quorum's mixed
// conformance suites (lease/quorumlease/internal/mixed) use them all.
//
// Each constructor skips its test, with a message naming the variable to
// set, when that variable is not set: scripts/test fails a run in which an
// integration test skipped so although the stack was up, by the variable's
// name in the message. Otherwise it returns the store ready for one test:
// a bucket, table or container of the test's own, or, in one given by a
// real account's variable, the records the test wrote, removed when the
// test ends. Each store's Conformance is the conformance suite's harness
// on it.
//
// The packages import their cloud's SDK and backend: import them from
// _test.go files only, so that no other package's build links them.
package emulators

import (
	"os"
	"testing"
)

// Endpoint returns the endpoint URL of a service of the local test stack,
// from the environment variable that scripts/stack env sets, or skips the
// test with a message naming the variable. product names the store
// ("MinIO") and service is its name in scripts/stack ("minio").
func Endpoint(t *testing.T, product, service, variable string) string {
	t.Helper()
	v := os.Getenv(variable)
	if v == "" {
		t.Skipf(`%s is not configured: set %s (scripts/stack up %s; eval "$(scripts/stack env)")`, product, variable, service)
	}
	return v
}
