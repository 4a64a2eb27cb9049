//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestEndpoints(t *testing.T) {
	st := &leaderState{m: newMetrics()}
	h := st.handler()
	if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d, want 200", code)
	}
	st.observed("web-2")
	if code, body := get(t, h, "/leader"); code != http.StatusServiceUnavailable || !strings.Contains(body, "web-2") {
		t.Fatalf("/leader as a follower: %d %q, want 503 naming the leader", code, body)
	}
	st.elected(lease.Term{Token: 7})
	st.setLeading(true, 7)
	if code, body := get(t, h, "/leader"); code != http.StatusOK || !strings.Contains(body, "token 7") {
		t.Fatalf("/leader while leading: %d %q, want 200 with the token", code, body)
	}
	st.m.renewed(20*time.Millisecond, nil)
	st.m.renewed(time.Second, fmt.Errorf("x: %w", lease.ErrUnavailable))
	st.m.renewed(time.Second, fmt.Errorf("x: %w", lease.ErrLost))
	st.demoted(runner.Demotion{Reason: runner.DeadlinePassed, Token: 7})
	if code, _ := get(t, h, "/leader"); code != http.StatusServiceUnavailable {
		t.Fatalf("/leader after the demotion: %d, want 503", code)
	}
	_, metrics := get(t, h, "/metrics")
	for _, want := range []string{
		"leasehold_is_leader 0",
		`leasehold_transitions_total{reason="elected"} 1`,
		`leasehold_transitions_total{reason="renew_deadline_passed"} 1`,
		`leasehold_transitions_total{reason="lease_lost"} 0`,
		"leasehold_renew_duration_seconds_count 3",
		`leasehold_renew_failures_total{reason="unavailable"} 1`,
		`leasehold_renew_failures_total{reason="lost"} 1`,
		"go_goroutines",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestFailureReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("a: %w", lease.ErrLost), "lost"},
		{context.DeadlineExceeded, "timeout"},
		{fmt.Errorf("%w: no answer within CallTimeout: %w", lease.ErrUnavailable, context.DeadlineExceeded), "timeout"},
		{lease.ErrUnavailable, "unavailable"},
		{lease.ErrPermission, "permission"},
		{lease.ErrCorrupt, "corrupt"},
		{errors.New("?"), "other"},
	} {
		if got := failureReason(tc.err); got != tc.want {
			t.Errorf("failureReason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestHealthCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusNoContent)
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			<-r.Context().Done()
		default:
			http.Error(w, "database down", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		cmd, url string
		want     string // "" for healthy
	}{
		{"command succeeds", "true", "", ""},
		{"command fails", "echo out of disk >&2; exit 2", "", "out of disk"},
		{"command hangs", "sleep 30", "", "no answer in time"},
		{"URL answers 2xx", "", srv.URL + "/ok", ""},
		{"URL answers 503", "", srv.URL + "/sick", "503 Service Unavailable: database down"},
		{"URL redirects", "", srv.URL + "/moved", "302 Found"},
		{"URL hangs", "", srv.URL + "/slow", "context deadline exceeded"},
		{"both, URL fails", "true", srv.URL + "/sick", "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			began := time.Now()
			err := healthCheck(tc.cmd, tc.url, nil)(ctx)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unhealthy: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Fatalf("the check took %v, past its timeout", took)
			}
		})
	}
	if healthCheck("", "", nil) != nil {
		t.Fatal("healthCheck without a command or URL is not nil")
	}
}

func TestDescribe(t *testing.T) {
	held := lease.Record{Holder: "web-3", Token: 7, TTL: 15 * time.Second, Version: "v1"}
	renewed := held
	renewed.Version = "v2"
	other := lease.Record{Holder: "web-4", Token: 8, TTL: 15 * time.Second, Version: "v3"}
	released := held
	released.Released = true
	for _, tc := range []struct {
		name         string
		first, last  lease.Record
		watch        time.Duration
		native       bool
		state, means string
		changed      bool
		unchanged    string
	}{
		{"never acquired", lease.Record{}, lease.Record{}, 0, false, "none", "never acquired", false, "0s"},
		{"released", released, released, 0, false, "released", "with token 8", false, "0s"},
		{"read once", held, held, 0, false, "held", "read once", false, "0s"},
		{"renewed during the watch", held, renewed, 5 * time.Second, false, "held", "the leader is alive", true, "0s"},
		{"changed hands", held, other, 5 * time.Second, false, "held", "changed hands during the watch (token 7 to 8)", true, "0s"},
		{"short watch, unchanged", held, held, 5 * time.Second, false, "held", "watch for the TTL", false, "5s"},
		{"unchanged for the TTL", held, held, 15 * time.Second, false, "lapsed", "the holder is gone", false, "15s"},
		{"native lease, unchanged for the TTL", held, held, 15 * time.Second, true, "held", "judges expiry itself", false, "15s"},
		{"native lease lapsed or released", released, released, 0, true, "released", "or its lease lapsed", false, "0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := describe("mem://x", tc.first, tc.last, tc.watch, tc.native)
			if r.State != tc.state || !strings.Contains(r.Meaning, tc.means) || r.Changed != tc.changed || r.UnchangedFor != tc.unchanged {
				t.Fatalf("describe = %+v, want state %q, changed %t, unchanged for %s, meaning containing %q", r, tc.state, tc.changed, tc.unchanged, tc.means)
			}
		})
	}
}

func TestStatusCommand(t *testing.T) {
	held := "mem://" + memName("status-held")
	holdLease(t, held, "web-1", 3*time.Second)
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", held, "-o", "json", "--watch", "1500ms"}, env); code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{`"state": "held"`, `"holder": "web-1"`, `"token": 1`, `"ttl": "3s"`, `"changed": true`, `"released": false`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("status -o json lacks %s:\n%s", want, stdout)
		}
	}
	env, stdout, _ = testEnv(map[string]string{"LEASEHOLD_LEASE": held})
	if code := mainWith(context.Background(), nil, []string{"status"}, env); code != 0 || !strings.Contains(stdout.String(), "holder         web-1") {
		t.Fatalf("status from LEASEHOLD_LEASE: exit %d, output:\n%s", code, stdout)
	}
	env, stdout, _ = testEnv(map[string]string{"LEASEHOLD_LEASE": held, "LEASEHOLD_OUTPUT": "json"})
	if code := mainWith(context.Background(), nil, []string{"status"}, env); code != 0 || !strings.Contains(stdout.String(), `"holder": "web-1"`) {
		t.Fatalf("status with LEASEHOLD_OUTPUT=json: exit %d, output:\n%s", code, stdout)
	}
}

func TestStoreJudgesExpiry(t *testing.T) {
	if !storeJudgesExpiry("azblob://c/b?account=a") || storeJudgesExpiry("s3://b/k") || storeJudgesExpiry("dynamodb://t/n") {
		t.Fatal("only azblob:// leases are judged by their store")
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "run"}, {"run", "--help"}, {"status", "-h"}} {
		env, stdout, stderr := testEnv(nil)
		if code := mainWith(context.Background(), nil, args, env); code != 0 || stdout.String() == "" || stderr.String() != "" {
			t.Errorf("leasehold %s: exit %d, %d bytes of help, stderr %q", strings.Join(args, " "), code, len(stdout.String()), stderr)
		}
	}
	env, stdout, _ := testEnv(nil)
	mainWith(context.Background(), nil, []string{"run", "--help"}, env)
	for _, want := range []string{"LEASEHOLD_TOKEN", "LEASEHOLD_HEALTH_URL", "Exit status", "75", "stopTimeout", "CONTAINER_APP_REPLICA_NAME", "--once"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
}
