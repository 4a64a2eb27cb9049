//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease/driver"
)

// shardSpan is one run of a shard's command, from the shard journal.
type shardSpan struct {
	shard      int
	epoch      uint64
	who        string
	pid        int
	start, end int64
	ended      bool
}

// shardJournalScript writes "start", "tick" every 50ms and "end" on
// SIGTERM, each with its shard, epoch, identity, PID and CLOCK_MONOTONIC;
// it ignores SIGTERM once the file $JOURNAL.stubborn.IDENTITY exists
// (stubborn).
const shardJournalScript = `#!/bin/sh
now() { "$MONOTIME"; }
line() { echo "$1 $LEASEHOLD_SHARD $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY $$ $(now)" >> "$JOURNAL"; }
trap '[ -e "$JOURNAL.stubborn.$LEASEHOLD_IDENTITY" ] || { line end; exit 0; }' TERM
line start
while :; do line tick; sleep 0.05; done
`

// shardSpans reads the shard journal.
func (e *e2e) shardSpans() []shardSpan {
	e.t.Helper()
	f, err := os.Open(e.journal)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	byPID := map[int]*shardSpan{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 {
			continue // a line cut short by SIGKILL
		}
		s, _ := strconv.Atoi(fs[1])
		epoch, _ := strconv.ParseUint(fs[2], 10, 64)
		pid, _ := strconv.Atoi(fs[4])
		at, err := strconv.ParseInt(fs[5], 10, 64)
		if err != nil {
			continue
		}
		sp := byPID[pid]
		if sp == nil {
			sp = &shardSpan{shard: s, epoch: epoch, who: fs[3], pid: pid, start: at, end: at}
			byPID[pid] = sp
		}
		sp.start, sp.end = min(sp.start, at), max(sp.end, at)
		sp.ended = sp.ended || fs[0] == "end"
	}
	out := make([]shardSpan, 0, len(byPID))
	for _, sp := range byPID {
		out = append(out, *sp)
	}
	slices.SortFunc(out, func(a, b shardSpan) int { return int(a.start - b.start) })
	return out
}

// runningShards is, by identity, the shards whose commands are alive.
func (e *e2e) runningShards() map[string][]int {
	out := map[string][]int{}
	for _, sp := range e.shardSpans() {
		if alive(sp.pid) {
			out[sp.who] = append(out[sp.who], sp.shard)
		}
	}
	return out
}

// checkShardSpans fails the test if two runs of one shard overlap or its
// epochs do not increase.
func (e *e2e) checkShardSpans() {
	e.t.Helper()
	last := map[int]shardSpan{}
	for _, sp := range e.shardSpans() {
		prev, ok := last[sp.shard]
		switch {
		case !ok:
		case sp.start <= prev.end:
			e.t.Errorf("shard %d ran twice at once: %s (epoch %d) started %v before %s (epoch %d) last ran",
				sp.shard, sp.who, sp.epoch, time.Duration(prev.end-sp.start), prev.who, prev.epoch)
		case sp.epoch <= prev.epoch:
			e.t.Errorf("shard %d: epochs did not increase: %d then %d", sp.shard, prev.epoch, sp.epoch)
		}
		last[sp.shard] = sp
	}
}

// TestEndToEndShards: two leasehold run --shards processes on MinIO share 4
// shards 2 and 2; one stopped with SIGTERM stops its commands (they write
// their end) and the other runs all 4; restarted under its identity it gets
// two back; the other killed with SIGKILL takes its commands with it, and
// its shards run again on the survivor after its TTL. Never two commands
// of one shard at once, epochs increasing per shard; leasehold status
// --shards shows the group.
func TestEndToEndShards(t *testing.T) {
	e := newE2E(t)
	script := filepath.Join(e.dir, "shard.sh")
	if err := os.WriteFile(script, []byte(shardJournalScript), 0o755); err != nil {
		t.Fatal(err)
	}
	url := e.leaseURL(e.endpoint)
	start := func(who string) *proc {
		return e.start(who, "run", "--shards", "4", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--", script)
	}
	balanced := func(what string, want map[string]int) {
		t.Helper()
		eventually(t, 30*time.Second, what, func() bool {
			got := e.runningShards()
			for who, n := range want {
				if len(got[who]) != n {
					return false
				}
			}
			return len(got) == len(want)
		})
	}
	w1, w2 := start("w1"), start("w2")
	balanced("w1 and w2 run 2 shards each", map[string]int{"w1": 2, "w2": 2})

	stopAt := monotonic()
	w1.signal(syscall.SIGTERM)
	if code := w1.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("w1 exited %d after SIGTERM, want 0", code)
	}
	balanced("w2 runs all 4 after w1 left", map[string]int{"w2": 4})
	t.Logf("graceful leave: w2 runs all 4 shards %s after SIGTERM to w1", ms(monotonic()-stopAt))
	for _, sp := range e.shardSpans() {
		if sp.who == "w1" && !sp.ended {
			t.Errorf("w1's command of shard %d did not write its end line on SIGTERM", sp.shard)
		}
	}

	start("w1")
	balanced("w1, restarted, gets 2 back", map[string]int{"w1": 2, "w2": 2})

	var w2pids []int
	for _, sp := range e.shardSpans() {
		if sp.who == "w2" && alive(sp.pid) {
			w2pids = append(w2pids, sp.pid)
		}
	}
	killAt := monotonic()
	w2.signal(syscall.SIGKILL)
	eventually(t, 5*time.Second, "w2's commands die with it", func() bool {
		for _, pid := range w2pids {
			if alive(pid) {
				return false
			}
		}
		return true
	})
	balanced("w1 runs all 4 after w2 was killed", map[string]int{"w1": 4})
	t.Logf("crash: w1 runs all 4 shards %s after SIGKILL to w2 (TTL %v)", ms(monotonic()-killAt), e2eTTL)
	e.checkShardSpans()

	// w2's liveness record stays held after the kill: a watch of a TTL
	// tells it lapsed, and the group balanced over w1.
	p := e.start("status", "status", "--shards", "4", "--lease", url, "--watch", e2eTTL.String(), "-o", "json")
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("status --shards: exit %d", code)
	}
	var rep groupReport
	if err := json.Unmarshal([]byte(p.stdout.String()), &rep); err != nil || !rep.Balanced || rep.Shards != 4 {
		t.Fatalf("status --shards --watch -o json: %+v, %v; want a group of 4 balanced over w1", rep, err)
	}
}

