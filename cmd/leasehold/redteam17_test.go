//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// TestRedTeam17QuorumURLPasswordsRedacted: a quorum URL is a URL of URLs,
// "quorum:" and its members' joined by commas, and lease.RedactURL, which
// every message that quotes a lease URL goes through, saw only the outer,
// opaque URL: a member's password (s3://user:pw@bucket/key, refused by the
// backend, but quoted first) went out whole in leasehold run's first log
// line, in check's and status's "lease" row (red team 17).
func TestRedTeam17QuorumURLPasswordsRedacted(t *testing.T) {
	const secret = "hunter2"
	for _, u := range []string{
		"quorum:s3://AKIA:" + secret + "@b/k,s3://b2/k,s3://b3/k",
		"quorum:mem://a,mem://b,s3://AKIA:" + secret + "@b/k",
		"quorum:mem://a?x=1,s3://AKIA:" + secret + "@b/k,mem://c",
	} {
		if got := lease.RedactURL(u); strings.Contains(got, secret) {
			t.Errorf("RedactURL(%q) = %q: the member's password is in it", u, got)
		}
	}

	// run: the first log line quotes the lease before any member is opened.
	q := "quorum:s3://AKIA:" + secret + "@b/k,s3://b2/k,s3://b3/k"
	if code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true"); code != exitConfig || strings.Contains(stderr, secret) {
		t.Errorf("run on a quorum whose member carries a password: exit %d (want %d), and its stderr must not show the password:\n%s", code, exitConfig, stderr)
	}
	// status and check: the lease row (mem ignores user info, so they run).
	mq := "quorum:mem://op:" + secret + "@" + memName("ra") + ",mem://" + memName("rb") + ",mem://" + memName("rc")
	for _, args := range [][]string{{"status", "--lease", mq}, {"status", "--lease", mq, "-o", "json"}, {"check", "--lease", mq, "--ttl", "2s"}} {
		env, stdout, stderr := testEnv(nil)
		mainWith(context.Background(), nil, args, env)
		if out := stdout.String() + stderr.String(); strings.Contains(out, secret) || !strings.Contains(out, "mem://op:xxxxx@") {
			t.Errorf("leasehold %s: want the member's password shown as xxxxx, never itself:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestRedTeam17QuorumSchemeAnyCase: URL schemes are case-insensitive, and
// lease.Open opens "QUORUM:..." as the quorum it is; check and --shards
// told a quorum by the prefix "quorum:" alone. So check of "QUORUM:s3://a/k,..."
// checked the quorum as one lease of an unknown store ("the backend does
// not describe its store"): no member's conditional writes probed (rule
// 9), no credentials checked, no cost, and it passed; and run --shards
// gave a shard-store error for the refusal that names the quorum (red
// team 17).
func TestRedTeam17QuorumSchemeAnyCase(t *testing.T) {
	for _, scheme := range []string{"QUORUM", "Quorum"} {
		q := scheme + ":mem://" + memName("ua") + ",mem://" + memName("ub") + ",mem://" + memName("uc")
		env, stdout, stderr := testEnv(nil)
		if code := mainWith(context.Background(), nil, []string{"check", "--lease", q, "--ttl", "2s", "-o", "json"}, env); code != 0 {
			t.Fatalf("check %s: exit %d\n%s", q, code, stderr)
		}
		var rep checkReport
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, c := range rep.Checks {
			names[c.Check] = true
		}
		for _, want := range []string{"member 1 conditional writes", "member 2 permissions", "member 3 store"} {
			if !names[want] {
				t.Errorf("check %s: no %q among %v: the quorum was not checked member by member", q, want, names)
			}
		}
		code, errs := leasehold(t, context.Background(), "run", "--shards", "2", "--lease", q, "--ttl", "2s", "--start-timeout", "1s", "--", "true")
		if code != exitConfig || !strings.Contains(errs, "is a quorum: --shards works on one store's URL") {
			t.Errorf("run --shards on %s: exit %d, want %d and the refusal that names the quorum\n%s", q, code, exitConfig, errs)
		}
	}
}

// liveQuorumLeader is a leader of a quorum of three fresh mem:// members
// ("leader-1", TTL 2s) that renews until the test ends or a renewal is
// lost; lost reports the error that ended it, nil while it leads.
func liveQuorumLeader(t *testing.T, prefix string) (q string, names []string, lost func() error) {
	t.Helper()
	names = []string{memName(prefix + "a"), memName(prefix + "b"), memName(prefix + "c")}
	q = "quorum:mem://" + names[0] + ",mem://" + names[1] + ",mem://" + names[2]
	l, err := lease.Open(context.Background(), q, lease.Options{Identity: "leader-1", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	term, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu    sync.Mutex
		ended error
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(l.Options().RenewInterval):
			}
			nt, err := l.Renew(ctx, term)
			switch {
			case err == nil:
				term = nt
			case errors.Is(err, lease.ErrLost):
				mu.Lock()
				ended = err
				mu.Unlock()
				return
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return q, names, func() error { mu.Lock(); defer mu.Unlock(); return ended }
}

// TestRedTeam17HeldCheckStatusBreakOnALiveQuorum (held): on a quorum whose
// leader renews, one member holding a foreign object: check never writes
// a member (the leader's are held; the foreign one is refused unread),
// and the leader renews on; status shows it held, the foreign member
// unreadable; break without --force refuses; break --force breaks the
// term, and the leader's next renewal is lost.
func TestRedTeam17HeldCheckStatusBreakOnALiveQuorum(t *testing.T) {
	q, names, lost := liveQuorumLeader(t, "live")
	memlease.Default.Put(names[1], []byte("<html>not a lease</html>"))
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"check", "--lease", q, "--ttl", "2s"}, env); code != exitConfig {
		t.Errorf("check with member 2 foreign: exit %d, want %d\n%s%s", code, exitConfig, stdout, stderr)
	}
	for _, want := range []string{"member 1 permissions         skip  read allowed; write not tested: the lease is held by leader-1", "member 3 permissions         skip"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check of a live quorum: want %q in\n%s", want, stdout)
		}
	}
	for _, n := range []string{names[0], names[2]} {
		if rec := observe(t, n); rec.Holder != "leader-1" || !rec.Held() {
			t.Errorf("member %s after check: %+v, want the leader's", n, rec)
		}
	}
	env, stdout, stderr = testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", q}, env); code != 0 || !strings.Contains(stdout.String(), "holder         leader-1") || !strings.Contains(stdout.String(), "not a lease record") {
		t.Errorf("status with member 2 foreign: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, errs := leasehold(t, context.Background(), "break", "--lease", q); code != exitRefused {
		t.Errorf("break of a live quorum's lease: exit %d, want %d\n%s", code, exitRefused, errs)
	}
	if err := lost(); err != nil {
		t.Fatalf("the leader lost its term before --force: %v", err)
	}
	if code, errs := leasehold(t, context.Background(), "break", "--force", "--lease", q); code != 0 {
		t.Fatalf("break --force of a live quorum's lease: exit %d\n%s", code, errs)
	}
	eventually(t, 3*time.Second, "the leader's renewal lost after break --force", func() bool { return lost() != nil })
}

// TestRedTeam17HeldMinHoldOnAQuorum (held, rule 13): run --once
// --min-hold on a quorum keeps its hold through a SIGTERM after the
// command exited and a member's record deleted meanwhile: leasehold does
// not exit, the quorum's record stays held for the hold, and a duplicate
// fired then does not run the job.
func TestRedTeam17HeldMinHoldOnAQuorum(t *testing.T) {
	dir := t.TempDir()
	ran := dir + "/ran"
	names := []string{memName("mha"), memName("mhb"), memName("mhc")}
	q := "quorum:mem://" + names[0] + ",mem://" + names[1] + ",mem://" + names[2]
	env, _, stderr := testEnv(nil)
	ctx, cancel := context.WithCancelCause(context.Background())
	hurry := make(chan struct{})
	defer close(hurry)
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, hurry, []string{"run", "--once", "--lease", q, "--identity", "first", "--ttl", "2s",
			"--min-hold", "10m", "--", "sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran}, env)
	}()
	eventually(t, 10*time.Second, "the command ran", func() bool { _, err := os.Stat(ran); return err == nil })
	time.Sleep(300 * time.Millisecond)
	cancel(&signalCause{sig: 15})
	memlease.Default.Delete(names[0])
	select {
	case code := <-exited:
		t.Fatalf("leasehold exited %d within a 10m minimum hold on a quorum; stderr:\n%s", code, stderr)
	case <-time.After(5 * time.Second):
	}
	l, err := lease.Open(context.Background(), q, lease.Options{Identity: "observer", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := l.Observe(context.Background()); err != nil || rec.Holder != "first" || !rec.Held() || !runner.ScheduleOf(rec.Annotations).Hold {
		t.Errorf("the quorum's record during the hold: %+v, %v; want first's, held for the hold", rec, err)
	}
	code, _ := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--identity", "duplicate", "--ttl", "2s", "--",
		"sh", "-c", `echo "$LEASEHOLD_IDENTITY" >> "$0"`, ran)
	if b, _ := os.ReadFile(ran); strings.Count(string(b), "\n") > 1 {
		t.Errorf("a duplicate fired within the 10m hold on a quorum ran the job again (exited %d): %q", code, b)
	}
}

// TestRedTeam17HugeQuorumRefusedBeforeTheCampaign (rule 8: bad input gets
// a clear error and loses nothing): a quorum of 20,001 members (a URL of
// 400 KB) was opened, campaigned for and won, written to every member,
// and only then its command could not start: "cannot start true:
// fork/exec /usr/bin/true: argument list too long", exit 126, for a
// command with no arguments. The URL is given to the command in
// LEASEHOLD_LEASE, and Linux refuses a variable of 128 KiB or more. run
// refuses it at start, naming the flag and the limit, and writes nothing
// (red team 17).
func TestRedTeam17HugeQuorumRefusedBeforeTheCampaign(t *testing.T) {
	prefix := memName("huge")
	var ms []string
	for i := range 20001 {
		ms = append(ms, "mem://"+prefix+"-"+strconv.Itoa(i))
	}
	q := "quorum:" + strings.Join(ms, ",")
	code, stderr := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "given it in LEASEHOLD_LEASE") {
		t.Errorf("run on a quorum of 20,001 members: exit %d, want %d and the variable named\n%s", code, exitUsage, stderr[max(0, len(stderr)-600):])
	}
	if _, written := memlease.Default.Bytes(prefix + "-0"); written {
		t.Errorf("run on a quorum of 20,001 members wrote member 1 before refusing it")
	}
}

// TestRedTeam17CheckRefusesWhatRunRefuses (rule 8): check of a quorum
// checked its members one by one and passed a quorum of two members, or
// of one, which run refuses ("members (2) must be an odd number"): the
// count lived in quorumlease.New alone, which check never calls. And a
// member check could not open was not named in check's error line: the
// exit line is the exitError's own message, which the member's name
// wrapped from outside (red team 17).
func TestRedTeam17CheckRefusesWhatRunRefuses(t *testing.T) {
	for _, q := range []string{
		"quorum:mem://" + memName("e1") + ",mem://" + memName("e2"),
		"quorum:mem://" + memName("e3"),
	} {
		code, stderr := leasehold(t, context.Background(), "check", "--lease", q, "--ttl", "2s")
		if code != exitConfig || !strings.Contains(stderr, "must be an odd number, 3 or more") {
			t.Errorf("check %s: exit %d, want %d and the count refused as run refuses it\n%s", q, code, exitConfig, stderr)
		}
		if code, _ := leasehold(t, context.Background(), "run", "--once", "--lease", q, "--ttl", "2s", "--", "true"); code != exitConfig {
			t.Errorf("run --once %s: exit %d, want %d", q, code, exitConfig)
		}
	}
	code, stderr := leasehold(t, context.Background(), "check", "--lease", "quorum:mem://"+memName("n1")+",nope://b,mem://"+memName("n3"), "--ttl", "2s")
	if code != exitConfig || !strings.Contains(stderr, "leasehold: check: member 2 (nope://b): ") {
		t.Errorf("check of a quorum whose member 2 has an unknown scheme: exit %d, want %d and member 2 named\n%s", code, exitConfig, stderr)
	}
}

// TestRedTeam17StatusNamesAForeignMember (rule 8): status showed a member
// that holds someone else's object (read, and not a lease record) as
// "unreachable", the state of a member the read could not reach: an
// operator chased the network, and the json's state said so too. It is
// "foreign" (red team 17).
func TestRedTeam17StatusNamesAForeignMember(t *testing.T) {
	names := []string{memName("fa"), memName("fb"), memName("fc")}
	q := "quorum:mem://" + names[0] + ",mem://" + names[1] + ",mem://" + names[2]
	l, err := lease.Open(context.Background(), q, lease.Options{Identity: "leader-1", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	memlease.Default.Put(names[1], []byte("<html>not a lease</html>"))
	env, stdout, stderr := testEnv(nil)
	if code := mainWith(context.Background(), nil, []string{"status", "--lease", q, "-o", "json"}, env); code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	var rep statusReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Members) != 3 || rep.Members[1].State != "foreign" || !strings.Contains(rep.Members[1].Error, "not a lease record") || rep.Members[0].State != "held" {
		t.Errorf("status of a quorum whose member 2 holds a foreign object: members %+v, want member 2 foreign", rep.Members)
	}
	env, stdout, _ = testEnv(nil)
	mainWith(context.Background(), nil, []string{"status", "--lease", q}, env)
	if want := "member 2 (mem://" + names[1] + ") foreign: mem://" + names[1] + ": lease: not a lease record"; !strings.Contains(stdout.String(), want) {
		t.Errorf("status: want %q in\n%s", want, stdout)
	}
}

// TestRedTeam17HeldStopWithAHungMember (held): a quorum run whose third
// member (an S3 endpoint that accepts connections and never answers)
// hangs every call leads on its other two, and a SIGTERM stops the
// command and releases the quorum at once, not held up by the hung
// member's calls.
func TestRedTeam17HeldStopWithAHungMember(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "redteam17")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "redteam17")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	names := []string{memName("hang-a"), memName("hang-b")}
	q := "quorum:mem://" + names[0] + ",mem://" + names[1] + ",s3://bucket/key?region=us-east-1&use_path_style=true&endpoint=http://" + ln.Addr().String()
	ctx, cancel := context.WithCancelCause(context.Background())
	env, _, stderr := testEnv(nil)
	exited := make(chan int, 1)
	go func() {
		exited <- mainWith(ctx, nil, []string{"run", "--lease", q, "--ttl", "2s", "--start-timeout", "3s", "--", "sleep", "60"}, env)
	}()
	eventually(t, 5*time.Second, "elected", func() bool { return strings.Contains(stderr.String(), "command started") })
	time.Sleep(3 * time.Second) // four renewals, each with the hung member
	cancel(&signalCause{sig: 15})
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit %d after SIGTERM, want 0\n%s", code, stderr)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("leasehold did not exit within 5s of SIGTERM with a hung member\n%s", stderr)
	}
	if n := strings.Count(stderr.String(), "msg=elected"); n != 1 || strings.Count(stderr.String(), "msg=demoted") != 1 || !strings.Contains(stderr.String(), "reason=stopped") {
		t.Errorf("want one term, ended by the SIGTERM alone (elected %d times)\n%s", n, stderr)
	}
	for _, n := range names {
		if rec := observe(t, n); rec.Held() {
			t.Errorf("member %s after the stop: %+v, want it released", n, rec)
		}
	}
}
