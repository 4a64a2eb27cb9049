//go:build unix

package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// holdLease makes identity lead the lease at leaseURL from this process,
// renewing it, until the test ends.
func holdLease(t *testing.T, leaseURL, identity string, ttl time.Duration) {
	t.Helper()
	l, err := lease.Open(context.Background(), leaseURL, lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	elected := make(chan struct{})
	r, err := runner.New(runner.Config{Lease: l, Logger: slog.New(slog.DiscardHandler),
		OnElected: func(lease.Term) { close(elected) },
		Task:      func(ctx context.Context) error { <-ctx.Done(); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-elected:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder was not elected")
	}
}

func TestExitStatus(t *testing.T) {
	notExecutable := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExecutable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held := "mem://" + memName("exit-held")
	holdLease(t, held, "holder", 3*time.Second)

	for _, tc := range []struct {
		name string
		args []string
		want int
		line string // expected in leasehold's one error line; "" for none
	}{
		{"command succeeded", []string{"run", "--lease", "mem://" + memName("exit-ok"), "--", "true"}, 0, ""},
		{"command failed", []string{"run", "--lease", "mem://" + memName("exit-3"), "--", "sh", "-c", "exit 3"}, 3, ""},
		{"once: succeeded", []string{"run", "--once", "--lease", "mem://" + memName("exit-once-ok"), "--", "true"}, 0, ""},
		{"once: failed", []string{"run", "--once", "--lease", "mem://" + memName("exit-once-7"), "--", "sh", "-c", "exit 7"}, 7, ""},
		{"once: killed by a signal", []string{"run", "--once", "--lease", "mem://" + memName("exit-once-kill"), "--", "sh", "-c", "kill -KILL $$"}, 137, ""},
		{"once: not elected", []string{"run", "--once", "--ttl", "1s", "--lease", held, "--", "true"}, exitNotElected,
			`not elected: the lease is held by "holder"`},
		{"once: stepped down as unhealthy", []string{"run", "--once", "--ttl", "1s", "--lease", "mem://" + memName("exit-sick"),
			"--health-cmd", "echo disk full; exit 1", "--health-interval", "500ms", "--health-timeout", "500ms", "--health-threshold", "2", "--grace", "100ms",
			"--", "sleep", "30"}, exitSteppedDown, "disk full"},
		{"usage: no command", []string{"run", "--lease", "mem://x"}, exitUsage, "no command given"},
		{"usage: unknown subcommand", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"usage: no subcommand", nil, exitUsage, "no command given: want run, status, check, break, handoff, version or help"},
		{"usage: malformed duration", []string{"status", "--lease", "mem://x", "--watch", "5"}, exitUsage, `invalid value "5" for flag --watch`},
		{"config: unknown scheme", []string{"run", "--lease", "etcd://host/key", "--", "true"}, exitConfig, `unknown scheme "etcd" (registered: azblob, dynamodb, gs, mem, quorum, s3)`},
		{"config: malformed lease URL", []string{"status", "--lease", "s3://bucket"}, exitConfig, "names no key"},
		{"command not found", []string{"run", "--lease", "mem://x", "--", "no-such-command-here"}, exitNotFound, `command "no-such-command-here"`},
		{"command not executable", []string{"run", "--lease", "mem://x", "--", notExecutable}, exitCannotRun, "permission denied"},
		{"listen address unusable", []string{"run", "--lease", "mem://x", "--listen", "256.0.0.1:1", "--", "true"}, exitConfig, "--listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := leasehold(t, context.Background(), tc.args...)
			if code != tc.want {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			lines := errorLines(stderr)
			switch {
			case tc.line == "" && len(lines) > 0:
				t.Fatalf("leasehold printed %q, want no error line", lines)
			case tc.line != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.line)):
				t.Fatalf("leasehold printed %q, want one line containing %q; stderr:\n%s", lines, tc.line, stderr)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Fatalf("stderr has a stack trace:\n%s", stderr)
			}
		})
	}
}

func TestOnceInterruptedExitsWithTheSignal(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	env, _, stderr := testEnv(nil)
	done := make(chan int, 1)
	go func() {
		done <- mainWith(ctx, nil, []string{"run", "--once", "--lease", "mem://" + memName("exit-interrupted"), "--grace", "5s", "--", "sleep", "30"}, env)
	}()
	eventually(t, 10*time.Second, "the command started", func() bool { return strings.Contains(stderr.String(), "command started") })
	cancel(&signalCause{sig: 15})
	select {
	case code := <-done:
		if code != 143 {
			t.Fatalf("exit status %d, want 143 (128+SIGTERM); stderr:\n%s", code, stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("leasehold did not stop")
	}
}

func TestExitCodeOfErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"child status", &childExit{code: 9}, 9},
		{"store unavailable", lease.ErrUnavailable, exitUnavailable},
		{"permission", lease.ErrPermission, exitConfig},
		{"wrapped exit", errors.Join(exitf(exitNotElected, "x")), exitNotElected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := exitCode(tc.err); got != tc.want {
				t.Fatalf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
