package runner_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

// A first program: a worker that does its job only while it leads, on a
// lease in S3. Start it on as many machines as you like; one of them leads
// at a time, and when it dies another takes over about a TTL (15 s) later. The README opens with this program, and runner's package doc
// shows it: TestREADMEFirstProgram checks that the three agree.
func Example_leader() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	l, err := s3lease.OpenURL(ctx, "s3://my-bucket/nightly-report", lease.Options{Identity: lease.DefaultIdentity()})
	if err != nil {
		log.Fatal(err)
	}
	r, err := runner.New(runner.Config{Lease: l, Task: func(ctx context.Context) error {
		t, _ := runner.Term(ctx)
		return doTheJob(ctx, t.Token) // until ctx is cancelled; send t.Token with every write
	}})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Run(ctx); err != nil { // campaigns, leads, campaigns again, until SIGTERM
		log.Fatal(err)
	}
}

// doTheJob is the leader's work: it runs until ctx is cancelled, and
// passes token with every write, so that the systems written to can
// refuse a leader that has been deposed.
func doTheJob(ctx context.Context, token uint64) error {
	<-ctx.Done()
	return nil
}
