//go:build unix

package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/watch"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/shard"
)

func TestDescribe(t *testing.T) {
	held := lease.Record{Holder: "web-3", Token: 7, TTL: 15 * time.Second, Version: "v1"}
	renewed := held
	renewed.Version = "v2"
	other := lease.Record{Holder: "web-4", Token: 8, TTL: 15 * time.Second, Version: "v3"}
	released := held
	released.Released = true
	restored := held
	restored.Token, restored.Version = 6, "v0"
	handed := renewed
	handed.Annotations = handed.Annotations.With(lease.AnnotationSuccessor, "web-4")
	handedRestored := restored
	handedRestored.Annotations = handed.Annotations
	for _, tc := range []struct {
		name         string
		first, last  lease.Record
		watch        time.Duration
		native       bool
		wait         time.Duration // the Lease's own count (lease.Watcher)
		state, means string
		changed      bool
		unchanged    string
	}{
		{"never acquired", lease.Record{}, lease.Record{}, 0, false, 0, "none", "never acquired", false, "0s"},
		{"released", released, released, 0, false, 0, "released", "with token 8", false, "0s"},
		{"read once", held, held, 0, false, 15 * time.Second, "held", "read once", false, "0s"},
		{"renewed during the watch", held, renewed, 5 * time.Second, false, 15 * time.Second, "held", "the leader is alive", true, "0s"},
		{"changed hands", held, other, 5 * time.Second, false, 15 * time.Second, "held", "changed hands during the watch (token 7 to 8)", true, "0s"},
		{"went back", held, restored, 5 * time.Second, false, 15 * time.Second, "held", "went back during the watch (token 7 to 6", true, "0s"},
		{"short watch, unchanged", held, held, 5 * time.Second, false, 10 * time.Second, "held", "watch for the TTL", false, "5s"},
		{"unchanged for the TTL", held, held, 15 * time.Second, false, 0, "lapsed", "the holder is gone", false, "15s"},
		{"unchanged for the TTL, the count broken", held, held, 15 * time.Second, false, 4 * time.Second, "held", "not in an unbroken run of reads", false, "15s"},
		{"native lease, unchanged for the TTL", held, held, 15 * time.Second, true, 0, "held", "judges expiry itself", false, "15s"},
		{"native lease lapsed or released", released, released, 0, true, 0, "released", "or its lease lapsed", false, "0s"},
		{"handed", held, handed, 5 * time.Second, false, 15 * time.Second, "held", "handed by web-3 to web-4, which takes it at once with token 8", true, "0s"},
		{"handed, read once", handed, handed, 0, false, 15 * time.Second, "held", "handed by web-3 to web-4", false, "0s"},
		{"handed, not taken for the TTL", handed, handed, 15 * time.Second, false, 0, "lapsed", "handed by web-3 to web-4, which has not taken it in its TTL", false, "15s"},
		{"a handed record restored", held, handedRestored, 5 * time.Second, false, 15 * time.Second, "held", "went back during the watch (token 7 to 6", true, "0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := describe("mem://x", watch.Watch{First: tc.first, Last: tc.last, For: tc.watch, Native: tc.native, Wait: tc.wait})
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

	// A scheduled job's period shows.
	job := "mem://" + memName("status-period")
	env, _, stderr = testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"run", "--once", "--period", "2026-11-23T10:00:00Z", "--lease", job, "--", "true"}, env); code != 0 {
		t.Fatalf("run --once --period: exit %d; stderr:\n%s", code, stderr)
	}
	env, stdout, _ = testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", job}, env); code != 0 || !strings.Contains(stdout.String(), "period         2026-11-23T10:00:00Z (done)") {
		t.Fatalf("status after a period ran: exit %d, output:\n%s", code, stdout)
	}
	env, stdout, _ = testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", job, "-o", "json"}, env); code != 0 || !strings.Contains(stdout.String(), `"period": "2026-11-23T10:00:00Z",`) || !strings.Contains(stdout.String(), `"period_done": true`) {
		t.Fatalf("status -o json after a period ran: exit %d, output:\n%s", code, stdout)
	}
}

// TestGroupStatusShowsFencedEpochs: status --shards marks the shards at a
// fence's epoch, whose commands may have a lower LEASEHOLD_TOKEN, in text
// and in JSON, and only those.
func TestGroupStatusShowsFencedEpochs(t *testing.T) {
	st := shard.Status{Shards: 2, Gen: 2<<32 | 1, TTL: 15 * time.Second, RenewInterval: 5 * time.Second, Balanced: true, Members: []shard.MemberStatus{
		{Identity: "a", Token: 1, Live: true, Shards: []shard.Shard{{Index: 0, Epoch: 2 << 32}}, Fenced: []int{0}},
		{Identity: "b", Token: 1, Live: true, Shards: []shard.Shard{{Index: 1, Epoch: 2<<32 | 1}}},
	}}
	rep := describeGroup("mem://g", groupSpec{n: 2}, st, 15*time.Second)
	if !slices.Equal(rep.Members[0].Fenced, []int{0}) || rep.Members[1].Fenced != nil {
		t.Fatalf("members %+v; want a's shard 0 fenced, none of b's", rep.Members)
	}
	var out strings.Builder
	printGroup(&out, rep)
	lines := strings.Split(out.String(), "\n")
	fenced := "1 at a fence's epoch: a command running since before the fence has a lower LEASEHOLD_TOKEN"
	if !strings.Contains(lines[3], "a (token 1") || !strings.Contains(lines[3], fenced) || strings.Contains(lines[4], "fence") {
		t.Fatalf("status --shards printed\n%s\nwant a's line alone to say %q", out.String(), fenced)
	}
}
