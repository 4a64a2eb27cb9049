package awsdriver

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"

	"github.com/leasehold/leasehold/lease"
)

// Quiet is the load option that keeps the SDK from logging: leasehold
// reports what matters through its own errors and logger, and the SDK's
// default logger writes lines such as "SDK ... WARN falling back to
// IMDSv1" and "SDK ... DEBUG Response has no supported checksum" to
// stderr, among the caller's own messages. It silences the clients built
// from the configuration and the credential providers it resolves (the
// IMDS client among them, which copies the logger when the configuration
// is loaded).
func Quiet(o *config.LoadOptions) error {
	o.Logger = logging.Nop{}
	o.ClientLogMode = new(aws.ClientLogMode)
	return nil
}

// Client returns client, the one a backend's Options name, or when it is
// nil, one that newClient (s3.NewFromConfig, dynamodb.NewFromConfig) builds
// from the default AWS configuration chain: credentials from the
// environment, the shared config and credentials files, or the ECS/EC2
// role; region from AWS_REGION or the profile; endpoint from
// AWS_ENDPOINT_URL_<SERVICE> or AWS_ENDPOINT_URL. Either way it checks the
// client's region, which region reads: without one every request would
// fail. Errors are *lease.OptionErrors of the backend pkg. A client it
// builds does not log (Quiet); a client given is used as it is.
func Client[C, O any](ctx context.Context, pkg string, client *C, newClient func(aws.Config, ...func(*O)) *C, region func(*C) string) (*C, error) {
	if client == nil {
		cfg, err := config.LoadDefaultConfig(ctx, Quiet)
		if err != nil {
			return nil, &lease.OptionError{Pkg: pkg, Field: "Client", Value: "nil", Reason: "could not be built from the default AWS configuration: " + err.Error()}
		}
		client = newClient(cfg)
	}
	if region(client) == "" {
		return nil, &lease.OptionError{Pkg: pkg, Field: "region", Value: `""`, Reason: "is not set: set AWS_REGION, a profile's region, or ?region= in the URL"}
	}
	return client, nil
}

// NoRetries turns the SDK's own retries off, given the Retryer and
// RetryMaxAttempts fields of a service client's Options (s3.Options,
// dynamodb.Options): each call is then one request, bounded by the lease's
// CallTimeout, and the caller (the runner) retries within its own
// deadlines, so that retries do not multiply. A RetryMaxAttempts other than
// 0 would wrap the retryer again, so it is reset.
func NoRetries(retryer *aws.Retryer, maxAttempts *int) {
	*retryer = aws.NopRetryer{}
	*maxAttempts = 0
}
