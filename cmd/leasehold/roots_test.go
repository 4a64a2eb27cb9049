//go:build unix

package main

import (
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// rootsProbe, set in a child test process's environment, makes
// TestFallbackRoots print the size of the system root pool and stop.
const rootsProbe = "LEASEHOLD_TEST_PRINT_ROOTS"

// TestFallbackRoots runs this test binary with no system roots (as in the
// container image, which has no /etc/ssl) and checks that TLS would still
// verify against the bundled ones.
func TestFallbackRoots(t *testing.T) {
	if os.Getenv(rootsProbe) == "1" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			fmt.Printf("roots: error %v\n", err)
			os.Exit(0)
		}
		fmt.Printf("roots: %d\n", len(pool.Subjects()))
		os.Exit(0)
	}
	empty := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackRoots$")
	cmd.Env = append(os.Environ(), rootsProbe+"=1", "SSL_CERT_FILE="+empty+"/none.pem", "SSL_CERT_DIR="+empty)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	line := strings.TrimSpace(string(out))
	n, err := strconv.Atoi(strings.TrimPrefix(line, "roots: "))
	if err != nil || n < 100 {
		t.Fatalf("without system roots the pool holds %q, want the bundled ones (over 100)", line)
	}
}
