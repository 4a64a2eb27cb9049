// Package awsdriver is what leasehold's AWS backends (lease/s3lease and
// lease/dynamolease) share, so that each is written once:
//
//   - lease URLs: the AWS query parameters and the client they configure
//     through gocloud.dev/aws.V2ConfigFromURLParams (Params, URLClient),
//     and where credentials come from (Credentials); package leaseurl
//     checks the URLs' shape;
//   - the client from the default AWS configuration chain, and its region
//     check (Client), built so that the SDK never logs to stderr (Quiet);
//   - the SDK's retries turned off (NoRetries), and request bodies that
//     cannot break an answered request (PlainBodies);
//   - the part of error classification that does not depend on the
//     service (Classify): the SDK error's code, message and HTTP status,
//     context errors passed through unwrapped, and whatever the backend's
//     rules do not claim (throttling, 5xx, timeouts, connection errors)
//     reported as lease.ErrUnavailable, and a request never sent for want
//     of credentials reported as such, saying where the SDK looked
//     (NoCredentials).
package awsdriver
