//go:build linux

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/runner"
)

// The end-to-end tests build leasehold, start several `leasehold run`
// processes against MinIO from the local test stack (scripts/stack up
// minio; eval "$(scripts/stack env)"), each running a shell script that
// writes "start", "tick" and "end" lines with CLOCK_MONOTONIC timestamps to
// one journal, and check from the journal that no two commands ever ran at
// once, whatever happened to their leasehold.
const (
	e2eTTL           = 3 * time.Second
	e2eRenewDeadline = e2eTTL * 2 / 3 // the default
	e2eBucket        = "leasehold-cli-e2e"
)

// e2e is one end-to-end test's setup.
type e2e struct {
	t        *testing.T
	dir      string
	bin      string // leasehold
	script   string // the command
	journal  string
	env      []string
	endpoint string
	// s3 is a client of MinIO, for what a test does to the store itself.
	s3 *s3.Client
	// sys, if set, is how leasehold is started (the image test runs it
	// chrooted into the image, as its user).
	sys *syscall.SysProcAttr
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	endpoint := os.Getenv("LEASEHOLD_MINIO_ENDPOINT")
	if endpoint == "" {
		t.Skip(`leasehold end-to-end: MinIO is not configured: set LEASEHOLD_MINIO_ENDPOINT (scripts/stack up minio; eval "$(scripts/stack env)")`)
	}
	key, secret := os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), os.Getenv("LEASEHOLD_MINIO_SECRET_KEY")
	bins := buildBinaries(t)
	dir := t.TempDir()
	e := &e2e{t: t, dir: dir, bin: filepath.Join(bins, "leasehold"), script: filepath.Join(dir, "command.sh"),
		journal: filepath.Join(dir, "journal"), endpoint: endpoint}
	// The command: "start", then a "tick" every 50ms, and "end" on SIGTERM;
	// with "ignore-term" as its argument it ignores SIGTERM.
	script := `#!/bin/sh
now() { "$MONOTIME"; }
line() { echo "$1 $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY $$ $(now)" >> "$JOURNAL"; }
if [ "$1" = ignore-term ]; then trap '' TERM; else trap 'line end; exit 0' TERM; fi
line start
while :; do line tick; sleep 0.05; done
`
	if err := os.WriteFile(e.script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = append(os.Environ(),
		"AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "MONOTIME="+filepath.Join(bins, "monotime"), "JOURNAL="+e.journal)
	var err error
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")})
	e.s3 = client
	_, err = client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(e2eBucket)})
	var owned interface{ ErrorCode() string }
	if err != nil && !(errors.As(err, &owned) && (owned.ErrorCode() == "BucketAlreadyOwnedByYou" || owned.ErrorCode() == "BucketAlreadyExists")) {
		t.Fatalf("create bucket %s on %s: %v", e2eBucket, endpoint, err)
	}
	return e
}

// built is the directory the end-to-end tests build leasehold and the
// monotime helper into, once for all of them; TestMain removes it.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// buildBinaries builds leasehold and testdata/monotime, once, and returns
// their directory.
func buildBinaries(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("go is not on PATH: %w", err)
			return
		}
		if built.dir, built.err = os.MkdirTemp("", "leasehold-e2e-"); built.err != nil {
			return
		}
		args := []string{"build", "-o", built.dir + "/"}
		if exitedUnreaped == nil { // go test -tags leasehold_portable: the binary too
			args = append(args, "-tags", "leasehold_portable")
		}
		out, err := exec.Command(gobin, append(args, ".", "./testdata/monotime")...).CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

