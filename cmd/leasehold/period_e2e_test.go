//go:build linux

package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestEndToEndPeriod runs `leasehold run --once --period/--every/--min-hold`
// on every backend of the test stack: a period runs once, whichever
// instance fires for it and however late (exit 76 for the others, and for
// an earlier period); by default a period whose command failed has run,
// and --retry-failed runs it again; --every gives instances fired within
// the same hour one key; --min-hold keeps the next instance out for at
// least the hold after the command started.
func TestEndToEndPeriod(t *testing.T) {
	e := newE2E(t)
	for _, b := range []struct {
		name string
		ttl  time.Duration
		url  func(t *testing.T) string
	}{
		{"MinIO", e2eTTL, func(t *testing.T) string { return e.leaseURL(e.endpoint) }},
		{"dynalite", e2eTTL, func(t *testing.T) string {
			endpoint, table := dynaliteTable(t)
			return fmt.Sprintf("dynamodb://%s/period?endpoint=%s&region=us-east-1", table, url.QueryEscape(endpoint))
		}},
		{"Azurite", 15 * time.Second, func(t *testing.T) string {
			return "azblob://" + azuriteContainer(t) + "/period?connection_string_env=LEASEHOLD_AZURITE_CONNECTION_STRING"
		}},
		{"fake-gcs-server", e2eTTL, func(t *testing.T) string {
			bucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
			if os.Getenv("STORAGE_EMULATOR_HOST") == "" || bucket == "" {
				t.Skip(`leasehold on fake-gcs-server: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up gcs; eval "$(scripts/stack env)")`)
			}
			return "gs://" + bucket + "/" + randomName("period-")
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			e := *e
			e.t = t
			testPeriodOn(&e, b.url(t), b.ttl)
		})
	}
}

