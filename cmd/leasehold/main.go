// Command leasehold runs any program only while this instance is the
// leader: of many instances running `leasehold run`, the one that holds a
// lease on a cloud storage object runs the command; the others wait, and
// one of them takes over when the leader stops, crashes or loses the lease.
// It is for workers not written in Go (ECS tasks, Azure workers, cron jobs),
// as `consul lock` is, but on the cloud's own storage.
//
//	leasehold run --lease s3://my-leases/reconciler?region=eu-west-1 -- ./reconcile.sh
//	leasehold run --once --lease s3://my-leases/nightly -- python report.py
//	leasehold run --shards 64 --lease s3://my-leases/orders -- ./consume
//	leasehold run --holders 3 --lease s3://my-leases/crawlers -- ./crawl
//	leasehold status --lease s3://my-leases/reconciler --watch 20s
//	leasehold check --lease s3://my-leases/reconciler
//	leasehold break --lease s3://my-leases/reconciler
//	leasehold version
//
// With --shards N the instances share N shards instead, and each runs the
// command once per shard it owns (LEASEHOLD_SHARD, and its epoch as
// LEASEHOLD_TOKEN), each shard on at most one instance at any instant.
// With --holders N at most N instances run the command at once, each
// holding one of N slots (LEASEHOLD_SLOT, and its epoch as LEASEHOLD_TOKEN).
//
// The command never outlives the lease: leasehold stops it (SIGTERM, then
// SIGKILL) before any other instance could take the lease over, also when
// leasehold gets SIGHUP or its stderr's reader goes away, and on Linux
// the kernel kills it if leasehold itself is killed (macOS and the BSDs
// cannot: there, stop leasehold with SIGTERM only). `leasehold check`
// says, before deploying, whether a lease can be used safely. Run
// `leasehold help` and `leasehold COMMAND --help` for the details: flags
// and their environment variables, exit statuses, examples for ECS and
// Azure.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/lease"
	_ "github.com/leasehold/leasehold/lease/azurelease"
	_ "github.com/leasehold/leasehold/lease/dynamolease"
	_ "github.com/leasehold/leasehold/lease/gcslease"
	_ "github.com/leasehold/leasehold/lease/memlease"
	_ "github.com/leasehold/leasehold/lease/quorumlease"
	_ "github.com/leasehold/leasehold/lease/s3lease"
)

// environment is what leasehold takes from its process: tests give their
// own.
type environment struct {
	lookupEnv      func(string) (string, bool)
	environ        []string // the command's environment
	stdout, stderr io.Writer
	identity       string // the default identity
}

// adoptOrphans makes leasehold run a child subreaper on Linux (see
// family.go). main sets it; tests that run leasehold in their own process,
// which starts and reaps processes of its own, leave it unset.
var adoptOrphans bool

func main() {
	adoptOrphans = true
	ctx, hurry := signalContext()
	env := &environment{
		lookupEnv: os.LookupEnv,
		environ:   os.Environ(),
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		identity:  lease.DefaultIdentity(),
	}
	os.Exit(mainWith(ctx, hurry, os.Args[1:], env))
}

// signalContext returns a context cancelled, with a *signalCause, by the
// first SIGINT, SIGTERM or SIGHUP, and a channel closed by a second SIGINT
// or SIGTERM: the command is then killed without waiting for the rest of
// its grace period. A third kills leasehold itself (and, on Linux, the
// command with it).
//
// SIGHUP (the terminal or SSH session closed) stops leasehold as SIGTERM
// does, unless it was ignored when leasehold started (nohup), and stays
// so. It never hurries the stop, nor kills leasehold: a closed terminal
// sends it more than once (the shell forwards its own to its jobs, the
// kernel sends one to the last foreground group when the shell exits), and
// a second SIGHUP taken as a second signal killed the command without its
// grace period, a third killed leasehold by the default action, leaving
// its command's group running (red team 16). SIGPIPE is caught and
// dropped: a write to a stderr whose reader has gone fails with EPIPE
// (leasehold's writes leave it: see logSink) instead of killing leasehold
// by the default action, which would leave the command's process group
// running without the lease (red team 14). They are caught, not ignored:
// an ignored signal stays ignored across exec, in the command, and a
// command's own "cmd | head" would change.
func signalContext() (context.Context, <-chan struct{}) {
	dropped := []os.Signal{syscall.SIGPIPE}
	hup := !signal.Ignored(syscall.SIGHUP)
	if hup {
		dropped = append(dropped, syscall.SIGHUP) // after the first signal
	}
	signal.Notify(make(chan os.Signal, 1), dropped...) // never read: each is dropped
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	ch := make(chan os.Signal, 4)
	stops := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
	if hup {
		stops = append(stops, syscall.SIGHUP)
	}
	signal.Notify(ch, stops...)
	go func() {
		sig := <-ch
		cancel(&signalCause{sig: sig.(syscall.Signal)})
		for sig := range ch {
			if sig != syscall.SIGHUP {
				break
			}
		}
		close(hurry)
		signal.Stop(ch)
	}()
	return ctx, hurry
}