// stubborn makes the shard commands of instance who ignore SIGTERM from
// now on (see shardJournalScript).
func (e *e2e) stubborn(who string) {
	e.t.Helper()
	if err := os.WriteFile(e.journal+".stubborn."+who, nil, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// assignerAndWorker writes shardJournalScript and starts w1, alone until
// it runs both of 2 shards (so the group's assigner), then w2, each with
// --ttl 2s and --grace 6s (longer than the TTL), and waits until each runs
// one shard. w1 reaches MinIO at w1Endpoint (a proxy in front of
// e.endpoint, say), w2 at e.endpoint. It returns w1 and the group's URL
// (with e.endpoint).
//
// The tests built on it need w1 to be the assigner still. On a loaded
// machine w1 can miss its renewals during the set-up, and w2 take the
// assigner lease; the set-up is then done again (both stopped, the
// journal emptied, a fresh group), up to 3 times.
func (e *e2e) assignerAndWorker(w1Endpoint string) (*proc, string) {
	e.t.Helper()
	script := filepath.Join(e.dir, "shard.sh")
	if err := os.WriteFile(script, []byte(shardJournalScript), 0o755); err != nil {
		e.t.Fatal(err)
	}
	start := func(who, url string) *proc {
		return e.start(who, "run", "--shards", "2", "--lease", url, "--identity", who, "--ttl", "2s", "--grace", "6s", "--", script)
	}
	runs := func(want map[string]int) func() bool {
		return func() bool {
			got := e.runningShards()
			return len(got) == len(want) && len(got["w1"]) == want["w1"] && len(got["w2"]) == want["w2"]
		}
	}
	for attempt := 1; ; attempt++ {
		url := e.leaseURL(e.endpoint)
		w1 := start("w1", strings.Replace(url, "endpoint="+e.endpoint, "endpoint="+w1Endpoint, 1))
		eventually(e.t, 30*time.Second, "w1 runs both shards", runs(map[string]int{"w1": 2}))
		w2 := start("w2", url)
		eventually(e.t, 30*time.Second, "w1 and w2 run one shard each", runs(map[string]int{"w1": 1, "w2": 1}))
		holder := e.assignerHolder(url)
		if holder == "w1" {
			return w1, url
		}
		if attempt == 3 {
			e.t.Fatalf("set-up: after 3 attempts the assigner lease is held by %q, not w1", holder)
		}
		e.t.Logf("set-up attempt %d: the assigner lease is held by %q, not w1 (w1 missed its renewals on this loaded machine); starting again", attempt, holder)
		for _, p := range []*proc{w1, w2} {
			p.signal(syscall.SIGTERM)
			p.wait(e.t, 30*time.Second)
		}
		if err := os.Remove(e.journal); err != nil && !errors.Is(err, os.ErrNotExist) {
			e.t.Fatal(err)
		}
	}
}

// assignerHolder returns the holder of the assigner lease of the group at
// url, as its record in MinIO reads, or "" if it is released or
// unreadable.
func (e *e2e) assignerHolder(url string) string {
	e.t.Helper()
	out, err := e.s3.GetObject(e.t.Context(), &s3.GetObjectInput{Bucket: aws.String(e2eBucket), Key: aws.String(assignerKey(e.t, url))})
	if err != nil {
		return ""
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return ""
	}
	rec, err := driver.DecodeJSON(b)
	if err != nil || rec.Released {
		return ""
	}
	return rec.Holder
}

// assignerKey is the key of the assigner lease of the group at url
// (shard's assignerKey).
func assignerKey(t *testing.T, url string) string {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/") + "/assigner"
}

// TestEndToEndAssignerLeaves: SIGTERM to the leasehold run --shards that is
// its group's assigner, whose command ignores SIGTERM for longer than the
// TTL: the other instance starts its shard only once leasehold killed the
// command at the end of --grace, never beside it. On main the assigner
// lease lapsed a TTL after the SIGTERM, and its successor started the
// shard while the command ran.
func TestEndToEndAssignerLeaves(t *testing.T) {
	e := newE2E(t)
	w1, _ := e.assignerAndWorker(e.endpoint)
	e.stubborn("w1")
	w1.signal(syscall.SIGTERM)
	if code := w1.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("w1 exited %d after SIGTERM, want 0", code)
	}
	eventually(t, 15*time.Second, "w2 runs both shards", func() bool { return len(e.runningShards()["w2"]) == 2 })
	e.checkShardSpans()
}

// assignerCommand returns the PID of the command w1 runs, and the key of
// the assigner lease of the group at url (shard's assignerKey).
func (e *e2e) assignerCommand(url string) (pid int, key string) {
	e.t.Helper()
	for _, sp := range e.shardSpans() {
		if sp.who == "w1" && alive(sp.pid) {
			pid = sp.pid
		}
	}
	return pid, assignerKey(e.t, url)
}

// TestEndToEndAssignerLeaseRestored: a restore of the assigner lease's
// record (its bytes of a renewal ago put back) ends the assigner's term
// at its next renewal, while its liveness renews on; its command, which
// ignores SIGTERM, is killed by the assigner lease's expiry, before the
// other instance can win that lease and start the shard, not at the end
// of --grace. On main it lived its whole --grace beside its successor.
func TestEndToEndAssignerLeaseRestored(t *testing.T) {
	e := newE2E(t)
	_, url := e.assignerAndWorker(e.endpoint)
	pid, key := e.assignerCommand(url)
	get := func() ([]byte, string) {
		out, err := e.s3.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(e2eBucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get %s: %v", key, err)
		}
		defer out.Body.Close()
		b, err := io.ReadAll(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b, aws.ToString(out.ETag)
	}
	old, oldTag := get()
	eventually(t, 5*time.Second, "the assigner lease renewed", func() bool { _, tag := get(); return tag != oldTag })
	e.stubborn("w1")
	restored := monotonic()
	if _, err := e.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(e2eBucket), Key: aws.String(key), Body: bytes.NewReader(old)}); err != nil {
		t.Fatalf("restore %s: %v", key, err)
	}
	eventually(t, 10*time.Second, "w1's command killed", func() bool { return !alive(pid) })
	for _, sp := range e.shardSpans() {
		if sp.pid == pid && sp.end > restored+int64(2*time.Second) {
			t.Errorf("w1's command ran %s after its assigner lease's record was restored; want it killed within the TTL (2s)", ms(sp.end-restored))
		}
	}
	eventually(t, 15*time.Second, "both shards run", func() bool {
		n := 0
		for _, s := range e.runningShards() {
			n += len(s)
		}
		return n == 2
	})
	e.checkShardSpans()
}