func testPeriodOn(e *e2e, leaseURL string, ttl time.Duration) {
	t := e.t
	ran := filepath.Join(t.TempDir(), "ran")
	// once runs one instance for args and returns its exit status and
	// error line; its command appends the period it ran for to ran.
	once := func(who string, args ...string) (int, string) {
		t.Helper()
		cmd := []string{"run", "--once", "--lease", leaseURL, "--identity", who, "--ttl", ttl.String()}
		cmd = append(append(cmd, args...), "--", "sh", "-c", `echo "$LEASEHOLD_PERIOD" >> "$RAN"; exit "${EXIT:-0}"`)
		code, stderr := e.run(time.Minute, cmd...)
		lines := errorLines(stderr)
		return code, strings.Join(lines, "\n")
	}
	e.env = append(e.env, "RAN="+ran)
	want := func(what string, code int, line string, wantCode int, wantLine string) {
		t.Helper()
		if code != wantCode || !strings.Contains(line, wantLine) {
			t.Errorf("%s: exit %d, %q; want exit %d and a line containing %q", what, code, line, wantCode, wantLine)
		}
	}
	const p1, p2 = "2026-11-23T10:00:00Z", "2026-11-23T11:00:00Z"
	code, line := once("a", "--period", p1)
	want("a, first for period 1", code, line, 0, "")
	code, line = once("b", "--period", p1)
	want("b, late for period 1", code, line, exitAlreadyRan, "period "+p1+" already ran: the lease names period "+p1+" (done)")
	code, line = once("b", "--period", "2026-11-23T09:00:00Z")
	want("b, for an earlier period", code, line, exitAlreadyRan, "already ran")

	e.env = append(e.env, "EXIT=3")
	code, line = once("a", "--period", p2)
	want("a, period 2, the command fails", code, line, 3, "")
	e.env = e.env[:len(e.env)-1]
	code, line = once("b", "--period", p2)
	want("b, period 2 failed, at most once", code, line, exitAlreadyRan, "(started)")
	code, line = once("b", "--period", p2, "--retry-failed")
	want("b, period 2 failed, --retry-failed", code, line, 0, "")
	code, line = once("c", "--period", p2, "--retry-failed")
	want("c, period 2 done, --retry-failed", code, line, exitAlreadyRan, "(done)")

	code, line = once("a", "--every", "1h")
	want("a, --every 1h", code, line, 0, "")
	code, line = once("b", "--every", "1h")
	want("b, --every 1h, later in the same hour", code, line, exitAlreadyRan, "already ran")

	got, err := os.ReadFile(ran)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 4 || lines[0] != p1 || lines[1] != p2 || lines[2] != p2 || !strings.HasSuffix(lines[3], ":00:00Z") {
		t.Errorf("the commands ran for %q; want %s, %s twice (failed, retried), and the hour's key", lines, p1, p2)
	}

	// --min-hold: a holds the lease for the hold after its command
	// started, renewing it. b, fired meanwhile, is answered that the lease
	// is held (exit 75) within a renew interval and a margin, whether the
	// hold is shorter or longer than its own OnceTimeout (TTL + 3 campaign
	// intervals, 6s here); fired again once a has returned, it runs.
	stamp := func(who, file string, args ...string) int {
		cmd := []string{"run", "--once", "--lease", leaseURL, "--identity", who, "--ttl", ttl.String()}
		cmd = append(append(cmd, args...), "--", "sh", "-c", `"$MONOTIME" > "$1"`, "sh", file)
		code, _ := e.run(time.Minute, cmd...)
		return code
	}
	for _, hold := range []time.Duration{4 * time.Second, 9 * time.Second} {
		aFile, bFile := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		aDone := make(chan int, 1)
		// A stall watchdog with no progress to watch: it must not cut the
		// hold short once the command has exited (on Azure it did).
		go func() {
			aDone <- stamp("a", aFile, "--min-hold", hold.String(), "--stall-timeout", "1s", "--progress-on-stdout")
		}()
		for !fileExists(aFile) {
			time.Sleep(20 * time.Millisecond)
		}
		began := time.Now()
		if code := stamp("b", bFile); code != exitNotElected {
			t.Fatalf("b fired during a's --min-hold %v: exit %d, want %d (not elected)", hold, code, exitNotElected)
		}
		if took := time.Since(began); took > ttl {
			t.Errorf("b fired during a's --min-hold %v took %v to answer, want a renew interval and a margin", hold, took)
		}
		if code := <-aDone; code != 0 {
			t.Fatalf("a with --min-hold %v: exit %d", hold, code)
		}
		if code := stamp("b", bFile); code != 0 {
			t.Fatalf("b fired after a returned: exit %d, want 0", code)
		}
		// The hold counts from when a's runner started its command, a few
		// milliseconds before the shell took its stamp (more under load):
		// allow that much, far less than the renew interval by which a hold
		// cut short would come early.
		const execSlack = 250 * time.Millisecond
		aAt, bAt := readStamp(t, aFile), readStamp(t, bFile)
		if gap := time.Duration(bAt - aAt); gap < hold-execSlack {
			t.Errorf("b's command started %v after a's, within a's --min-hold %v", gap, hold)
		} else {
			t.Logf("b's command started %v after a's (--min-hold %v)", gap.Round(time.Millisecond), hold)
		}
	}
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func readStamp(t *testing.T, file string) int64 {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return n
}

// TestOnceHoldThroughFailingWrites: leasehold run --once --period
// --retry-failed --min-hold, in this process on memlease, with writes that
// fail around the end of the command: the done mark and the hold are
// written at once and kept (retried within the renew deadline), so a
// second trigger of the period during the hold exits 76 (already ran, done)
// and a duplicate without a period exits 75, and the lease is released with
// the period done once the hold is over (rule 13; findings 3-5 of the
// engine review).
func TestOnceHoldThroughFailingWrites(t *testing.T) {
	name := "mem://" + memName("hold")
	const period = "2026-11-23T10:00:00Z"
	ctx := t.Context()
	done := make(chan int, 1)
	started := time.Now()
	go func() {
		code, _ := leasehold(t, ctx, "run", "--once", "--lease", name, "--identity", "holder", "--ttl", "1s",
			"--period", period, "--retry-failed", "--min-hold", "3s", "--stall-timeout", "300ms", "--progress-on-stdout", "--", "sh", "-c", "for i in 1 2 3 4; do echo $i; sleep 0.1; done")
		done <- code
	}()
	time.Sleep(300 * time.Millisecond)
	memlease.Default.FailNext("holder", 2) // the writes around the command's end fail, then succeed
	time.Sleep(time.Second)
	if code, stderr := leasehold(t, ctx, "run", "--once", "--lease", name, "--identity", "again", "--ttl", "1s", "--period", period, "--retry-failed", "--", "true"); code != exitAlreadyRan {
		t.Errorf("the period fired again during the hold: exit %d, want %d (already ran, done); stderr:\n%s", code, exitAlreadyRan, stderr)
	}
	if code, stderr := leasehold(t, ctx, "run", "--once", "--lease", name, "--identity", "dup", "--ttl", "1s", "--", "true"); code != exitNotElected {
		t.Errorf("a duplicate without a period during the hold: exit %d, want %d (not elected); stderr:\n%s", code, exitNotElected, stderr)
	}
	if code := <-done; code != 0 {
		t.Fatalf("the holder exited %d, want 0", code)
	}
	if took := time.Since(started); took < 3*time.Second {
		t.Errorf("the holder exited %v after it started, want after the hold (3s)", took)
	}
	l, err := memlease.Default.Open(strings.TrimPrefix(name, "mem://"), lease.Options{Identity: "observer", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := l.Observe(ctx)
	if s := runner.ScheduleOf(rec.Annotations); err != nil || !rec.Released || !s.Done || s.Hold {
		t.Errorf("record after the hold: %+v, %v; want released with the period done", rec, err)
	}
}

// TestRetryFailedDuplicate: with --retry-failed, a duplicate fired while
// the period's command runs watches the record, as --once does any held
// lease, until it changes: it exits 75 (not elected) at the winner's next
// renewal when the command still runs then; when the command ended
// first, it exits 76 if the command succeeded, and runs the period
// itself if it failed (docs/scheduled-jobs.md).
func TestRetryFailedDuplicate(t *testing.T) {
	const ttl, period = 4 * time.Second, "2026-11-23T10:00:00Z"
	ctx := t.Context()
	for _, tc := range []struct {
		name    string
		command string // the winner's
		winner  int    // its exit
		dup     int    // the duplicate's
	}{
		{"the command outlasts a renew interval", "sleep 4", 0, exitNotElected},
		{"a short command that succeeds", "sleep 0.2", 0, exitAlreadyRan},
		{"a short command that fails", "sleep 0.2; exit 3", 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "mem://" + memName("retry-dup")
			started := filepath.Join(t.TempDir(), "started")
			once := func(who, command string) (int, string) {
				return leasehold(t, ctx, "run", "--once", "--lease", name, "--identity", who, "--ttl", ttl.String(),
					"--period", period, "--retry-failed", "--", "sh", "-c", command)
			}
			winner := make(chan int, 1)
			go func() {
				code, _ := once("winner", `touch "`+started+`"; `+tc.command)
				winner <- code
			}()
			eventually(t, 10*time.Second, "the winner's command started", func() bool { return fileExists(started) })
			if code, stderr := once("duplicate", "true"); code != tc.dup {
				t.Errorf("the duplicate exited %d, want %d; stderr:\n%s", code, tc.dup, stderr)
			}
			if code := <-winner; code != tc.winner {
				t.Errorf("the winner exited %d, want %d", code, tc.winner)
			}
		})
	}
}
