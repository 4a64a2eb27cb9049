package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/internal/ctxtime"
	"github.com/leasehold/leasehold/lease"
)

// footprintStores are the stores -footprint measures unless -backends
// names others: one per cloud, and memory.
var footprintStores = []string{"mem", "minio", "dynalite", "azurite", "gcs"}

// footprintConfig is -footprint's part of the flags.
type footprintConfig struct {
	before, after string        // git revisions; "" the work tree
	idle          time.Duration // how long the idle leader and follower lead or follow before their RSS is read
	steady        time.Duration // how long a leader's CPU is measured at the default TTL
	runs          int           // runs of leasehold version and run --once, for the medians
}

// leaseholdBuild is one leasehold binary under measurement.
type leaseholdBuild struct {
	label string // "before", "after"
	what  string // the revision: "e979172", "work tree (f9417e4, dirty)"
	path  string
	size  int64
}

// footprint is one run's figures: cells[figure][store][build], each a
// value already shown, or "error" (with a note).
type footprint struct {
	builds []*leaseholdBuild
	stores []*store
	mu     sync.Mutex
	cells  map[string]map[string][]string
	notes  []string
}

func (f *footprint) set(figure, store string, b int, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cells[figure] == nil {
		f.cells[figure] = map[string][]string{}
	}
	if f.cells[figure][store] == nil {
		f.cells[figure][store] = make([]string, len(f.builds))
	}
	f.cells[figure][store][b] = v
}

func (f *footprint) fail(figure, store string, b int, err error) {
	f.set(figure, store, b, "error")
	f.notef("%s, %s, %s: %v", figure, store, f.builds[b].label, err)
}

func (f *footprint) notef(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, fmt.Sprintf(format, args...))
}

