package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// openLease opens the lease, retrying what may pass until timeout (some
// backends reach the store when opening: DynamoDB describes its table).
func openLease(ctx context.Context, leaseURL string, opts lease.Options, timeout time.Duration, log *slog.Logger) (lease.Lease, error) {
	return atStart(ctx, leaseURL, timeout, log, func() (lease.Lease, error) { return lease.Open(ctx, leaseURL, opts) })
}

// readLease reads the lease's record, retrying what may pass until
// timeout. A lease never acquired yet reads as a zero Record.
func readLease(ctx context.Context, l lease.Lease, leaseURL string, timeout time.Duration, log *slog.Logger) (lease.Record, error) {
	return atStart(ctx, leaseURL, timeout, log, func() (lease.Record, error) {
		rec, err := l.Observe(ctx)
		if errors.Is(err, lease.ErrNoRecord) {
			return lease.Record{}, nil
		}
		return rec, err
	})
}

// atStart runs f, a first contact with the store, until it succeeds, fails
// for good, or timeout passes (retryAtStart), so that a wrong URL, a
// missing bucket or an unreachable store is reported at start (exit 78 or
// 69) instead of being retried for ever.
func atStart[T any](ctx context.Context, leaseURL string, timeout time.Duration, log *slog.Logger, f func() (T, error)) (T, error) {
	v, err := retryAtStart(ctx, timeout, log, f)
	switch {
	case err == nil:
		return v, nil
	case ctx.Err() != nil:
		return v, interrupted(ctx, "while reaching the store")
	case errors.Is(err, lease.ErrInvalid): // the message names the URL or option
		return v, exitf(exitConfig, "%s%v", optionFlag(err), err)
	case !lease.Retryable(err):
		return v, exitf(exitConfig, "cannot use the lease %s: %v", lease.RedactURL(leaseURL), err)
	}
	return v, exitf(exitUnavailable, "cannot reach the store of %s within --start-timeout (%v): %v", lease.RedactURL(leaseURL), timeout, err)
}

// retryAtStart runs f until it succeeds, fails for good (an error that is
// not lease.Retryable), ctx ends, or a try that started at timeout or
// after it failed: the waits between tries double from 100ms up to 2s,
// and the one that would pass timeout is cut short, so that the last try
// starts at timeout (and ends within its call's own timeout). It returns
// f's last result.
func retryAtStart[T any](ctx context.Context, timeout time.Duration, log *slog.Logger, f func() (T, error)) (T, error) {
	deadline := time.Now().Add(timeout)
	wait := 100 * time.Millisecond
	for {
		v, err := f()
		left := time.Until(deadline)
		if err == nil || ctx.Err() != nil || !lease.Retryable(err) || left <= 0 {
			return v, err
		}
		next := min(wait, left)
		log.Debug("cannot reach the store; retrying", "err", err, "retry_in", next)
		select {
		case <-ctx.Done():
		case <-time.After(next):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// optionFlags are the flags that set the lease.Options fields, which
// lease.Options.Validate and a backend may refuse (Azure Blob allows TTLs
// of 15s to 60s, Cloud Storage at least 3s).
var optionFlags = map[string]string{"TTL": "--ttl", "CallTimeout": "--call-timeout", "Identity": "--identity", "RenewInterval": "--renew-interval", "Shards": "--shards"}

// optionFlag is "--flag: " for an error about the lease option that flag
// sets, so that the message names what the user gave, and "" otherwise.
func optionFlag(err error) string {
	var oe *lease.OptionError
	if errors.As(err, &oe) {
		if f, ok := optionFlags[oe.Field]; ok {
			return f + ": "
		}
	}
	return ""
}
