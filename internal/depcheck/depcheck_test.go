package depcheck

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
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
	every = []family{aws, azure, gcs, grpc}
)

// TestEachPackageLinksOnlyItsOwnSDK lists each package's dependencies with
// go list -deps and fails on a family it must not link. The Cloud Storage
// backend links gRPC through the storage library today.
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
					t.Errorf("%s links %s (%s): it must link no cloud's SDK but its own", pkg, f.name, d)
					break
				}
			}
		}
	}
}