func TestMain(m *testing.M) {
	// Under nohup (or any parent that ignores SIGHUP) every process these
	// tests start would inherit SIGHUP ignored, and leasehold leaves an
	// ignored SIGHUP alone, so the tests of its SIGHUP handling would test
	// nohup's case instead and fail. A handler here gives every process
	// started the default disposition again (exec resets handled signals,
	// not ignored ones); the tests of nohup's case ignore it themselves.
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// leaseURL is a fresh lease on MinIO, reached at endpoint.
func (e *e2e) leaseURL(endpoint string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("s3://%s/%s/%s?endpoint=%s&use_path_style=true&region=us-east-1",
		e2eBucket, e.t.Name(), hex.EncodeToString(b), endpoint)
}

// proc is one leasehold process.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
	code   int
}

// start starts leasehold with args; its stderr is kept for the log.
func (e *e2e) start(name string, args ...string) *proc {
	e.t.Helper()
	p := &proc{name: name, cmd: exec.Command(e.bin, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = e.env
	p.cmd.SysProcAttr = e.sys
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		defer close(p.done)
		err := p.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			}
		}
	}()
	e.t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if e.t.Failed() {
			e.t.Logf("stderr of %s:\n%s", name, p.stderr)
		}
	})
	return p
}

// wait waits for p to exit and returns its status.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		t.Fatalf("%s did not exit within %v; stderr:\n%s", p.name, limit, p.stderr)
		return 0
	}
}

func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// run runs leasehold to its end and returns its status and stderr.
func (e *e2e) run(limit time.Duration, args ...string) (int, string) {
	e.t.Helper()
	p := e.start("leasehold "+strings.Join(args, " "), args...)
	code := p.wait(e.t, limit)
	return code, p.stderr.String()
}

// monotonic is CLOCK_MONOTONIC, the clock of the journal.
func monotonic() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// span is one run of the command, from the journal: from its start line to
// its end line, or its last tick when it was killed.
type span struct {
	token      uint64
	who        string
	pid        int
	start, end int64
	ended      bool // wrote "end" (stopped by SIGTERM)
}

// spans reads the journal.
func (e *e2e) spans() []span {
	e.t.Helper()
	f, err := os.Open(e.journal)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	byToken := map[uint64]*span{}
	var order []uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 5 {
			continue // a line cut short by SIGKILL
		}
		token, _ := strconv.ParseUint(fields[1], 10, 64)
		pid, _ := strconv.Atoi(fields[3])
		at, err := strconv.ParseInt(fields[4], 10, 64)
		if err != nil {
			continue
		}
		s := byToken[token]
		if s == nil {
			s = &span{token: token, who: fields[2], pid: pid, start: at, end: at}
			byToken[token] = s
			order = append(order, token)
		}
		s.start, s.end = min(s.start, at), max(s.end, at)
		s.ended = s.ended || fields[0] == "end"
	}
	out := make([]span, 0, len(order))
	for _, tok := range order {
		out = append(out, *byToken[tok])
	}
	slices.SortFunc(out, func(a, b span) int { return int(a.start - b.start) })
	return out
}

// waitSpans waits until the journal has n runs.
func (e *e2e) waitSpans(n int, limit time.Duration) []span {
	e.t.Helper()
	var got []span
	eventually(e.t, limit, fmt.Sprintf("%d runs of the command in the journal", n), func() bool {
		got = e.spans()
		return len(got) >= n
	})
	return got
}

// checkNoOverlap fails the test if two runs of the command overlap or
// tokens do not increase.
func (e *e2e) checkNoOverlap() {
	e.t.Helper()
	spans := e.spans()
	for i := 1; i < len(spans); i++ {
		prev, cur := spans[i-1], spans[i]
		if cur.start <= prev.end {
			e.t.Errorf("two commands at once: %s (token %d) started %v before %s (token %d) last ran",
				cur.who, cur.token, time.Duration(prev.end-cur.start), prev.who, prev.token)
		}
		if cur.token <= prev.token {
			e.t.Errorf("tokens did not increase: %d then %d", prev.token, cur.token)
		}
	}
}

func ms(ns int64) string { return time.Duration(ns).Round(time.Millisecond).String() }