// footprintMain builds leasehold at -footprint-before and -footprint-after
// as scripts/release does, measures both on every store, and prints the
// table.
func footprintMain(ctx context.Context, c config) error {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return fmt.Errorf("-footprint: measures linux/amd64 release builds through /proc; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	dir, err := os.MkdirTemp("", "leasebench-footprint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := &footprint{cells: map[string]map[string][]string{}}
	for _, side := range []struct{ label, rev string }{{"before", c.footprint.before}, {"after", c.footprint.after}} {
		progress("footprint: building %s (%s)", side.label, cmp.Or(side.rev, "the work tree"))
		b, err := buildLeasehold(ctx, dir, side.label, side.rev)
		if err != nil {
			return fmt.Errorf("-footprint-%s %q: %w", side.label, side.rev, err)
		}
		f.builds = append(f.builds, b)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, st := range f.stores {
			st.cleanup(cctx)
		}
	}()
	for _, name := range c.backends {
		if _, ok := quorumMembers[name]; ok {
			f.notef("%s: skipped: -footprint measures single stores", name)
			continue
		}
		st, why, err := setupStore(ctx, name, c.ttl)
		if err != nil {
			return err
		}
		if st == nil {
			f.notef("%s: skipped: %s (scripts/stack up; eval \"$(scripts/stack env)\")", name, why)
			continue
		}
		f.stores = append(f.stores, st)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		return err
	}
	f.measure(ctx, c.footprint, home)
	if err := ctx.Err(); err != nil {
		return err
	}
	f.print(os.Stdout, c.markdown, c.footprint)
	return nil
}

// measure takes every figure: first the short processes, one at a time and
// the builds alternating, so that neither build runs on a machine the
// other's processes load; then the idle and renewing processes, all at
// once, as they mostly sleep.
func (f *footprint) measure(ctx context.Context, fc footprintConfig, home string) {
	for b, lb := range f.builds {
		f.set("binary", "", b, fmt.Sprintf("%.1f MB", float64(lb.size)/1e6))
	}
	progress("footprint: leasehold version, %d runs of each build", fc.runs)
	cpu := make([][]time.Duration, len(f.builds))
	rss := make([][]int64, len(f.builds))
	for range fc.runs {
		for b, lb := range f.builds {
			ru, err := runToExit(ctx, lb, home, nil, []string{"version"}, nil)
			if err != nil {
				f.fail("version cpu", "", b, err)
				return
			}
			cpu[b] = append(cpu[b], rusageCPU(ru))
			peak, err := maxRSS(ctx, childEnv(home, nil), lb.path, "version")
			if err != nil {
				f.fail("version rss", "", b, err)
				return
			}
			rss[b] = append(rss[b], peak)
		}
	}
	for b := range f.builds {
		f.set("version cpu", "", b, ms(quantile(cpu[b], 0.5)))
		f.set("version rss", "", b, mb(quantile(rss[b], 0.5)))
	}
	for _, st := range f.stores {
		progress("footprint: %s: run --once -- true, %d runs of each build", st.name, fc.runs)
		f.measureOnce(ctx, st, fc.runs, home)
	}
	var wg sync.WaitGroup
	for _, st := range f.stores {
		for b := range f.builds {
			wg.Go(func() { f.measureIdle(ctx, st, b, fc.idle, home) })
			wg.Go(func() { f.measureSteady(ctx, st, b, fc.steady, home) })
		}
	}
	progress("footprint: idle leaders and followers for %v, renewing leaders for %v, on every store at once", fc.idle, wholeRenewals(fc.steady, lease.DefaultTTL))
	wg.Wait()
}

// measureOnce runs leasehold run --once -- true on st runs times per
// build, each through a proxy that reads the process's CPU time when the
// first store request comes, and takes the process's CPU time at exit too.
func (f *footprint) measureOnce(ctx context.Context, st *store, runs int, home string) {
	first := make([][]time.Duration, len(f.builds))
	total := make([][]time.Duration, len(f.builds))
	failed := make([]bool, len(f.builds))
	for range runs {
		for b, lb := range f.builds {
			if failed[b] {
				continue
			}
			d, ru, err := onceRun(ctx, lb, st, home)
			if err != nil {
				failed[b] = true
				f.fail("once cpu", st.name, b, err)
				continue
			}
			if st.mem == nil {
				first[b] = append(first[b], d)
			}
			total[b] = append(total[b], rusageCPU(ru))
		}
	}
	for b := range f.builds {
		if failed[b] {
			continue
		}
		f.set("once cpu", st.name, b, ms(quantile(total[b], 0.5)))
		if st.mem == nil {
			f.set("first req", st.name, b, ms(quantile(first[b], 0.5)))
		} else {
			f.set("first req", st.name, b, "– (in-process store)")
		}
	}
}

// onceRun runs leasehold run --once -- true on st through a new proxy, and
// returns the process's CPU time when its first request to the store
// came (zero for memory) and its rusage at exit.
func onceRun(ctx context.Context, lb *leaseholdBuild, st *store, home string) (time.Duration, *syscall.Rusage, error) {
	endpoint := st.endpoint
	var p *firstRequestProxy
	if st.mem == nil {
		var err error
		if p, err = newFirstRequestProxy(st.endpoint); err != nil {
			return 0, nil, err
		}
		defer p.close()
		endpoint = p.url
	}
	leaseURL, env := st.cli(endpoint, "footprint-once-"+lb.label)
	ru, err := runToExit(ctx, lb, home, env, []string{"run", "--once", "--lease", leaseURL, "--ttl", st.ttl.String(), "--", "true"}, func(pid int) {
		if p != nil {
			p.pid <- pid
		}
	})
	if err != nil || p == nil {
		return 0, ru, err
	}
	select {
	case <-p.read:
		return p.cpu, ru, p.err
	default:
		return 0, ru, errors.New("leasehold exited without a request to the store")
	}
}

// measureIdle starts a leader and (but on memory, which is per process) a
// follower of one lease on st at its TTL, each serving /metrics, and once
// they have led and followed for idle, scrapes /metrics once and reads
// their resident memory.
func (f *footprint) measureIdle(ctx context.Context, st *store, b int, idle time.Duration, home string) {
	lb := f.builds[b]
	leaseURL, env := st.cli(st.endpoint, "footprint-idle-"+lb.label+"-"+randomHex(4))
	args := []string{"run", "--lease", leaseURL, "--ttl", st.ttl.String()}
	leader, err := startDaemon(lb, home, env, args)
	if err != nil {
		f.fail("idle leader", st.name, b, err)
		return
	}
	defer leader.stop()
	if err := leader.waitLeader(ctx, 200, 2*st.ttl+15*time.Second); err != nil {
		f.fail("idle leader", st.name, b, err)
		return
	}
	var follower *daemon
	if st.mem == nil {
		if follower, err = startDaemon(lb, home, env, args); err != nil {
			f.fail("idle follow", st.name, b, err)
			return
		}
		defer follower.stop()
	} else {
		f.set("idle follow", st.name, b, "– (in-process store)")
	}
	if ctxtime.Sleep(ctx, idle); ctx.Err() != nil {
		return
	}
	for _, d := range []struct {
		figure string
		d      *daemon
		status int
	}{{"idle leader", leader, http.StatusOK}, {"idle follow", follower, http.StatusServiceUnavailable}} {
		if d.d == nil {
			continue
		}
		rss, err := d.d.idleRSS(d.status)
		if err != nil {
			f.fail(d.figure, st.name, b, err)
			continue
		}
		f.set(d.figure, st.name, b, mb(rss))
	}
}

// measureSteady starts a leader on st at the default TTL and measures its
// CPU time over steady (rounded up to whole renew intervals) of leading,
// scaled to an hour.
func (f *footprint) measureSteady(ctx context.Context, st *store, b int, steady time.Duration, home string) {
	lb := f.builds[b]
	ttl := max(lease.DefaultTTL, st.ttl)
	leaseURL, env := st.cli(st.endpoint, "footprint-steady-"+lb.label+"-"+randomHex(4))
	d, err := startDaemon(lb, home, env, []string{"run", "--lease", leaseURL, "--ttl", ttl.String()})
	if err != nil {
		f.fail("steady cpu/h", st.name, b, err)
		return
	}
	defer d.stop()
	if err := d.waitLeader(ctx, http.StatusOK, 2*ttl+15*time.Second); err != nil {
		f.fail("steady cpu/h", st.name, b, err)
		return
	}
	window := wholeRenewals(steady, ttl)
	cpu0, err := processCPU(d.cmd.Process.Pid)
	t0 := time.Now()
	if ctxtime.Sleep(ctx, window); err == nil && ctx.Err() == nil {
		var cpu1 time.Duration
		if cpu1, err = processCPU(d.cmd.Process.Pid); err == nil {
			err = d.expect(http.StatusOK)
			f.set("steady cpu/h", st.name, b, fmt.Sprintf("%.2f s", (cpu1-cpu0).Seconds()*float64(time.Hour)/float64(time.Since(t0))))
		}
	}
	if err != nil {
		f.fail("steady cpu/h", st.name, b, err)
	}
}

func mb(bytes int64) string { return fmt.Sprintf("%.1f MB", float64(bytes)/1e6) }

// rusageCPU is a finished process's CPU time, user and system.
func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gnuTime is GNU time, which maxRSS starts a process through.
const gnuTime = "/usr/bin/time"

// maxRSS runs path with args and env, and returns its maximum resident set
// size. Not from the rusage of a process that this one starts: Go starts a
// process with vfork (CLONE_VM), and the kernel's exec records the high
// water mark of the memory it leaves, this process's, as the new program's
// maximum RSS (leasehold version showed leasebench's 57 MB, where it peaks
// at 38). GNU time forks its child from its own small process and reports
// the child's (%M, in KiB).
func maxRSS(ctx context.Context, env []string, path string, args ...string) (int64, error) {
	cmd := exec.CommandContext(ctx, gnuTime, append([]string{"-f", "%M", path}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s -f %%M %s: %w: %s (the maximum RSS needs GNU time)", gnuTime, path, err, lastLine(stderr.String()))
	}
	kb, err := strconv.ParseInt(lastLine(stderr.String()), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s -f %%M: %w", gnuTime, err)
	}
	return kb * 1024, nil
}

// childEnv is a leasehold process's whole environment: PATH, an empty
// HOME (no cloud configuration files), and the store's variables.
func childEnv(home string, env []string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, env...)
}

// runToExit runs lb with args and returns its rusage; started, unless nil,
// is called with the process's ID as soon as it has started.
func runToExit(ctx context.Context, lb *leaseholdBuild, home string, env, args []string, started func(pid int)) (*syscall.Rusage, error) {
	cmd := exec.CommandContext(ctx, lb.path, args...)
	cmd.Env = childEnv(home, env)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("leasehold %s: %w: %s", strings.Join(args, " "), err, lastLine(out.String()))
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// daemon is a leasehold run -- sleep process, serving /healthz, /leader and
// /metrics on listen.
type daemon struct {
	cmd    *exec.Cmd
	listen string
	out    *strings.Builder
	exited chan struct{}
}

// startDaemon starts lb run with args, --listen on a free loopback port,
// and -- sleep 1000.
func startDaemon(lb *leaseholdBuild, home string, env, args []string) (*daemon, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	listen := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(lb.path, append(args, "--listen", listen, "--", "sleep", "1000")...)
	cmd.Env = childEnv(home, env)
	d := &daemon{cmd: cmd, listen: listen, out: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = d.out, d.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

// stop sends SIGTERM, and SIGKILL if leasehold has not exited 30s later.
func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
}

// waitLeader waits until /leader answers status.
func (d *daemon) waitLeader(ctx context.Context, status int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		err := d.expect(status)
		if err == nil {
			return nil
		}
		select {
		case <-d.exited:
			return fmt.Errorf("leasehold exited: %s", lastLine(d.out.String()))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", limit, err)
		}
		if ctxtime.Sleep(ctx, 100*time.Millisecond); ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// expect returns an error unless /leader answers status.
func (d *daemon) expect(status int) error {
	resp, err := get("http://" + d.listen + "/leader")
	if err == nil && resp != status {
		err = fmt.Errorf("/leader answered %d, want %d", resp, status)
	}
	return err
}

// idleRSS checks /leader's answer, scrapes /metrics once, and reads the
// resident memory of the leasehold process (not its command's).
func (d *daemon) idleRSS(status int) (int64, error) {
	if err := d.expect(status); err != nil {
		return 0, err
	}
	if code, err := get("http://" + d.listen + "/metrics"); err != nil || code != http.StatusOK {
		return 0, fmt.Errorf("/metrics: %d, %v", code, err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	return parseVmRSS(string(b))
}

func get(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// firstRequestProxy is a reverse proxy to a store that, when the first
// request comes, reads the CPU time used so far by the process whose ID
// is sent on pid (waiting for it if the request came first): the client
// is blocked on that request meanwhile.
type firstRequestProxy struct {
	url  string
	srv  *http.Server
	pid  chan int
	once sync.Once
	read chan struct{} // closed once cpu and err are set
	cpu  time.Duration
	err  error
}

func newFirstRequestProxy(target string) (*firstRequestProxy, error) {
	p := &firstRequestProxy{pid: make(chan int, 1), read: make(chan struct{})}
	var err error
	p.url, p.srv, err = startProxy(target, func(*http.Request) {
		p.once.Do(func() {
			p.cpu, p.err = processCPU(<-p.pid)
			close(p.read)
		})
	})
	return p, err
}

func (p *firstRequestProxy) close() { _ = p.srv.Close() }

// processCPU is the CPU time (user and system) that process pid's threads
// have used, to the nanosecond: the sum of their scheduler statistics
// (/proc/PID/task/TID/schedstat), where /proc/PID/stat counts in clock
// ticks of 10 ms. A thread that has exited is no longer counted: the Go
// runtime keeps its threads.
func processCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no /proc/%d/task/*/schedstat (%v): the kernel needs CONFIG_SCHED_INFO", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			return 0, err
		}
		d, err := parseSchedstat(string(b))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += d
	}
	return sum, nil
}

// parseSchedstat returns the time on CPU of a /proc/.../schedstat line:
// its first field, in nanoseconds.
func parseSchedstat(s string) (time.Duration, error) {
	fields := strings.Fields(s)
	if len(fields) != 3 {
		return 0, fmt.Errorf("schedstat %q: want 3 fields", s)
	}
	ns, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat %q: %w", s, err)
	}
	return time.Duration(ns), nil
}

// parseVmRSS returns the VmRSS of a /proc/PID/status, in bytes.
func parseVmRSS(status string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "VmRSS" {
			continue
		}
		n, unit, _ := strings.Cut(strings.TrimSpace(v), " ")
		kb, err := strconv.ParseInt(n, 10, 64)
		if err != nil || unit != "kB" {
			return 0, fmt.Errorf("VmRSS %q: want a number of kB", strings.TrimSpace(v))
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no VmRSS line in /proc/PID/status")
}

// buildLeasehold builds cmd/leasehold at rev ("" the work tree) into dir as
// scripts/release builds it for linux/amd64: static, -trimpath, stripped,
// a version stamped in, with the build tags of that revision's
// scripts/release-tags (none where it has no such file).
func buildLeasehold(ctx context.Context, dir, label, rev string) (*leaseholdBuild, error) {
	root, err := gitOutput(ctx, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	src, what := root, ""
	if rev == "" {
		head, err := gitOutput(ctx, root, "rev-parse", "--short", "HEAD")
		if err != nil {
			return nil, err
		}
		what = "work tree, " + head
		if exec.CommandContext(ctx, "git", "-C", root, "diff", "--quiet", "HEAD").Run() != nil {
			what += "-dirty"
		}
	} else {
		if what, err = gitOutput(ctx, root, "rev-parse", "--short", rev+"^{commit}"); err != nil {
			return nil, err
		}
		src = filepath.Join(dir, label)
		tar := src + ".tar"
		if _, err := gitOutput(ctx, root, "archive", "-o", tar, what); err != nil {
			return nil, err
		}
		if err := os.Mkdir(src, 0o700); err != nil {
			return nil, err
		}
		if out, err := exec.CommandContext(ctx, "tar", "-xf", tar, "-C", src).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("tar -xf %s: %w: %s", tar, err, out)
		}
	}
	tags, err := os.ReadFile(filepath.Join(src, "scripts", "release-tags"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := filepath.Join(dir, "leasehold-"+label)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags="+strings.TrimSpace(string(tags)), "-trimpath", "-buildvcs=auto",
		"-ldflags=-s -w -X main.stampedVersion=v0.0.0-footprint-"+label, "-o", out, "./cmd/leasehold")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w: %s", err, b)
	}
	fi, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	return &leaseholdBuild{label: label, what: what, path: out, size: fi.Size()}, nil
}

// gitOutput runs git in dir ("" the current directory) and returns its
// output, trimmed.
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.CommandContext(ctx, "git", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// footprintRows are the table's rows, in order: a figure's key in cells,
// how the table names it, and issue 38's goal for it.
var footprintRows = []struct{ key, name, goal string }{
	{"binary", "binary size", "≤ 30 MB"},
	{"version cpu", "`leasehold version` CPU (median)", "≤ 5 ms"},
	{"version rss", "`leasehold version` max RSS (median)", "≤ 15 MB"},
	{"idle leader", "idle RSS, leader", "≤ 20 MB"},
	{"idle follow", "idle RSS, follower", "≤ 20 MB"},
	{"first req", "CPU to first store request, `run --once -- true` (median)", "≤ 10 ms"},
	{"once cpu", "CPU of all of `run --once -- true` (median)", ""},
	{"steady cpu/h", "CPU per hour of leading, TTL 15s", "≤ before"},
}

// table returns the figures as rows: figure, store, each build's, goal.
func (f *footprint) table(fc footprintConfig) *table {
	t := &table{
		title: fmt.Sprintf("Footprint of leasehold's release build (linux/amd64), before and after; medians of %d runs; idle after %v of leading or following at the store's shortest TTL; renewing over %v",
			fc.runs, fc.idle, wholeRenewals(fc.steady, lease.DefaultTTL)),
		header: []string{"figure", "store"},
	}
	for _, b := range f.builds {
		t.header = append(t.header, fmt.Sprintf("%s (%s)", b.label, b.what))
	}
	t.header = append(t.header, "goal (issue 38)")
	stores := []string{""}
	for _, st := range f.stores {
		stores = append(stores, st.name)
	}
	for _, r := range footprintRows {
		for _, st := range stores {
			cells, ok := f.cells[r.key][st]
			if !ok {
				continue
			}
			row := append([]string{r.name, cmp.Or(st, "–")}, cells...)
			for i, c := range row {
				row[i] = cmp.Or(c, "–")
			}
			t.rows = append(t.rows, append(row, cmp.Or(r.goal, "–")))
		}
	}
	return t
}

func (f *footprint) print(w io.Writer, markdown bool, fc footprintConfig) {
	fmt.Fprintf(w, "leasebench -footprint, %s, %s\n\n", time.Now().Format("2006-01-02"), machine())
	f.table(fc).print(w, markdown)
	for _, n := range f.notes {
		fmt.Fprintln(w, "- "+n)
	}
}
