// Command contender is one contender process of the chaos test: a runner
// at the defaults for -ttl, on the lease that lease.Open opens from -lease,
// whose task does nothing but record its leadership. It appends to -log,
// one line each, on CLOCK_MONOTONIC in nanoseconds:
//
//	start <ns> <token>   elected (OnElected, before the task starts)
//	end <ns> <token>     the task's context was cancelled: leadership over
//
// so that the chaos test can prove from the leaders' own records that no
// two leaderships overlapped. SIGTERM or SIGINT stops it gracefully (the
// runner releases the lease); SIGKILL is a crash.
//
// With -child it is instead the command that "leasehold run" runs while
// leader: it appends "start <ns> <LEASEHOLD_TOKEN> <pid>" when started and
// "end <ns> <token> <pid>" when SIGTERM or SIGINT stops it, and then exits.
// Run by "leasehold run --shards", it adds LEASEHOLD_SHARD to both lines:
// "start <ns> <epoch> <pid> <shard>"; by "leasehold run --holders",
// LEASEHOLD_SLOT so. Continued after a stop (SIGCONT), it
// appends "cont <ns> <token> <pid> [<shard>]" first thing, so that the test
// knows a command it saw stopped, and then killed, did not run again.
//
// -prefer VALUE runs the runner with that Config.Prefer, its Candidates
// the lease at -lease's path and ".candidates" (what leasehold run
// --prefer names KEY.candidates), so that the leader hands the lease to a
// contender whose VALUE orders after its own.
//
// -unsafe-renew-deadline F breaks the safety rule RenewDeadline < TTL on
// purpose, for the test that shows the checker catches an overlap: the
// runner sees a lease whose Options report a TTL ten times the real one,
// and is configured with RenewDeadline = F × the real TTL (and the usual
// RenewInterval, 3/8 of the real TTL, which its records carry, and
// CampaignInterval, a third of it), so a
// leader cut off from the store keeps acting for F × TTL while the others
// take over after one TTL.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/azurelease"
	_ "github.com/leasehold/leasehold/lease/dynamolease"
	_ "github.com/leasehold/leasehold/lease/gcslease"
	_ "github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

func main() {
	leaseURL := flag.String("lease", "", "lease URL")
	identity := flag.String("id", "", "contender identity")
	ttl := flag.Duration("ttl", lease.DefaultTTL, "lease TTL")
	logPath := flag.String("log", "", "file the leadership intervals are appended to")
	unsafe := flag.Float64("unsafe-renew-deadline", 0, "if set, RenewDeadline = this × TTL, on purpose beyond the TTL (see the doc)")
	child := flag.Bool("child", false, "be the command of leasehold run instead (see the doc)")
	prefer := flag.String("prefer", "", "the runner's Prefer, its Candidates beside the lease (see the doc)")
	flag.Parse()
	var err error
	if *child {
		err = runChild(*logPath)
	} else {
		err = run(*leaseURL, *identity, *ttl, *logPath, *unsafe, *prefer)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "contender:", err)
		os.Exit(1)
	}
}

func run(leaseURL, identity string, ttl time.Duration, logPath string, unsafe float64, prefer string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rec, err := newRecorder(logPath)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	opts := lease.Options{Identity: identity, TTL: ttl}
	l, err := open(ctx, leaseURL, opts, logger)
	if l == nil {
		return err
	}
	cfg := runner.Config{
		Lease:  l,
		Logger: logger,
		OnElected: func(t lease.Term) {
			rec.line("start", t.Token)
		},
		Task: func(ctx context.Context) error {
			t, _ := runner.Term(ctx)
			<-ctx.Done()
			rec.line("end", t.Token)
			return nil
		},
	}
	if prefer != "" {
		u, err := url.Parse(leaseURL)
		if err != nil {
			return err
		}
		u.Path += runner.CandidatesSuffix
		if cfg.Candidates, err = open(ctx, u.String(), opts, logger); cfg.Candidates == nil {
			return err
		}
		cfg.Prefer = prefer
	}
	if unsafe > 0 {
		// The runner's timing at the real TTL, not at the TTL the lie
		// reports, but for the deadline.
		atTTL, err := cfg.Resolve(l.Options())
		if err != nil {
			return err
		}
		cfg.Lease = lyingTTL{Lease: l}
		cfg.RenewDeadline = time.Duration(unsafe * float64(ttl))
		cfg.RenewInterval = atTTL.RenewInterval // what its records tell followers
		cfg.CampaignInterval, cfg.CoolDown, cfg.ReleaseTimeout = atTTL.CampaignInterval, atTTL.CoolDown, atTTL.ReleaseTimeout
		logger.Warn("UNSAFE: RenewDeadline beyond the TTL, on purpose", "renew_deadline", cfg.RenewDeadline, "ttl", ttl)
	}
	r, err := runner.New(cfg)
	if err != nil {
		return err
	}
	return r.Run(ctx)
}

