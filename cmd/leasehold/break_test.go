//go:build unix

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

// reportJSON runs leasehold cmd -o json with args and returns its exit
// status, its report and its stderr.
func reportJSON[R any](t *testing.T, cmd string, args ...string) (int, R, string) {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	code := mainWith(context.Background(), nil, append([]string{cmd, "-o", "json"}, args...), env)
	var rep R
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("leasehold %s: exit %d, not a JSON report (%v):\n%s\nstderr:\n%s", cmd, code, err, stdout, stderr)
	}
	return code, rep, stderr.String()
}

// breakJSON runs leasehold break -o json with args.
func breakJSON(t *testing.T, args ...string) (int, breakReport, string) {
	t.Helper()
	return reportJSON[breakReport](t, "break", args...)
}

// statusJSON runs leasehold status -o json with args.
func statusJSON(t *testing.T, args ...string) (int, statusReport, string) {
	t.Helper()
	return reportJSON[statusReport](t, "status", args...)
}

// TestBreak runs leasehold break on the in-memory store, in fake time: the
// verdict (a holder is alive if its record changes within its TTL) and the
// act.
func TestBreak(t *testing.T) {
	const ttl = 3 * time.Second
	for _, tc := range []struct {
		name string
		// setup makes the lease's holder, if any.
		setup        func(t *testing.T, url string)
		force        bool
		code         int
		broken       bool
		state        string
		verdict      string
		tokenAtLeast uint64 // of the next acquisition after break
	}{
		{
			name:         "never acquired: nothing to break",
			setup:        func(*testing.T, string) {},
			code:         0,
			state:        "none",
			verdict:      "nothing to break",
			tokenAtLeast: 1,
		},
		{
			name: "a dead holder's lease is broken",
			setup: func(t *testing.T, url string) {
				if _, err := openLeaseAs(t, url, "gone", ttl).Acquire(t.Context()); err != nil {
					t.Fatal(err)
				}
			},
			code:         0,
			broken:       true,
			state:        "lapsed",
			verdict:      "it is gone",
			tokenAtLeast: 2,
		},
		{
			name:    "a live holder is refused",
			setup:   func(t *testing.T, url string) { holdLease(t, url, "alive", ttl) },
			code:    exitRefused,
			state:   "held",
			verdict: "renewed it during the watch",
		},
		{
			name:         "a live holder is broken with --force",
			setup:        func(t *testing.T, url string) { holdLease(t, url, "alive", ttl) },
			force:        true,
			code:         0,
			broken:       true,
			state:        "held",
			verdict:      "loses the lease at its next renewal",
			tokenAtLeast: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				url := "mem://" + memName("break")
				tc.setup(t, url)
				args := []string{"--lease", url, "--ttl", ttl.String()}
				if tc.force {
					args = append(args, "--force")
				}
				code, rep, stderr := breakJSON(t, args...)
				if code != tc.code || rep.Broken != tc.broken || rep.State != tc.state || !strings.Contains(rep.Verdict, tc.verdict) {
					t.Fatalf("break: exit %d, %+v; want exit %d, broken %t, state %s, verdict containing %q; stderr:\n%s",
						code, rep, tc.code, tc.broken, tc.state, tc.verdict, stderr)
				}
				next := openLeaseAs(t, url, "next", ttl)
				rec, err := next.Observe(t.Context())
				if tc.tokenAtLeast == 0 { // refused: the holder still holds it
					if err != nil || !rec.Held() || rec.Holder != rep.Holder || rec.Token != rep.Token {
						t.Fatalf("after a refused break the record is %+v (%v), want it held by %s with token %d", rec, err, rep.Holder, rep.Token)
					}
					return
				}
				if tc.broken && rep.NextToken != rep.Token+1 {
					t.Errorf("next_token %d, want %d", rep.NextToken, rep.Token+1)
				}
				// The next contender takes it within a poll or two (a live
				// holder broken with --force may take it back first).
				deadline := time.Now().Add(ttl + time.Second)
				for {
					term, err := next.Acquire(t.Context())
					if err == nil {
						if term.Token < tc.tokenAtLeast {
							t.Fatalf("the next acquisition's token is %d, want at least %d", term.Token, tc.tokenAtLeast)
						}
						return
					}
					if rec, _ := next.Observe(t.Context()); rec.Holder == "alive" && rec.Token >= tc.tokenAtLeast {
						return // the deposed holder campaigned again, with a greater token
					}
					if time.Now().After(deadline) {
						t.Fatalf("the lease was not free after break: %v", err)
					}
					time.Sleep(ttl / 10)
				}
			})
		})
	}
}

// TestBreakRestoreBetweenReads: a live holder's record is restored from a
// backup while break watches it, so that the version break first read is
// back when it reads again: break judges with the count a contender takes
// over by (reads within the holder's renew interval of each other), which
// sees the renewals in between, and refuses. Reading twice a TTL apart, it
// freed the live holder.
func TestBreakRestoreBetweenReads(t *testing.T) {
	const ttl = 3 * time.Second // the holder renews every 1.125s from 0
	synctest.Test(t, func(t *testing.T) {
		name := memName("break-restore")
		url := "mem://" + name
		holdLease(t, url, "alive", ttl)
		time.Sleep(1700 * time.Millisecond) // after the renewal at 1.125s
		backup, _ := memlease.Default.Bytes(name)
		restored := make(chan struct{})
		go func() {
			defer close(restored)
			// The backup goes back just before break's read a TTL after
			// its first, after the holder's renewal at 4.5s, before the
			// one at 5.625s.
			time.Sleep(ttl - 100*time.Millisecond)
			memlease.Default.Put(name, backup)
		}()
		code, rep, stderr := breakJSON(t, "--lease", url, "--ttl", ttl.String())
		<-restored
		if code != exitRefused || rep.Broken {
			t.Fatalf("break of a live holder whose record was restored meanwhile: exit %d, %+v; want exit %d, not broken; stderr:\n%s", code, rep, exitRefused, stderr)
		}
	})
}

func openLeaseAs(t *testing.T, url, identity string, ttl time.Duration) lease.Lease {
	t.Helper()
	l, err := lease.Open(t.Context(), url, lease.Options{Identity: identity, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
