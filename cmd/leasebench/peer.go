package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/leasehold/leasehold/internal/ctxtime"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold/leasehold/runner"
	"golang.org/x/sys/unix"
)

// The npm peer is dynamodb-lock-client's FailOpen lock (npm), the lease-based
// DynamoDB lock most Node services use, run by peer/peer.js on the same
// DynamoDB endpoint with the same lease duration (the TTL) and heartbeat
// period (the runner's RenewInterval, 3/8 of the TTL). Its code stays
// out of the Go module: leasebench installs peer/package.json's pinned
// versions with npm into an ignored directory and runs peer.js with node.
const peerPackage = "dynamodb-lock-client"

// peerSetup is where the peer lives once installed.
type peerSetup struct {
	script      string // peer.js
	nodeModules string // NODE_PATH
	version     string // of dynamodb-lock-client
}

// installPeer installs the peer's packages from dir (package.json and
// package-lock.json) into into, with npm ci, unless the pinned version is
// there already. It returns why not when node or npm is missing.
func installPeer(dir, into string) (*peerSetup, string, error) {
	script := filepath.Join(dir, "peer.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Sprintf("%s not found (run leasebench from the repository's root, or set -peer-dir)", script), nil
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, tool + " is not on PATH", nil
		}
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := readJSON(filepath.Join(dir, "package.json"), &pkg); err != nil {
		return nil, "", err
	}
	want := pkg.Dependencies[peerPackage]
	modules := filepath.Join(into, "node_modules")
	var have struct{ Version string }
	_ = readJSON(filepath.Join(modules, peerPackage, "package.json"), &have)
	if have.Version != want {
		fmt.Fprintf(os.Stderr, "leasebench: npm ci %s@%s into %s\n", peerPackage, want, into)
		if err := os.MkdirAll(into, 0o755); err != nil {
			return nil, "", err
		}
		for _, f := range []string{"package.json", "package-lock.json"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, "", err
			}
			if err := os.WriteFile(filepath.Join(into, f), b, 0o644); err != nil {
				return nil, "", err
			}
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir, cmd.Stdout, cmd.Stderr = into, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Sprintf("npm ci in %s failed: %v", into, err), nil
		}
	}
	abs, err := filepath.Abs(modules)
	if err != nil {
		return nil, "", err
	}
	return &peerSetup{script: script, nodeModules: abs, version: want}, "", nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// monotonic returns CLOCK_MONOTONIC in ns: the clock of peer.js's
// process.hrtime.bigint().
func monotonic() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return ts.Nano()
}

// peerEvent is one line of peer.js's output.
type peerEvent struct {
	Ev    string `json:"ev"`
	At    string `json:"at"`
	Sent  string `json:"sent"`
	What  string `json:"what"`
	Err   string `json:"err"`
	Token int    `json:"token"`
}

func (e peerEvent) at() int64   { n, _ := strconv.ParseInt(e.At, 10, 64); return n }
func (e peerEvent) sent() int64 { n, _ := strconv.ParseInt(e.Sent, 10, 64); return n }

// peerProc is one running peer.js.
type peerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan peerEvent
	stderr *bytes.Buffer

	mu     sync.Mutex
	errors []peerEvent
}

// peerConfig is what every peer of one measurement shares.
type peerConfig struct {
	setup    *peerSetup
	table    string
	key      string
	ttl      time.Duration
	endpoint string
	// heartbeat is the holder's heartbeat period; zero for leasehold's
	// default renew interval.
	heartbeat time.Duration
}

func startPeer(ctx context.Context, c peerConfig, role, lock, endpoint string) (*peerProc, error) {
	cmd := exec.CommandContext(ctx, "node", c.setup.script,
		"--role", role, "--endpoint", endpoint, "--table", c.table, "--key", c.key, "--lock", lock,
		"--lease-ms", strconv.FormatInt(c.ttl.Milliseconds(), 10),
		"--heartbeat-ms", strconv.FormatInt(cmp.Or(c.heartbeat, runner.DefaultRenewInterval(c.ttl)).Milliseconds(), 10))
	cmd.Env = append(os.Environ(), "NODE_PATH="+c.setup.nodeModules, "AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1")
	p := &peerProc{cmd: cmd, events: make(chan peerEvent, 4096), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(p.events)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var e peerEvent
			if json.Unmarshal(sc.Bytes(), &e) != nil {
				continue
			}
			if e.Ev == "error" {
				p.mu.Lock()
				p.errors = append(p.errors, e)
				p.mu.Unlock()
			}
			p.events <- e
		}
	}()
	return p, nil
}

// wait returns the next event of kind for which keep (if not nil) holds.
func (p *peerProc) wait(ctx context.Context, kind string, limit time.Duration, keep func(peerEvent) bool) (peerEvent, error) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case e, ok := <-p.events:
			if !ok {
				return peerEvent{}, fmt.Errorf("peer.js exited waiting for %q: %s", kind, bytes.TrimSpace(p.stderr.Bytes()))
			}
			if e.Ev == kind && (keep == nil || keep(e)) {
				return e, nil
			}
		case <-t.C:
			return peerEvent{}, fmt.Errorf("peer.js: no %q within %v", kind, limit)
		case <-ctx.Done():
			return peerEvent{}, ctx.Err()
		}
	}
}

func (p *peerProc) failures() []peerEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]peerEvent(nil), p.errors...)
}

// kill ends the process at once, as a crash.
func (p *peerProc) kill() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// peerStart is how long node and the AWS SDK take to start, at most.
const peerStart = 10 * time.Second