// open opens the lease at leaseURL. Open may need the store (dynamodb
// describes its table): it retries while faults are injected, and returns
// a nil Lease once ctx ends (err nil) or on an error that is not
// transient.
func open(ctx context.Context, leaseURL string, opts lease.Options, logger *slog.Logger) (lease.Lease, error) {
	for {
		l, err := lease.Open(ctx, leaseURL, opts)
		if err == nil {
			return l, nil
		}
		if !lease.Retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		logger.Warn("open failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(opts.TTL / 3):
		}
	}
}

// runChild is the command of "leasehold run": it records its start with
// LEASEHOLD_TOKEN, its process ID and LEASEHOLD_SHARD (or LEASEHOLD_SLOT)
// if set, waits for
// SIGTERM or SIGINT, records its end so and exits. It records every
// SIGCONT too. Killed (leasehold's SIGKILL, or the parent-death
// signal when leasehold itself is killed), it records no end: the chaos
// test notes when its process ID is gone.
func runChild(logPath string) error {
	sig, cont := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	signal.Notify(cont, syscall.SIGCONT)
	rec, err := newRecorder(logPath)
	if err != nil {
		return err
	}
	token, err := strconv.ParseUint(os.Getenv("LEASEHOLD_TOKEN"), 10, 64)
	if err != nil {
		return fmt.Errorf("LEASEHOLD_TOKEN=%q: %v", os.Getenv("LEASEHOLD_TOKEN"), err)
	}
	who := []string{strconv.Itoa(os.Getpid())}
	for _, name := range []string{"LEASEHOLD_SHARD", "LEASEHOLD_SLOT"} {
		if shard, ok := os.LookupEnv(name); ok {
			if _, err := strconv.Atoi(shard); err != nil {
				return fmt.Errorf("%s=%q: %v", name, shard, err)
			}
			who = append(who, shard)
			break
		}
	}
	rec.line("start", token, who...)
	for {
		select {
		case <-cont:
			rec.line("cont", token, who...)
		case <-sig:
			rec.line("end", token, who...)
			return nil
		}
	}
}

// lyingTTL reports a TTL ten times the lease's, so that the runner accepts
// a RenewDeadline beyond the real TTL. Only -unsafe-renew-deadline uses it.
type lyingTTL struct{ lease.Lease }

func (l lyingTTL) Options() lease.Options {
	o := l.Lease.Options()
	o.TTL *= 10
	return o
}

// recorder appends the leadership lines to the log, each with one write,
// so that a SIGKILL never leaves half a line.
type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func newRecorder(path string) (*recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &recorder{f: f}, nil
}

func (r *recorder) line(what string, token uint64, extra ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := fmt.Sprintf("%s %d %d", what, monotonic(), token)
	for _, e := range extra {
		line += " " + e
	}
	if _, err := r.f.WriteString(line + "\n"); err != nil {
		fmt.Fprintln(os.Stderr, "contender: recording:", err)
		os.Exit(2)
	}
}

// monotonic reads CLOCK_MONOTONIC, which every process on the machine
// shares, in nanoseconds.
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}
