//go:build linux

package main

// Red team 14's findings in the CLI, fixed: each test failed before its fix.

import (
	"context"
	"os"
	"path/filepath"
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

// TestRedTeam14ShardVariablesConfigureANestedRun (rule 1 as the user of a
// nested leasehold sees it): the variables leasehold gives a shard's
// command are also the environment variables of leasehold's own flags:
// LEASEHOLD_SHARDS is --shards, LEASEHOLD_IDENTITY --identity,
// LEASEHOLD_LEASE --lease (and LEASEHOLD_PERIOD --period). A shard's
// command that runs a step under a single lease of its own, "leasehold run
// --lease URL -- step", starts a shard group of N instead: one instance
// runs the step N times at once, which the user asked to run on one
// leader at a time. The variables given to commands should not double as
// configuration (or leasehold should drop its own LEASEHOLD_ flag variables
// from the command's environment).
func TestRedTeam14ShardVariablesConfigureANestedRun(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	// The variables a shard's command gets.
	if code, stderr := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", "mem://"+memName("rt14-outer"), "--identity", "outer", "--ttl", "2s", "--",
		"sh", "-c", `if [ "$LEASEHOLD_SHARD" = 0 ]; then env > "$0.tmp"; mv "$0.tmp" "$0"; exit 0; fi; while :; do sleep 0.05; done`, envFile); code != 0 {
		t.Fatalf("the outer run exited %d: %s", code, stderr)
	}
	vars := map[string]string{}
	b, _ := os.ReadFile(envFile)
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(k, "LEASEHOLD_") {
			vars[k] = v
		}
	}
	if vars["LEASEHOLD_SHARDS"] != "2" {
		t.Fatalf("the shard's command got %v", vars)
	}
	// That command runs a step under a lease of its own.
	ran := filepath.Join(dir, "ran")
	env, _, stderr := testEnv(vars)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, nil, []string{"run", "--lease", "mem://" + memName("rt14-step"), "--",
			"sh", "-c", `echo "$$" >> "$0"; while :; do sleep 0.05; done`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the step runs", func() bool { return fileExists(ran) })
	time.Sleep(time.Second) // let every start of the step happen
	cancel()
	<-done
	b, _ = os.ReadFile(ran)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("leasehold run --lease URL -- step, run by a shard's command, ran the step %d times at once; stderr:\n%s", n, stderr)
	}
}