// TestEndToEndAssignerLeaseHangs: every call of the assigner's leasehold
// to its assigner lease's record hangs (w1 reaches MinIO through a fault
// proxy that holds the requests to that key, unanswered), while its
// liveness lease's calls are answered and renew on. Its assigner term
// ends at the renew deadline; its command, which ignores SIGTERM, is
// killed by the assigner lease's expiry, before the other instance can
// win that lease and start the shard, not at the end of --grace (6s).
func TestEndToEndAssignerLeaseHangs(t *testing.T) {
	e := newE2E(t)
	p := faultproxy.Start(t, e.endpoint)
	_, url := e.assignerAndWorker(p.URL)
	pid, key := e.assignerCommand(url)
	e.stubborn("w1")
	hung := monotonic()
	rule := p.Add(faultproxy.Rule{Match: faultproxy.PathSuffix("/" + e2eBucket + "/" + key), Fault: faultproxy.Hang()})[0]
	eventually(t, 10*time.Second, "w1's command killed", func() bool { return !alive(pid) })
	var killed shardSpan
	for _, sp := range e.shardSpans() {
		if sp.pid == pid {
			killed = sp
		}
	}
	if killed.ended {
		t.Fatalf("w1's command of shard %d wrote its end line: it did not ignore SIGTERM", killed.shard)
	}
	if p.Applied(rule) == 0 {
		t.Fatalf("no request of w1 to %s hung", key)
	}
	if killed.end > hung+int64(2*time.Second) {
		t.Errorf("w1's command ran %s after its assigner lease's calls began to hang; want it killed within the TTL (2s), not at the end of --grace (6s)", ms(killed.end-hung))
	}
	eventually(t, 15*time.Second, "both shards run", func() bool {
		n := 0
		for _, s := range e.runningShards() {
			n += len(s)
		}
		return n == 2
	})
	for _, sp := range e.shardSpans() {
		if sp.shard == killed.shard && sp.start > killed.end {
			t.Logf("w1's command of shard %d last ran %s after the hang began; %s's started %s after it (%d requests hung)",
				killed.shard, ms(killed.end-hung), sp.who, ms(sp.start-killed.end), p.Applied(rule))
			break
		}
	}
	e.checkShardSpans()
}
