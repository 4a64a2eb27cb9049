// Package awstest is what the tests of leasehold's AWS backends (lease/s3lease
// and lease/dynamolease) share, and what of it fits the other CAS backends'
// tests (lease/gcslease uses all but the AWS configuration and CheckError's
// code): the stores under test, found from the
// environment (Targets, Endpoint, StaticConfig), an isolated default
// configuration chain (IsolateEnv), request counting (Counter,
// CountRequests), fake and unreachable endpoints (Server, ClosedPort,
// SilentServer, Unreachable, ContextErrors), the checks every backend
// makes the same way (RunConformance, CheckError, RefuseURLs, UseURL), and
// TestMain's parallelism (Main).
package awstest

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region of the clients StaticConfig configures.
const Region = "us-east-1"

// Main runs a test package's tests, letting more of them run at once than
// go test's default of one per CPU: the integration tests wait on TTLs, not
// on the CPU, and the conformance suite runs its subtests in parallel to
// keep the package's run near the length of its longest subtest (about 6s
// at a 2s TTL) instead of their sum. An explicit -parallel is left alone.
// Call it from TestMain.
func Main(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "64")
	}
	os.Exit(m.Run())
}

// Spec says how to reach one store under test from the environment.
type Spec[T any] struct {
	// Name names the store's subtests (TestX/minio).
	Name string
	// Setup returns the store, or calls t.Skip naming what to set.
	Setup func(t *testing.T) T
}

// Targets are the stores a backend's integration tests run against.
type Targets[T any] struct {
	Specs []Spec[T]
	// Prepare readies a store for one test: a bucket or a table of its
	// own, removed when the test ends.
	Prepare func(store T, t *testing.T)
}

// Run runs f in a parallel subtest per store (TestX/minio, TestX/moto),
// prepared. keep, if not nil, names the stores the test applies to; the
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
			store := spec.Setup(t)
			ts.Prepare(store, t)
			f(t, store)
		})
	}
}

// First returns the first store, prepared, or skips the test.
func (ts *Targets[T]) First(t *testing.T) T {
	t.Helper()
	store := ts.Specs[0].Setup(t)
	ts.Prepare(store, t)
	return store
}

// Endpoint returns the endpoint URL of a service of the local test stack,
// from the environment variable that scripts/stack env sets, or skips the
// test with a message naming the variable, so that scripts/test can tell a
// skip from a stack that is up. pkg prefixes the message, product names the
// store ("MinIO") and service is its name in scripts/stack ("minio").
func Endpoint(t *testing.T, pkg, product, service, variable string) string {
	t.Helper()
	endpoint := os.Getenv(variable)
	if endpoint == "" {
		t.Skipf(`%s: %s is not configured: set %s (scripts/stack up %s; eval "$(scripts/stack env)")`, pkg, product, variable, service)
	}
	return endpoint
}

// StaticConfig returns the configuration of a client of endpoint that signs
// with fixed keys in Region, isolated from the AWS_* environment. hc, if
// not nil, carries its requests.
func StaticConfig(endpoint, key, secret string, hc aws.HTTPClient) aws.Config {
	cfg := aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
	}
	if hc != nil {
		cfg.HTTPClient = hc
	}
	return cfg
}

// IsolateEnv points the default AWS configuration chain at nothing but the
// variables a test sets: no shared config or credentials files, no profile,
// no endpoint, no region, no keys, no IMDS.
func IsolateEnv(t *testing.T) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "", "AWS_ENDPOINT_URL_DYNAMODB": "",
		"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
	} {
		t.Setenv(k, v)
	}
}

// UniqueName returns prefix, a dash and 8 random hex digits.
func UniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + "-" + hex.EncodeToString(b[:])
}