// peerPair starts a holder, waits until it holds the lock, then starts a
// follower and waits for its first read of the lock.
func peerPair(ctx context.Context, c peerConfig, kind, holderEndpoint, followerEndpoint string) (h, f *peerProc, err error) {
	lock := kind + "-" + randomHex(6)
	if h, err = startPeer(ctx, c, "holder", lock, holderEndpoint); err != nil {
		return nil, nil, err
	}
	if _, err = h.wait(ctx, "acquired", peerStart+3*c.ttl, nil); err != nil {
		h.kill()
		return nil, nil, err
	}
	sleepRandom(ctx, c.ttl/3) // as for leasehold's pairs
	if f, err = startPeer(ctx, c, "follower", lock, followerEndpoint); err != nil {
		h.kill()
		return nil, nil, err
	}
	if _, err = f.wait(ctx, "polled", peerStart, nil); err != nil {
		h.kill()
		f.kill()
		return nil, nil, err
	}
	return h, f, nil
}

// peerFailoverTrial: the holder is killed (SIGKILL) right after a
// successful heartbeat at a random moment, settled as r says; the time from that heartbeat's
// send to the follower's acquireLock callback.
func peerFailoverTrial(ctx context.Context, c peerConfig, r regime) (time.Duration, error) {
	h, f, err := peerPair(ctx, c, "peer-failover", c.endpoint, c.endpoint)
	if err != nil {
		return 0, err
	}
	defer f.kill()
	defer h.kill()
	r.settle(ctx, c.ttl, cmp.Or(c.heartbeat, runner.DefaultRenewInterval(c.ttl)))
	armed := monotonic()
	hb, err := h.wait(ctx, "renewed", c.ttl, func(e peerEvent) bool { return e.sent() > armed })
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errVoid, err)
	}
	h.kill()
	if fs := h.failures(); len(fs) > 0 {
		return 0, fmt.Errorf("%w: the holder failed before its crash: %s: %s", errVoid, fs[0].What, fs[0].Err)
	}
	e, err := f.wait(ctx, "acquired", 4*c.ttl, nil)
	if err != nil {
		return 0, err
	}
	return time.Duration(e.at() - hb.sent()), nil
}

// peerHandoverTrial: at a random moment the holder releases the lock; the
// time from the release's send to the follower's acquireLock callback.
func peerHandoverTrial(ctx context.Context, c peerConfig) (time.Duration, error) {
	h, f, err := peerPair(ctx, c, "peer-handover", c.endpoint, c.endpoint)
	if err != nil {
		return 0, err
	}
	defer f.kill()
	defer h.kill()
	warmUp(ctx, c.ttl)
	if _, err := io.WriteString(h.stdin, "release\n"); err != nil {
		return 0, err
	}
	rel, err := h.wait(ctx, "released", c.ttl, nil)
	if err != nil {
		return 0, err
	}
	if rel.Err != "" {
		return 0, fmt.Errorf("%w: release failed: %s", errVoid, rel.Err)
	}
	e, err := f.wait(ctx, "acquired", 3*c.ttl, nil)
	if err != nil {
		return 0, err
	}
	return time.Duration(e.at() - rel.sent()), nil
}

// peerRequestRates counts a holder's and a follower's requests, as
// countPeerRequests does.
func peerRequestRates(ctx context.Context, c peerConfig, label func(*http.Request) string, d time.Duration) (leader, follower map[string]float64, startReads int, err error) {
	var h *peerProc
	return countPeerRequests(ctx, c.endpoint, label, c.ttl, cmp.Or(c.heartbeat, runner.DefaultRenewInterval(c.ttl)), d,
		func(holder, follower string) (func(), error) {
			var f *peerProc
			var err error
			if h, f, err = peerPair(ctx, c, "peer-requests", holder, follower); err != nil {
				return nil, err
			}
			return func() { f.kill(); h.kill() }, nil
		},
		func() error {
			if fs := h.failures(); len(fs) > 0 {
				return fmt.Errorf("the peer holder failed while its requests were counted: %s: %s", fs[0].What, fs[0].Err)
			}
			return nil
		})
}

// countPeerRequests counts a peer's holder's and follower's requests
// through a counting proxy each in front of endpoint: start starts the
// pair, the holder on the first proxy and the follower on the second, and
// returns how to stop them. It returns the requests of each per hour,
// counted for d after the warm-up and scaled from ttl to lease.DefaultTTL
// as requestRates does, unless check then fails; and the follower's
// requests in its first startWindow heartbeat periods.
func countPeerRequests(ctx context.Context, endpoint string, label func(*http.Request) string, ttl, heartbeat, d time.Duration,
	start func(holder, follower string) (stop func(), err error), check func() error) (leader, follower map[string]float64, startReads int, err error) {
	var proxies [2]*countingProxy
	for i := range proxies {
		if proxies[i], err = newCountingProxy(endpoint, label); err != nil {
			return nil, nil, 0, err
		}
		defer proxies[i].close()
	}
	stop, err := start(proxies[0].url, proxies[1].url)
	if err != nil {
		return nil, nil, 0, err
	}
	defer stop()
	ctxtime.Sleep(ctx, startWindow*heartbeat)
	startReads = total(proxies[1].take())
	warmUp(ctx, ttl)
	for _, p := range proxies {
		p.take()
	}
	began := time.Now()
	if ctxtime.Sleep(ctx, d); ctx.Err() != nil {
		return nil, nil, 0, ctx.Err()
	}
	elapsed := time.Since(began)
	if err := check(); err != nil {
		return nil, nil, 0, err
	}
	return scaleCounts(proxies[0].take(), elapsed, ttl), scaleCounts(proxies[1].take(), elapsed, ttl), startReads, nil
}