// mainWith runs leasehold with args and returns its exit status, having
// printed one line on stderr for any error.
func mainWith(ctx context.Context, hurry <-chan struct{}, args []string, env *environment) int {
	code, line := exitCode(dispatch(ctx, hurry, args, env))
	if line != "" {
		writeWithin(env.stderr, []byte("leasehold: "+oneLine(line)+"\n"), closeWait)
	}
	return code
}

// writeWithin writes p to w, and returns once it is written or after
// limit, whichever comes first: leasehold's last line must not keep it
// from exiting when its stderr is a pipe nobody reads (a stalled log
// collector), as the log sink's close must not (red team 16). The write
// left behind ends with the process.
func writeWithin(w io.Writer, p []byte, limit time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = w.Write(p)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// oneLine folds a multi-line error message (the Azure SDK's, say) into one
// line, leaving out rules and blank lines.
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.Trim(l, "-=") == "" {
			continue
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " | ")
}

func dispatch(ctx context.Context, hurry <-chan struct{}, args []string, env *environment) error {
	if len(args) == 0 {
		return exitf(exitUsage, "no command given: want run, status, check, break, handoff, version or help (see leasehold help)")
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, hurry, args[1:], env)
	case "status":
		err = cmdStatus(ctx, args[1:], env)
	case "check":
		err = cmdCheck(ctx, args[1:], env)
	case "break":
		err = cmdBreak(ctx, args[1:], env)
	case "handoff":
		err = cmdHandoff(ctx, args[1:], env)
	case "version", "-version", "--version":
		err = cmdVersion(args[1:], env)
	case "help", "-h", "-help", "--help":
		return help(args[1:], env)
	default:
		return exitf(exitUsage, "unknown command %q: want run, status, check, break, handoff, version or help (see leasehold help)", args[0])
	}
	if err == errHelp {
		return nil
	}
	return err
}

// help is leasehold help [run|status|check|break|handoff|version].
func help(args []string, env *environment) error {
	if len(args) == 0 {
		printHelp(env.stdout)
		return nil
	}
	switch args[0] {
	case "run":
		printRunHelp(env.stdout, runFlags(&runOptions{}))
	case "status":
		printStatusHelp(env.stdout, statusFlags(&statusOptions{}))
	case "check":
		printCheckHelp(env.stdout, checkFlags(&checkOptions{}))
	case "break":
		printBreakHelp(env.stdout, breakFlags(&breakOptions{}))
	case "handoff":
		printHandoffHelp(env.stdout, handoffFlags(&handoffOptions{}))
	case "version":
		printVersionHelp(env.stdout)
	default:
		return exitf(exitUsage, "help: unknown command %q: want run, status, check, break, handoff or version", args[0])
	}
	return nil
}

// interrupted is the exit after a signal: 128 + its number.
func interrupted(ctx context.Context, what string) error {
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return exitf(exitSignal+int(sc.sig), "run: interrupted by %v: %s", sc.sig, what)
	}
	return exitf(exitSignal+15, "run: interrupted: %s", what)
}

// signalCause is the cause of the context main cancels on SIGINT, SIGTERM
// or SIGHUP.
type signalCause struct{ sig syscall.Signal }

func (s *signalCause) Error() string { return fmt.Sprintf("received %v", s.sig) }