// TestEndToEndHandoverAndFailover: three contenders; the leader is stopped
// with SIGTERM (its command ends and another starts promptly), then the
// next leader's leasehold is killed with SIGKILL: its command dies with it,
// and another starts only after the lease lapsed.
func TestEndToEndHandoverAndFailover(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	procs := map[string]*proc{}
	for _, who := range []string{"c1", "c2", "c3"} {
		procs[who] = e.start(who, "run", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--grace", "5s", "--", e.script)
	}
	first := e.waitSpans(1, 20*time.Second)[0]
	time.Sleep(e2eTTL) // the followers are watching; the leader has renewed

	stopAt := monotonic()
	procs[first.who].signal(syscall.SIGTERM)
	if code := procs[first.who].wait(t, 10*time.Second); code != 0 {
		t.Fatalf("%s exited %d after SIGTERM, want 0", first.who, code)
	}
	spans := e.waitSpans(2, 10*time.Second)
	old, second := spans[0], spans[1]
	if !old.ended {
		t.Fatalf("%s's command did not write its end line on SIGTERM", old.who)
	}
	t.Logf("graceful handover: %s's command ended %s after SIGTERM; %s's started %s later (%s after SIGTERM)",
		old.who, ms(old.end-stopAt), second.who, ms(second.start-old.end), ms(second.start-stopAt))
	if log := procs[first.who].stderr.String(); !strings.Contains(log, "released=true") {
		t.Errorf("%s did not release the lease after its command ended:\n%s", first.who, log)
	}

	time.Sleep(e2eTTL)
	killAt := monotonic()
	procs[second.who].signal(syscall.SIGKILL)
	eventually(t, 5*time.Second, second.who+"'s command dies with its leasehold", func() bool { return !alive(second.pid) })
	deadAt := monotonic()
	spans = e.waitSpans(3, 15*time.Second)
	third := spans[2]
	t.Logf("failover after SIGKILL: %s's command was dead %s after the kill; %s's started %s after the kill",
		second.who, ms(deadAt-killAt), third.who, ms(third.start-killAt))
	if third.start < deadAt {
		t.Errorf("%s's command started before %s's was seen dead", third.who, second.who)
	}
	// The killed leader's command was running, so its leasehold had renewed
	// within the renew deadline before the kill, and its lease could lapse
	// no sooner than a TTL after that renewal was sent.
	if lapsed := killAt + int64(e2eTTL-e2eRenewDeadline); third.start < lapsed {
		t.Errorf("%s's command started %v after the kill, before the lease could lapse (%v)",
			third.who, time.Duration(third.start-killAt), e2eTTL-e2eRenewDeadline)
	}
	e.checkNoOverlap()

	// --once against a live leader: not elected.
	began := time.Now()
	code, stderr := e.run(20*time.Second, "run", "--once", "--lease", url, "--identity", "cron", "--ttl", e2eTTL.String(), "--", "true")
	if code != exitNotElected || !strings.Contains(stderr, "not elected") {
		t.Errorf("--once with a live leader: exit %d, want %d; stderr:\n%s", code, exitNotElected, stderr)
	}
	t.Logf("--once with a live leader answered %d in %v", code, time.Since(began).Round(time.Millisecond))

	procs[third.who].signal(syscall.SIGTERM)
	procs[third.who].wait(t, 10*time.Second)
	e.checkNoOverlap()
}

// TestEndToEndBreak: leasehold break on MinIO. A live leader is refused
// without --force; with --force its command is stopped at its next renewal
// and the next term's token is greater. A dead leader's lease (its
// leasehold killed) is broken without --force, and the next contender
// takes it at once instead of waiting out the TTL.
func TestEndToEndBreak(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	ttl := "--ttl=" + e2eTTL.String()
	holder := e.start("holder", "run", "--lease", url, "--identity", "holder", ttl, "--", e.script)
	first := e.waitSpans(1, 20*time.Second)[0]

	if code, stderr := e.run(20*time.Second, "break", "--lease", url, ttl); code != exitRefused || !strings.Contains(stderr, "refused") {
		t.Fatalf("break of a live leader's lease: exit %d, want %d; stderr:\n%s", code, exitRefused, stderr)
	}
	if spans := e.spans(); len(spans) != 1 || !alive(first.pid) {
		t.Fatalf("a refused break disturbed the leader: runs %+v", spans)
	}

	breakAt := monotonic()
	if code, stderr := e.run(20*time.Second, "break", "--lease", url, ttl, "--force"); code != 0 {
		t.Fatalf("break --force: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	eventually(t, 2*e2eTTL, "the broken leader's command stops", func() bool { return !alive(first.pid) })
	spans := e.waitSpans(2, 15*time.Second) // the leader campaigns again: the lease is free
	old, next := spans[0], spans[1]
	t.Logf("break --force: the leader's command last ran %s after the break; the next term (token %d) began %s after it",
		ms(old.end-breakAt), next.token, ms(next.start-breakAt))
	// It stops at its next renewal, 3/8 of the TTL after the last; the
	// rest of a TTL is slack for a busy machine.
	if old.end > breakAt+int64(e2eTTL) {
		t.Errorf("the broken leader's command ran %s after the break, want it stopped at its next renewal (every %v)", ms(old.end-breakAt), runner.DefaultRenewInterval(e2eTTL))
	}
	if next.token <= old.token {
		t.Errorf("the term after the break has token %d, want more than %d", next.token, old.token)
	}

	// A dead leader: its leasehold killed, the lease left held.
	holder.signal(syscall.SIGKILL)
	holder.wait(t, 10*time.Second)
	eventually(t, 5*time.Second, "the killed leader's command dies with it", func() bool { return !alive(next.pid) })
	if code, stderr := e.run(20*time.Second, "break", "--lease", url, ttl); code != 0 {
		t.Fatalf("break of a dead leader's lease: exit %d, want 0; stderr:\n%s", code, stderr)
	}
	began := time.Now()
	if code, stderr := e.run(20*time.Second, "run", "--once", "--lease", url, "--identity", "after", ttl, "--",
		"sh", "-c", `echo "start $LEASEHOLD_TOKEN $LEASEHOLD_IDENTITY $$ $("$MONOTIME")" >> "$JOURNAL"`); code != 0 {
		t.Fatalf("run --once after the break: exit %d; stderr:\n%s", code, stderr)
	}
	spans = e.waitSpans(3, 5*time.Second)
	if last := spans[2]; last.who != "after" || last.token <= next.token {
		t.Errorf("after breaking a dead leader's lease, the next run is %s with token %d, want after with more than %d", last.who, last.token, next.token)
	}
	t.Logf("run --once after breaking the dead leader's lease took %v (no TTL to wait)", time.Since(began).Round(time.Millisecond))
	e.checkNoOverlap()
}

func TestEndToEndOnce(t *testing.T) {
	e := newE2E(t)
	for _, tc := range []struct {
		name string
		url  string
		cmd  []string
		want int
		line string
	}{
		{"ran and succeeded", e.leaseURL(e.endpoint), []string{"true"}, 0, ""},
		{"ran and failed", e.leaseURL(e.endpoint), []string{"sh", "-c", "exit 3"}, 3, ""},
		{"unreachable store", e.leaseURL("http://127.0.0.1:1"), []string{"true"}, exitUnavailable, "cannot reach the store"},
		{"missing bucket", strings.Replace(e.leaseURL(e.endpoint), e2eBucket, "no-such-bucket-here", 1), []string{"true"}, exitConfig, "lease: store not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := e.run(30*time.Second, append([]string{"run", "--once", "--lease", tc.url, "--ttl", e2eTTL.String(), "--start-timeout", "1s", "--"}, tc.cmd...)...)
			if code != tc.want {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.want, stderr)
			}
			lines := errorLines(stderr)
			if tc.line != "" && (len(lines) != 1 || !strings.Contains(lines[0], tc.line)) {
				t.Fatalf("error lines %q, want one containing %q", lines, tc.line)
			}
		})
	}
}

// TestEndToEndStubbornCommand: a command that ignores SIGTERM is killed
// after the grace period, longer than the TTL; meanwhile the lease stays
// renewed, and it is released only after the command died, so the follower
// starts right after that and not before.
func TestEndToEndStubbornCommand(t *testing.T) {
	e := newE2E(t)
	url := e.leaseURL(e.endpoint)
	const grace = 4 * time.Second // longer than the TTL
	leader := e.start("stubborn", "run", "--lease", url, "--identity", "stubborn", "--ttl", e2eTTL.String(), "--grace", grace.String(), "--", e.script, "ignore-term")
	first := e.waitSpans(1, 20*time.Second)[0]
	e.start("follower", "run", "--lease", url, "--identity", "follower", "--ttl", e2eTTL.String(), "--", e.script)
	time.Sleep(e2eTTL)

	stopAt := monotonic()
	leader.signal(syscall.SIGTERM)
	spans := e.waitSpans(2, 20*time.Second)
	if code := leader.wait(t, 10*time.Second); code != 0 {
		t.Errorf("the stubborn leader's leasehold exited %d, want 0", code)
	}
	old, next := spans[0], spans[1]
	if old.token != first.token || old.ended {
		t.Fatalf("journal %+v: want the stubborn command killed without an end line", spans)
	}
	t.Logf("stubborn command killed %s after SIGTERM (grace %v); the follower's started %s after its last tick",
		ms(old.end-stopAt), grace, ms(next.start-old.end))
	// The command ticks every few tens of milliseconds, later on a loaded
	// machine (126 ms late beside stress-ng): half a second of slack still
	// tells a kill at the grace period's end from one at the lease's
	// expiry (about a second after SIGTERM).
	if killed := time.Duration(old.end - stopAt); killed < grace-500*time.Millisecond {
		t.Errorf("the command's last tick was %v after SIGTERM, before the grace period (%v) ended", killed, grace)
	}
	if time.Duration(next.start-stopAt) < grace {
		t.Errorf("the follower started %v after SIGTERM, within the grace period: the lease was not kept", time.Duration(next.start-stopAt))
	}
	e.checkNoOverlap()
}

// TestEndToEndPartition: the leader reaches MinIO through a proxy that the
// test cuts (connections hang). Its command ignores SIGTERM; it must be dead
// before the follower's command starts.
func TestEndToEndPartition(t *testing.T) {
	e := newE2E(t)
	proxy := newCutProxy(t, strings.TrimPrefix(e.endpoint, "http://"))
	key := e.leaseURL(e.endpoint)
	viaProxy := strings.Replace(key, "endpoint="+e.endpoint, "endpoint=http://"+proxy.addr(), 1)
	leader := e.start("cut-off", "run", "--once", "--lease", viaProxy, "--identity", "cut-off", "--ttl", e2eTTL.String(), "--grace", "1m", "--", e.script, "ignore-term")
	first := e.waitSpans(1, 20*time.Second)[0]
	e.start("follower", "run", "--lease", key, "--identity", "follower", "--ttl", e2eTTL.String(), "--", e.script)
	time.Sleep(e2eTTL)

	cutAt := monotonic()
	proxy.cut()
	spans := e.waitSpans(2, 20*time.Second)
	old, next := spans[0], spans[1]
	if old.token != first.token {
		t.Fatalf("journal %+v", spans)
	}
	t.Logf("partition: the cut-off leader's command last ran %s after the cut; the follower's started %s after the cut",
		ms(old.end-cutAt), ms(next.start-cutAt))
	if code := leader.wait(t, 10*time.Second); code != exitSteppedDown {
		t.Errorf("the cut-off leader's leasehold exited %d, want %d", code, exitSteppedDown)
	}
	if alive(old.pid) {
		t.Errorf("the cut-off leader's command still runs")
	}
	e.checkNoOverlap()
}

// cutProxy forwards TCP connections to a target until cut; then it closes
// them and holds new ones open without answering, as a network partition.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	isCut  bool
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		cut := p.isCut
		p.mu.Unlock()
		if cut {
			continue // held open, never answered
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, up)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// cut drops the connections so far and black-holes new ones.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestEndToEndIgnoringStore: five `leasehold run --once`, started together
// against a store that accepts conditional writes and ignores them (the
// fault proxy in front of MinIO), all refuse it before writing: exit 78,
// one line saying what the store failed, and the command never runs.
func TestEndToEndIgnoringStore(t *testing.T) {
	e := newE2E(t)
	p := faultproxy.Start(t, e.endpoint)
	p.IgnoreConditions(aws.Credentials{AccessKeyID: os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), SecretAccessKey: os.Getenv("LEASEHOLD_MINIO_SECRET_KEY")})
	url := e.leaseURL(p.URL)
	var procs []*proc
	for i := range 5 {
		who := fmt.Sprintf("c%d", i+1)
		procs = append(procs, e.start(who, "run", "--once", "--lease", url, "--identity", who, "--ttl", e2eTTL.String(), "--", e.script))
	}
	for _, p := range procs {
		code := p.wait(t, 30*time.Second)
		stderr := p.stderr.String()
		lines := errorLines(stderr)
		if code != exitConfig || len(lines) != 1 || !strings.Contains(lines[0], "lease: store does not keep the contract") || !strings.Contains(lines[0], "If-None-Match") {
			t.Errorf("%s: exit %d, error lines %q; want %d and one line saying the store does not keep the contract; stderr:\n%s", p.name, code, lines, exitConfig, stderr)
		}
		if strings.Contains(stderr, "SDK ") {
			t.Errorf("%s: the AWS SDK logged to stderr:\n%s", p.name, stderr)
		}
	}
	if spans := e.spans(); len(spans) != 0 {
		t.Errorf("the command ran %d times on a store that ignores conditional writes, want never: %+v", len(spans), spans)
	}
}

