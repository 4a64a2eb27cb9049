// Command demo shows leader election with leasehold.
//
// With no flags it runs several contenders in one process on the embedded
// in-memory backend and prints a timeline of four scenarios: an election with
// fencing tokens, a leader crash and the takeover after the TTL, a graceful
// handover, and a stalled leader stepping down through the health check. It
// ends by itself in about fifteen seconds.
//
// With -lease URL it runs one contender against any registered backend, so
// that several terminals can compete for one real lease:
//
//	go run ./cmd/demo -lease s3://my-bucket/leases/demo -ttl 15s
//
// Stop a contender with Ctrl-C (it releases the lease) and watch another
// take over at once; kill one with SIGKILL and watch the lease lapse first.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/azurelease"
	_ "github.com/leasehold/leasehold/lease/dynamolease"
	_ "github.com/leasehold/leasehold/lease/gcslease"
	_ "github.com/leasehold/leasehold/lease/memlease"
	_ "github.com/leasehold/leasehold/lease/quorumlease"
	_ "github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

func main() {
	leaseURL := flag.String("lease", "", "lease URL to compete for (e.g. mem://demo, s3://bucket/key, gs://bucket/object); empty runs the built-in scenarios")
	identity := flag.String("identity", lease.DefaultIdentity(), "this contender's identity")
	ttl := flag.Duration("ttl", lease.DefaultTTL, "lease TTL (with -lease)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *leaseURL == "" {
		err = runScenarios(ctx, os.Stdout)
	} else {
		err = contend(ctx, os.Stdout, *leaseURL, lease.Options{Identity: *identity, TTL: *ttl})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// contend runs one contender for the lease at leaseURL until ctx ends,
// printing its view of the election.
func contend(ctx context.Context, w io.Writer, leaseURL string, opts lease.Options) error {
	l, err := lease.Open(ctx, leaseURL, opts)
	if err != nil {
		return err
	}
	tl := newTimeline(w)
	who := l.Options().Identity
	r, err := runner.New(runner.Config{
		Lease:           l,
		Logger:          slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnElected:       func(t lease.Term) { tl.event(who, "elected", "token %d", t.Token) },
		OnDemoted:       func(d runner.Demotion) { tl.event(who, "demoted", "%s (released: %t)", d.Reason, d.Released) },
		OnLeaderChanged: func(id string) { tl.event(who, "sees leader", "%s", id) },
		Task: func(ctx context.Context) error {
			return everyTick(ctx, l.Options().TTL/3, func() {
				t, _ := runner.Term(ctx)
				tl.event(who, "working", "token %d", t.Token)
			})
		},
	})
	if err != nil {
		return err
	}
	tl.event(who, "campaigning", "for %s (TTL %v)", leaseURL, l.Options().TTL)
	return r.Run(ctx)
}
