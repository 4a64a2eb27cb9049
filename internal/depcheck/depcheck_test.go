package depcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// family is a set of modules linked together: one cloud's SDK, or gRPC.
type family struct {
	name     string
	prefixes []string
}

var (
	aws   = family{"the AWS SDK", []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/smithy-go"}}
	azure = family{"the Azure SDK", []string{"github.com/Azure/azure-sdk-for-go"}}
	gcs   = family{"the Google Cloud SDK", []string{"cloud.google.com/go", "google.golang.org/api"}}
	grpc  = family{"gRPC", []string{"google.golang.org/grpc"}}
	// grpcTransport is what a gRPC transport of Cloud Storage brings on
	// top of gRPC's core: the storage library itself, xDS with Envoy's and
	// CNCF's types, ALTS and Google's gRPC credentials, SPIFFE, and
	// OpenTelemetry's SDK. Google's JSON API client does without it, and so
	// must every package, the CLI included.
	grpcTransport = family{"a gRPC transport of Cloud Storage", []string{
		"cloud.google.com/go/storage", "google.golang.org/api/transport/grpc",
		"google.golang.org/grpc/xds", "github.com/envoyproxy", "github.com/cncf/xds",
		"google.golang.org/grpc/credentials/alts", "google.golang.org/grpc/credentials/google",
		"github.com/spiffe", "go.opentelemetry.io/otel/sdk",
	}}
	// roots are CA roots built into the binary: parsed at every process's
	// start-up (4 ms, 670 KB). The image carries them as a file instead
	// (scripts/cabundle), and the binary uses the system's.
	roots = family{"CA roots built into the binary", []string{"golang.org/x/crypto/x509roots/fallback"}}
	every = []family{aws, azure, gcs, grpc, grpcTransport, roots}
)

// TestEachPackageLinksOnlyItsOwnSDK lists each package's dependencies with
// go list -deps and fails on a family it must not link. The Cloud Storage
// backend links gRPC's core (no transport of its own): Google's JSON API
// client, google.golang.org/api/storage/v1, imports it through
// google.golang.org/api/option and internal (grpc, grpc/credentials),
// gax-go (grpc, codes, status, metadata), and S2A (github.com/google/s2a-go,
// imported by option's internal package and by cloud.google.com/go/auth's
// HTTP transport), whatever options the client is built with. The CLI
// links every cloud, but no gRPC transport; no package links CA roots.
func TestEachPackageLinksOnlyItsOwnSDK(t *testing.T) {
	const module = "github.com/leasehold/leasehold/"
	allowed := map[string][]family{
		"lease":             nil,
		"lease/driver":      nil,
		"lease/memlease":    nil,
		"lease/quorumlease": nil,
		"runner":            nil,
		"shard":             nil,
		"lease/s3lease":     {aws},
		"lease/dynamolease": {aws},
		"lease/azurelease":  {azure},
		"lease/gcslease":    {gcs, grpc},
		"cmd/leasehold":     {aws, azure, gcs, grpc},
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	for pkg, ok := range allowed {
		out, err := exec.Command(goTool, "list", "-deps", module+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, f := range every {
			if slices.ContainsFunc(ok, func(a family) bool { return a.name == f.name }) {
				continue
			}
			for _, d := range deps {
				if slices.ContainsFunc(f.prefixes, func(p string) bool { return d == p || strings.HasPrefix(d, p+"/") }) {
					t.Errorf("%s links %s (%s); of these families it may link only: %s", pkg, f.name, d, names(ok))
					break
				}
			}
		}
	}
}

// names lists the families' names, or says there are none.
func names(fs []family) string {
	if len(fs) == 0 {
		return "none"
	}
	var n []string
	for _, f := range fs {
		n = append(n, f.name)
	}
	return strings.Join(n, ", ")
}

// TestReleaseBuildLinksNoNetTrace builds the CLI's package list with the
// release's build tags (scripts/release-tags) and fails if it imports
// golang.org/x/net/trace, which gRPC imports unless built with grpcnotrace.
// Its init registers HTML debug pages on http.DefaultServeMux (leasehold
// serves its own mux), and their templates call methods by name through
// reflect: with that reachable the linker keeps every exported method of
// every type, and the release binary is 38 MB instead of 25. It also fails
// if a build of the release (scripts/release, the Dockerfile, leasebench
// -footprint) stops reading the tags.
func TestReleaseBuildLinksNoNetTrace(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "scripts", "release-tags"))
	if err != nil {
		t.Fatal(err)
	}
	tags := strings.TrimSpace(string(b))
	if !slices.Contains(strings.Split(tags, ","), "grpcnotrace") {
		t.Errorf("scripts/release-tags is %q; want grpcnotrace among its tags", tags)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, "list", "-deps", "-tags="+tags, "github.com/leasehold/leasehold/cmd/leasehold").Output()
	if err != nil {
		t.Fatalf("go list -deps -tags=%s cmd/leasehold: %v", tags, err)
	}
	if slices.Contains(strings.Fields(string(out)), "golang.org/x/net/trace") {
		t.Errorf("cmd/leasehold built with -tags=%s imports golang.org/x/net/trace", tags)
	}
	for _, f := range []string{"scripts/release", "Dockerfile", "cmd/leasebench/footprint.go"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "release-tags") {
			t.Errorf("%s does not read scripts/release-tags: its build of leasehold would link golang.org/x/net/trace", f)
		}
	}
}

// TestOwnPackagesAllocateLittleAtInit builds the CLI with the release's
// build tags, runs leasehold version with GODEBUG=inittrace=1, and fails
// if the package initialisation of any of the module's own packages
// allocates more than 4 KB: every process pays it before its first
// request. A regexp compiled into a package variable did (lease's ECS
// task ID 14 KB, s3lease's CreateSession error 17 KB, dynamolease's table
// name with a counted repetition 230 KB); they are compiled when first
// used. Allocated bytes, not time: the same on every run.
func TestOwnPackagesAllocateLittleAtInit(t *testing.T) {
	const module, limit = "github.com/leasehold/leasehold", 4096
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "release-tags"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "leasehold")
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goTool, "build", "-tags="+strings.TrimSpace(string(b)), "-o", bin, module+"/cmd/leasehold").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/leasehold: %v: %s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("leasehold version: %v: %s", err, stderr.String())
	}
	seen := 0
	for line := range strings.Lines(stderr.String()) {
		// init PKG @0.51 ms, 0.010 ms clock, 96 bytes, 2 allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		if f[1] != module && !strings.HasPrefix(f[1], module+"/") {
			continue
		}
		seen++
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		if n > limit {
			t.Errorf("the init of %s allocates %d bytes; want at most %d (compile or build it when first used)", f[1], n, limit)
		}
	}
	if seen == 0 {
		t.Fatalf("no init of the module's packages in leasehold version's inittrace:\n%s", stderr.String())
	}
}
