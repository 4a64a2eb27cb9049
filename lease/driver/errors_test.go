package driver_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestCorruptf(t *testing.T) {
	err := driver.Corruptf("token %d is odd", 3)
	if !errors.Is(err, lease.ErrCorrupt) || err.Error() != "lease: not a lease record: token 3 is odd" {
		t.Errorf("Corruptf = %q (matches ErrCorrupt: %t), want %q matching ErrCorrupt", err, errors.Is(err, lease.ErrCorrupt), "lease: not a lease record: token 3 is odd")
	}
}

// TestCallAfterContextEnded: a call whose context has already ended is
// not begun, since an SDK may finish it under a context of its own (the
// AWS SDK's STS fetch for a role= URL reached the network after Open had
// returned context.Canceled, and FuzzOpen's tripwire counted it).
func TestCallAfterContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := driver.Call(ctx, time.Second, func(context.Context) error { ran = true; return nil })
	if ran || err != context.Canceled {
		t.Errorf("Call under a cancelled context: ran f %t, returned %v; want f not run and context.Canceled", ran, err)
	}
}

// TestCallUntrustedCertificateIsPermanent: a call whose TLS handshake
// found the store's certificate vouched for by none of the host's CA roots
// (a host or image with none: the binary carries no roots of its own) is
// lease.ErrPermission, not retried, and says where the roots are read
// from. It was lease.ErrUnavailable, retried until the caller gave up,
// saying only "certificate signed by unknown authority".
func TestCallUntrustedCertificateIsPermanent(t *testing.T) {
	handshake := &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
	err := driver.Call(t.Context(), time.Second, func(context.Context) error {
		return fmt.Errorf("%w: s3: GetObject: %w", lease.ErrUnavailable, handshake)
	})
	if !errors.Is(err, lease.ErrPermission) || lease.Retryable(err) || !strings.Contains(err.Error(), "SSL_CERT_FILE") || !errors.Is(err, handshake) {
		t.Errorf("Call of a request whose certificate no CA root vouches for: %v (retryable %t); want lease.ErrPermission, not retryable, naming SSL_CERT_FILE and wrapping the handshake's error", err, lease.Retryable(err))
	}
}
