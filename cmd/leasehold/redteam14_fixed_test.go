//go:build unix

package main

// Red team 14's findings in the CLI, fixed: each test failed before its fix.

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease/memlease"
)

// TestRedTeam14HugeTTLBlamesAFlagNotGiven (rule 8, and the runner's
// "messages that name the field and the values"): a --ttl above about
// 853,000h overflows the defaults derived from it (3/8, 9/16 of the TTL
// in nanoseconds), and run, status and check refuse it by blaming
// --renew-interval, which was not given, with a negative value: "--renew-
// interval (-265511h56m49.213693952s) must be at least 1ms and less than
// --ttl (1000000h0m0s)". (Just below, check's ttl verdict compares a
// renew interval of 300000h with a renew deadline of 129744h.)
func TestRedTeam14HugeTTLBlamesAFlagNotGiven(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--once", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--", "true"},
		{"status", "--lease", "mem://rt14-huge", "--ttl", "1000000h"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "1000000h", "--start-timeout", "1ms"},
		{"check", "--lease", "mem://rt14-huge", "--ttl", "800000h", "--start-timeout", "1ms"},
	} {
		env, stdout, stderr := testEnv(nil)
		code := mainWith(context.Background(), nil, args, env)
		msg := stdout.String() + stderr.String()
		if code == 0 || strings.Contains(msg, "renew-interval") || strings.Contains(msg, "(-") {
			t.Errorf("leasehold %s: exit %d; the refusal blames a flag not given, or a negative value:\n%s", strings.Join(args, " "), code, msg)
		}
	}
}

// stallingWriter passes writes to w until stall is called; from then on
// every write blocks until unstall is called, as a write to a pipe whose
// reader stopped reading (a log collector that stalls, a full pipe
// TestRedTeam14StalledStderrKeepsTheCommandPastTheLease (rule 14, rule 1):
// leasehold's stderr stops taking writes (a log pipe whose reader
// stalled: a full pipe blocks write(2) on fd 2), then the leader is cut off
// from the store. The runner's step-down timer cancels the task without
// logging, but supervisor.stop logs the SIGTERM line (and the SIGKILL
// line) before it signals: the log write blocks, and neither SIGTERM nor
// SIGKILL is ever sent. A follower takes the lease over a TTL later, with
// TestRedTeam14SucceededPeriodRunsAgain (rule 13): a --once --period run
// with --retry-failed whose command exits 0 by itself, then leasehold gets
// SIGTERM while it still copies the command's output (its stdout is a pipe
// leasehold copies, as with --progress-on-stdout, and the copy is slow:
// waitOutputs waits up to outputDrain, 1s, before the command counts as
// exited). supervise's select sees the context end before c.exited, stops
// a command that had already exited, and reports it stopped: no done mark
// is written, leasehold exits 143 ("the command was stopped"), and the next
// trigger of the same period runs the command again, although its first
// TestRedTeam14CheckWaitsOutStartTimeoutOnAFreshLease (not a safety rule;
// the --start-timeout message): leasehold check of a lease never acquired
// yet retries its read until --start-timeout has passed, logging "cannot
// reach the store; retrying" for a store that answered at once, because
// checkStore retries lease.ErrNoRecord (which lease.Retryable counts as
// retryable) instead of taking it as the answer, as readLease does. With
// the default --start-timeout every check of a fresh lease takes 10s.
func TestRedTeam14CheckWaitsOutStartTimeoutOnAFreshLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		name := memName("rt14-check-fresh")
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan int, 1)
		go func() {
			env, _, _ := testEnv(nil)
			done <- mainWith(ctx, nil, []string{"check", "--lease", "mem://" + name, "--start-timeout", "1h"}, env)
		}()
		time.Sleep(time.Minute) // fake time
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("check of a fresh lease exited %d, want 0", code)
			}
		default:
			t.Error("check of a lease never acquired, on a store that answers at once, still retries a minute later (until --start-timeout, 1h)")
			cancel()
			<-done
		}
	})
}

// TestRedTeam14GroupStartHangsPastStartTimeout: a store that stops
// answering (every call hangs) at start keeps leasehold status --shards
// and leasehold run --shards waiting for ever: openGroup's listing (and
// status's shard.ReadStatus) runs under the process's context alone, with
// neither --start-timeout nor the call timeout bounding it, so the promised
// "cannot reach the store ... within --start-timeout" never comes. A lease
// (status, run without --shards) is bounded by its call timeout and gives
// up at --start-timeout.
func TestRedTeam14GroupStartHangsPastStartTimeout(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--shards", "2"},
		{"run", "--shards", "2", "--", "true"},
	} {
		t.Run(args[0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				id := memName("rt14-hang-" + args[0])
				memlease.Default.Hang(id)
				defer memlease.Default.Heal(id)
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan int, 1)
				go func() {
					env, _, _ := testEnv(nil)
					full := append([]string{args[0], "--lease", "mem://" + id, "--identity", id, "--start-timeout", "1s"}, args[1:]...)
					done <- mainWith(ctx, nil, full, env)
				}()
				time.Sleep(time.Hour) // fake time: an hour past --start-timeout
				select {
				case code := <-done:
					if code != exitUnavailable {
						t.Errorf("exit %d, want %d (cannot reach the store within --start-timeout)", code, exitUnavailable)
					}
				default:
					t.Errorf("leasehold %s with a store that hangs still waits an hour after --start-timeout (1s)", args[0])
					cancel()
					<-done
				}
				cancel()
			})
		})
	}
}
