package driver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// ErrConflict is what a CAS driver returns when a conditional write's
// condition did not hold (the key held something, or another version). The
// engine never lets it reach an application: it reads the record back and
// reports the lease held, lost or unavailable.
var ErrConflict = errors.New("lease: version conflict")

// Corruptf returns an error wrapping lease.ErrCorrupt, for decoders.
func Corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", lease.ErrCorrupt, fmt.Sprintf(format, args...))
}

// Call runs one request to a store, f, under timeout: the per-call bound
// every backend applies (lease.Options.CallTimeout). When the caller's own
// ctx ends first, Call returns ctx's error, unwrapped; when only the
// timeout fired, it returns an error wrapping lease.ErrUnavailable that
// names the timeout. A certificate that none of the host's CA roots
// vouches for, roots that could not be read, and a certificate for
// another name are lease.ErrPermission, permanent: a person must fix the
// host's roots, the endpoint or the store's certificate, and retrying
// changes nothing (red team 24: leasehold check retried the first for
// --start-timeout and said only "certificate signed by unknown
// authority"; red team 25 the other two). An expired certificate stays
// retryable: the store's owner renews it without the client's help. Otherwise it returns
// f's error as it is. A ctx that
// has already ended begins no call: f is not run, and Call returns ctx's
// error. Some SDKs finish under a context of their own what a call
// started (the AWS SDK fetches an assumed role's credentials from STS
// whatever the caller's context says), so a call begun under an ended ctx
// could still reach the network after Call returned.
func Call(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := f(cctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case cctx.Err() != nil && !errors.Is(err, lease.ErrUnavailable):
		return fmt.Errorf("%w: no answer within CallTimeout (%v): %w", lease.ErrUnavailable, timeout, err)
	case errors.As(err, new(x509.UnknownAuthorityError)), errors.As(err, new(x509.SystemRootsError)):
		return fmt.Errorf("%w: the store's TLS certificate leads to none of the CA roots this host has, or they could not be read, and leasehold carries none of its own "+
			"(on Linux it reads SSL_CERT_FILE, SSL_CERT_DIR, /etc/ssl/certs/ca-certificates.crt and the other usual files; "+
			"leasehold's image carries that file): %w", lease.ErrPermission, err)
	case errors.As(err, new(x509.HostnameError)):
		return fmt.Errorf("%w: the store's TLS certificate is for another name than the endpoint's: %w", lease.ErrPermission, err)
	}
	return err
}

// transient marks err, a failure whose cause may pass, as
// lease.ErrUnavailable (unless it already is).
func transient(err error) error {
	if errors.Is(err, lease.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", lease.ErrUnavailable, err)
}

// LostTo returns an error wrapping lease.ErrLost that says what ended a
// term: r, the record as read afterwards. A record with no holder is a
// lease held by someone who has not written their name (a native lease
// taken by another tool, or by a contender still acquiring it).
func LostTo(r lease.Record) error {
	switch {
	case r.Holder == "":
		return fmt.Errorf("%w: now held by a holder that has not written its name yet", lease.ErrLost)
	case r.Released:
		return fmt.Errorf("%w: released by %q (token %d)", lease.ErrLost, r.Holder, r.Token)
	}
	return fmt.Errorf("%w: now held by %q (token %d)", lease.ErrLost, r.Holder, r.Token)
}
