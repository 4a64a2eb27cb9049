package runner_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// A worker that does its job only while it holds the lease. With a cloud
// backend's URL instead of "mem://", many instances of it on many machines
// elect one leader.
func Example() {
	ctx := context.Background()
	l, err := lease.Open(ctx, "mem://nightly-report", lease.Options{Identity: "worker-1"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		Lease:  l,
		Logger: slog.New(slog.DiscardHandler),
		Task: func(ctx context.Context) error {
			t, _ := runner.Term(ctx)
			// Pass t.Token along with every write, so that the systems you
			// write to can refuse a leader that has been deposed.
			fmt.Println("leading with fencing token", t.Token)
			return nil
		},
		StopWhenTaskEnds: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Run(ctx); err != nil {
		log.Fatal(err)
	}
	// Output: leading with fencing token 1
}

// A scheduled job (a cron line on several hosts, a serverless function
// that several triggers start): each run tries once, does the job only if
// elected, and says why not otherwise.
func ExampleRunner_RunOnce() {
	ctx := context.Background()
	l, err := lease.Open(ctx, "mem://hourly-export", lease.Options{Identity: "host-a"})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		Lease:  l,
		Logger: slog.New(slog.DiscardHandler),
		Task: func(ctx context.Context) error {
			fmt.Println("exporting")
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := r.RunOnce(ctx)
	if err != nil {
		log.Fatal(err) // the lease needs a person: a wrong URL, a missing bucket, refused credentials
	}
	switch res.Outcome {
	case runner.Ran:
		fmt.Println("ran with token", res.Term.Token, "error:", res.Err)
	case runner.NotElected:
		fmt.Println("another instance runs it:", res.Holder())
	case runner.Unreachable:
		fmt.Println("the store did not answer:", res.Err)
	default: // SteppedDown, Interrupted
		fmt.Println(res.Outcome, res.Demotion)
	}
	// Output:
	// exporting
	// ran with token 1 error: <nil>
}
