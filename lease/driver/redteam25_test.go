package driver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// TestRedTeam25CertificateUnverifiableForGoodIsPermanent (3836cc1's
// driver.Call doc: a certificate none of the host's CA roots vouch for is
// lease.ErrPermission, "a person must fix the host's roots (or the store's
// certificate), and retrying changes nothing"; RT24-2: leasehold check
// retried it for --start-timeout and exited 69). Two handshakes that fail
// for good in the same way are still lease.ErrUnavailable, retried:
//   - the host's roots fail to load: SSL_CERT_FILE names a directory or an
//     unreadable file and no other roots are found. crypto/x509 then
//     returns x509.SystemRootsError ("x509: failed to load system roots and no
//     roots provided; read DIR: is a directory", seen with
//     SSL_CERT_FILE=DIR SSL_CERT_DIR=/nonexistent against an
//     httptest TLS server), not x509.UnknownAuthorityError: the very
//     host-without-roots case whose message names SSL_CERT_FILE is missed
//     when SSL_CERT_FILE is what is wrong;
//   - a certificate for another name (x509.HostnameError: an endpoint URL
//     that names the wrong host), which no retry changes either.
func TestRedTeam25CertificateUnverifiableForGoodIsPermanent(t *testing.T) {
	for name, cause := range map[string]error{
		"roots not loaded": x509.SystemRootsError{Err: &fs.PathError{Op: "read", Path: "/etc/certs", Err: errors.New("is a directory")}},
		"wrong host name":  x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{"other.example"}}, Host: "store.example"},
	} {
		handshake := &tls.CertificateVerificationError{Err: cause}
		err := driver.Call(t.Context(), time.Second, func(context.Context) error {
			return fmt.Errorf("%w: s3: GetObject: %w", lease.ErrUnavailable, handshake)
		})
		if lease.Retryable(err) {
			t.Errorf("%s: Call of a request whose certificate cannot be verified for good: %v (retryable); want it permanent as x509.UnknownAuthorityError is", name, err)
		}
	}
}
