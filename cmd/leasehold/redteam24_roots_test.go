//go:build linux

package main

import (
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeam24NoCARootsErrorNamesTheCause (docs/install.md: "The binary
// carries no roots of its own ...: elsewhere it uses the system's, as any
// Go program does (on Linux /etc/ssl/certs/ca-certificates.crt and the
// other usual files, or SSL_CERT_FILE/SSL_CERT_DIR)"; the ground rules:
// clear errors naming the field and value; leasehold check's exit 78: "a
// check failed for a reason a person must fix"). Since the binary's own
// roots (x509roots/fallback) went, a bare binary on a host with no CA
// roots (an empty image it was copied into, SSL_CERT_FILE at an empty
// file) cannot verify any store's certificate. The sequence: leasehold
// check --lease s3://... against an HTTPS endpoint, with SSL_CERT_FILE an
// empty file and SSL_CERT_DIR an empty directory. leasehold retries for
// all of --start-timeout, exits 69 ("the store could not be reached") and
// says "x509: certificate signed by unknown authority", as it says of a
// server whose certificate is not trusted: nothing names the cause, that
// the host has no CA roots at all, nor where leasehold looked for them.
func TestRedTeam24NoCARootsErrorNamesTheCause(t *testing.T) {
	bin := filepath.Join(buildBinaries(t), "leasehold")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // each refused handshake
	srv.StartTLS()
	defer srv.Close()
	dir := t.TempDir()
	empty, certs := filepath.Join(dir, "ca-certificates.crt"), filepath.Join(dir, "certs")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(certs, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check", "--lease", "s3://bucket/key", "--start-timeout", "2s")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "SSL_CERT_FILE=" + empty, "SSL_CERT_DIR=" + certs,
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL_S3=" + srv.URL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(errorLines(stderr.String()), "\n")
	if !strings.Contains(line, "SSL_CERT_FILE") && !strings.Contains(strings.ToLower(line), "ca root") {
		t.Errorf("leasehold check on a host with no CA roots (SSL_CERT_FILE an empty file, SSL_CERT_DIR an empty directory) said %q: it does not name the cause, that no CA roots were found, nor where it looked", line)
	}
	if code != exitConfig {
		t.Errorf("leasehold check on a host with no CA roots exited %d after retrying for --start-timeout, want %d: a missing trust store is a reason a person must fix, not a store out of reach", code, exitConfig)
	}
}
