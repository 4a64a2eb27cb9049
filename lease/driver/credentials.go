package driver

import (
	"context"
	"errors"
	"fmt"
)

// CredentialSource is implemented by a backend that can say whose
// credentials it would send, for a command that checks a lease before it
// is used (leasehold check). A lease that NewCAS returns implements it
// too, forwarding to its driver.
//
// Credentials returns where the backend's credentials came from ("the
// environment (AWS_ACCESS_KEY_ID)", "a connection string with an account
// key", "Application Default Credentials: a service account key file"),
// having obtained them as a request would, but without sending any request
// to the store. When none could be obtained it returns an error wrapping
// lease.ErrPermission that says so and where the backend looked; ctx's own
// error, unwrapped, when ctx ended.
type CredentialSource interface {
	Credentials(ctx context.Context) (source string, err error)
}

// Credentials implements CredentialSource: it asks the driver, if the
// driver is a CredentialSource, and otherwise returns an error wrapping
// errors.ErrUnsupported.
func (c *casLease) Credentials(ctx context.Context) (string, error) {
	cs, ok := c.d.(CredentialSource)
	if !ok {
		return "", fmt.Errorf("driver: %T cannot say where its credentials come from: %w", c.d, errors.ErrUnsupported)
	}
	return cs.Credentials(ctx)
}
