// Command function is an AWS Lambda function, invoked by an EventBridge
// schedule, that runs its job at most once per scheduled tick on a leasehold
// lease in DynamoDB. EventBridge delivers each event at least once, and
// Lambda retries an asynchronous invocation that failed (twice, by
// default): every delivery of a tick carries the tick's scheduled time,
// which is the period key (runner.Config.Period), so only one of them runs
// the job. A job that fails makes the invocation fail, and a retry of the
// same tick runs it again (runner.Config.RetryFailed) until one succeeds.
//
// Build it for the provided.al2023 runtime as terraform/examples/
// aws-lambda-scheduled/README.md shows:
//
//	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -o bootstrap .
//
// Its environment: LEASE_URL, the lease (dynamodb://TABLE/NAME); LEASE_TTL,
// the lease's TTL (default 15s).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/dynamolease" // dynamodb:// URLs
	"github.com/leasehold/leasehold/runner"
)

func main() {
	ttl := lease.DefaultTTL
	if s := os.Getenv("LEASE_TTL"); s != "" {
		var err error
		if ttl, err = time.ParseDuration(s); err != nil {
			slog.Error("LEASE_TTL is not a duration", "value", s, "err", err)
			os.Exit(1)
		}
	}
	url := os.Getenv("LEASE_URL")
	h := handler{
		open: func(ctx context.Context, identity string) (lease.Lease, error) {
			return lease.Open(ctx, url, lease.Options{Identity: identity, TTL: ttl})
		},
		job: job,
		log: slog.Default(),
	}
	lambda.Start(h.handle)
}

// job is the scheduled work: replace it with yours. period is the tick's
// scheduled time in RFC 3339; ctx ends if leadership does.
func job(ctx context.Context, period string) error {
	slog.InfoContext(ctx, "the job runs", "period", period)
	return nil
}

// handler runs job for one delivery of a scheduled event.
type handler struct {
	// open opens the lease for one invocation's identity.
	open func(ctx context.Context, identity string) (lease.Lease, error)
	job  func(ctx context.Context, period string) error
	log  *slog.Logger
}

// handle returns nil when the tick's job ran and succeeded here, or ran (or
// is running) elsewhere; an error, for Lambda to retry the invocation, when
// the job failed or was stopped, or the lease could not be reached.
func (h handler) handle(ctx context.Context, ev events.EventBridgeEvent) error {
	if ev.Time.IsZero() {
		return errors.New("the event has no time: invoke this function from an EventBridge schedule")
	}
	identity := "lambda"
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		identity += "-" + lc.AwsRequestID
	}
	period := ev.Time.UTC().Format(time.RFC3339)
	l, err := h.open(ctx, identity)
	if err != nil {
		return fmt.Errorf("opening the lease: %w", err)
	}
	r, err := runner.New(runner.Config{
		Lease:       l,
		Task:        func(ctx context.Context) error { return h.job(ctx, period) },
		Period:      period,
		RetryFailed: true,
		Logger:      h.log,
	})
	if err != nil {
		return err
	}
	res, err := r.RunOnce(ctx)
	if err != nil {
		return fmt.Errorf("the lease needs a person: %w", err)
	}
	log := h.log.With("period", period, "outcome", res.Outcome.String())
	switch res.Outcome {
	case runner.Ran:
		if res.Err != nil {
			log.Error("the job failed; a retry of this tick runs it again", "err", res.Err)
			return fmt.Errorf("the job for %s failed: %w", period, res.Err)
		}
		log.Info("the job ran")
		return nil
	case runner.AlreadyRan, runner.NotElected:
		log.Info("the job ran, or is running, for this tick on another invocation")
		return nil
	case runner.Unreachable:
		return fmt.Errorf("the lease's store did not answer: %w", res.Err)
	}
	return fmt.Errorf("the job for %s did not finish: %v", period, res.Outcome)
}
