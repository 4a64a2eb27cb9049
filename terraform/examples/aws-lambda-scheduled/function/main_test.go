package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// TestHandler: deliveries of one tick run the job once; a failed job fails
// the invocation, and the retry runs it again; the next tick runs.
func TestHandler(t *testing.T) {
	store := memlease.NewStore()
	var ran []string
	fail := false
	h := handler{
		open: func(_ context.Context, identity string) (lease.Lease, error) {
			return store.Open("job", lease.Options{Identity: identity, TTL: 15 * time.Second})
		},
		job: func(_ context.Context, period string) error {
			ran = append(ran, period)
			if fail {
				return errors.New("boom")
			}
			return nil
		},
		log: slog.New(slog.DiscardHandler),
	}
	deliver := func(requestID string, tick time.Time) error {
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: requestID})
		return h.handle(ctx, events.EventBridgeEvent{Time: tick})
	}
	tick := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for i, step := range []struct {
		request string
		tick    time.Time
		fail    bool
		wantErr bool
		wantRan []string
	}{
		{"r1", tick, false, false, []string{"2026-11-23T10:00:00Z"}},
		{"r2", tick, false, false, []string{"2026-11-23T10:00:00Z"}}, // a second delivery
		{"r3", tick.Add(time.Hour), true, true, []string{"2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z"}},
		{"r4", tick.Add(time.Hour), false, false, []string{"2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z", "2026-11-23T11:00:00Z"}}, // Lambda's retry
		{"r5", tick.Add(time.Hour), false, false, []string{"2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z", "2026-11-23T11:00:00Z"}},
	} {
		fail = step.fail
		err := deliver(step.request, step.tick)
		if (err != nil) != step.wantErr {
			t.Errorf("delivery %d (%s of %v): %v, want an error: %t", i+1, step.request, step.tick, err, step.wantErr)
		}
		if !slices.Equal(ran, step.wantRan) {
			t.Fatalf("after delivery %d the job ran for %q, want %q", i+1, ran, step.wantRan)
		}
	}
	if err := h.handle(context.Background(), events.EventBridgeEvent{}); err == nil {
		t.Error("an event without a time: nil, want an error")
	}
}