// TestEndToEndNoCredentials: on a machine with no AWS credentials at all
// (no AWS_ variables, an empty home, instance metadata turned off or
// refusing), leasehold says that none were found and where it looked, in
// one line, exits 78, and the SDK logs nothing (it warns "falling back to
// IMDSv1" when the metadata service refuses a token, unless silenced).
func TestEndToEndNoCredentials(t *testing.T) {
	e := newE2E(t)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	t.Cleanup(imds.Close)
	for _, row := range []struct {
		name, env, imds string
	}{
		{"IMDSOff", "AWS_EC2_METADATA_DISABLED=true", "IMDS: turned off by AWS_EC2_METADATA_DISABLED"},
		{"IMDSRefuses", "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL, "IMDS: tried"},
	} {
		t.Run(row.name, func(t *testing.T) {
			cmd := exec.Command(e.bin, "run", "--once", "--lease", e.leaseURL(e.endpoint), "--", "true")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), row.env}
			var stderr syncBuffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			lines := errorLines(stderr.String())
			t.Logf("exit %d: %s", code, stderr.String())
			if code != exitConfig || len(lines) != 1 || !strings.Contains(lines[0], "no usable AWS credentials were found") ||
				!strings.Contains(lines[0], "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: not set") || !strings.Contains(lines[0], row.imds) {
				t.Errorf("exit %d, error lines %q; want %d and one line saying no credentials were found and where the SDK looked (%s)", code, lines, exitConfig, row.imds)
			}
			if strings.Contains(stderr.String(), "refused") || strings.Contains(stderr.String(), "SDK ") {
				t.Errorf("stderr %q: want no claim that credentials were refused, and no SDK log line", stderr.String())
			}
		})
	}
}
