//go:build linux

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runner"
)

// TestEndToEndOnceAzureFailingWrites runs `leasehold run --once
// --min-hold` on Azurite, the holder through the fault proxy, with the
// writes that end a run failing for a while (rule 13 and the runner's
// one-shot mode; findings 3-5 of issue 24). On Azure the end of a run is
// a renewal of the Azure lease and a write of the record into the blob's
// metadata under it. Each subtest checks what another instance, reaching
// Azurite directly, is told:
//
//   - DoneMarkRetried (finding 3): the metadata write carrying the done
//     mark and the hold is refused twice (503 ServerBusy) as the command
//     returns; it is retried, so during the hold the period fired again
//     exits 76 (already ran, done) and a duplicate without a period 75
//     (not elected), and after it the period fired again still exits 76.
//   - HoldUnderWatchdog (finding 4): --min-hold with --stall-timeout, and
//     the renewal that starts the hold refused twice: the stall watchdog,
//     which watches the command, does not end the hold once the command
//     has returned, so the holder still holds the lease after the stall
//     timeout, duplicates fired then exit 75, and a run after the holder
//     exited runs.
//   - PartitionDuringHold (finding 5): the done mark is in the record as
//     soon as the command has returned; then every request of the holder
//     is refused (its renewal fails until the renew deadline, and it
//     exits), and the period fired again exits 76, before and after the
//     holder's lease lapses: it does not run twice.
func TestEndToEndOnceAzureFailingWrites(t *testing.T) {
	cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING")
	container := azuriteContainer(t) // skips without Azurite
	m := blobEndpoint.FindStringSubmatch(cs)
	if m == nil {
		t.Fatalf("LEASEHOLD_AZURITE_CONNECTION_STRING has no BlobEndpoint")
	}
	upstream := m[1] // the fault proxy speaks plain HTTP: Azurite only
	bins := buildBinaries(t)
	const period = "2026-11-23T10:00:00Z"

	t.Run("DoneMarkRetried", func(t *testing.T) {
		t.Parallel()
		a := newAzureOnce(t, bins, cs, upstream, container)
		holder := a.holder("--period", period, "--retry-failed", "--min-hold", "6s")
		refused := a.proxy.Add(faultproxy.Rule{Match: faultproxy.AzureComp("metadata"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 2})
		a.commandReturns()
		a.waitDone(period)
		a.want("the period fired again during the hold", exitAlreadyRan, "(done)", "--period", period, "--retry-failed")
		a.want("a duplicate without a period during the hold", exitNotElected, "")
		if code := holder.wait(t, time.Minute); code != 0 {
			t.Errorf("the holder exited %d, want 0", code)
		}
		a.want("the period fired again after the hold", exitAlreadyRan, "(done)", "--period", period, "--retry-failed")
		a.wantRuns(1)
		if n := a.proxy.Applied(refused[0]); n != 2 {
			t.Errorf("the proxy refused %d metadata writes, want 2", n)
		}
	})

	t.Run("HoldUnderWatchdog", func(t *testing.T) {
		t.Parallel()
		a := newAzureOnce(t, bins, cs, upstream, container)
		const hold = 8 * time.Second
		holder := a.holder("--min-hold", hold.String(), "--stall-timeout", "1s", "--progress-on-stdout")
		refused := a.proxy.Add(faultproxy.Rule{Match: faultproxy.AzureLeaseAction("renew"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 2})
		returned := a.commandReturns()
		for _, after := range []time.Duration{2 * time.Second, 5 * time.Second} { // past the stall timeout, within the hold
			time.Sleep(time.Until(returned.Add(after)))
			select {
			case <-holder.done:
				t.Errorf("the holder exited within %v after its command returned, within its --min-hold %v", after, hold)
			default:
			}
			a.want("a duplicate "+after.String()+" after the command returned, within the hold", exitNotElected, "")
		}
		if code := holder.wait(t, time.Minute); code != 0 {
			t.Errorf("the holder exited %d, want 0", code)
		}
		a.want("a run after the holder exited", 0, "")
		a.wantRuns(2)
		if n := a.proxy.Applied(refused[0]); n != 2 {
			t.Errorf("the proxy refused %d renewals, want 2", n)
		}
	})

	t.Run("PartitionDuringHold", func(t *testing.T) {
		t.Parallel()
		a := newAzureOnce(t, bins, cs, upstream, container)
		holder := a.holder("--period", period, "--retry-failed", "--min-hold", "7s")
		a.commandReturns()
		a.waitDone(period)
		partition := a.proxy.Add(faultproxy.Rule{Fault: faultproxy.Refuse(faultproxy.AzureServerBusy)})
		if code := holder.wait(t, time.Minute); code != 0 {
			t.Errorf("the holder exited %d, want 0 (its command succeeded)", code)
		}
		a.want("the period fired again after the holder was cut off", exitAlreadyRan, "(done)", "--period", period, "--retry-failed")
		a.waitRecord(30*time.Second, "the holder's lease lapsed", func(rec lease.Record) bool { return rec.Released })
		a.want("the period fired again after the holder's lease lapsed", exitAlreadyRan, "(done)", "--period", period, "--retry-failed")
		a.wantRuns(1)
		if a.proxy.Applied(partition[0]) == 0 {
			t.Errorf("the holder sent nothing during the partition: it met no failing write")
		}
	})
}

// blobEndpoint is the BlobEndpoint of a connection string: scheme, host
// and port, and the account's path.
var blobEndpoint = regexp.MustCompile(`BlobEndpoint=(https?://[^/;]+)(/[^;]*)?`)

// azureOnce is one lease on Azurite, a fault proxy in front of Azurite for
// its holder, and the files its commands write.
type azureOnce struct {
	t       *testing.T
	e       *e2e
	proxy   *faultproxy.Proxy
	direct  string // the lease's URL, straight to Azurite
	proxied string // the lease's URL, through the proxy
	// observer reads the record straight from Azurite.
	observer lease.Lease
}

func newAzureOnce(t *testing.T, bins, cs, upstream, container string) *azureOnce {
	t.Helper()
	p := faultproxy.Start(t, upstream)
	e := &e2e{t: t, dir: t.TempDir(), bin: filepath.Join(bins, "leasehold"), env: append(os.Environ(),
		"LEASEHOLD_PROXIED_CONNECTION_STRING="+blobEndpoint.ReplaceAllString(cs, "BlobEndpoint="+p.URL+"$2"))}
	blob := "azblob://" + container + "/" + randomName("once-")
	return &azureOnce{t: t, e: e, proxy: p,
		direct:  blob + "?connection_string_env=LEASEHOLD_AZURITE_CONNECTION_STRING",
		proxied: blob + "?connection_string_env=LEASEHOLD_PROXIED_CONNECTION_STRING"}
}

func (a *azureOnce) file(name string) string { return filepath.Join(a.e.dir, name) }

// onceArgs is the start of a `leasehold run --once` of who on leaseURL
// with args, up to the command.
func onceArgs(leaseURL, who string, args ...string) []string {
	return append(append([]string{"run", "--once", "--lease", leaseURL, "--identity", who, "--ttl", "15s"}, args...), "--", "sh", "-c")
}

// holder starts the holder, through the proxy, and waits for its command
// to start. The command creates the file "started", shows progress on
// stdout until the test lets it return (commandReturns), and appends its
// period to "ran".
func (a *azureOnce) holder(args ...string) *proc {
	a.t.Helper()
	script := `: > "$1/started"; while [ ! -e "$1/go" ]; do echo tick; sleep 0.05; done; echo "$LEASEHOLD_PERIOD" >> "$1/ran"`
	p := a.e.start("holder", append(onceArgs(a.proxied, "holder", args...), script, "sh", a.e.dir)...)
	eventually(a.t, 30*time.Second, "the holder's command started", func() bool { return fileExists(a.file("started")) })
	return p
}

// commandReturns lets the holder's command return and says when.
func (a *azureOnce) commandReturns() time.Time {
	a.t.Helper()
	if err := os.WriteFile(a.file("go"), nil, 0o644); err != nil {
		a.t.Fatal(err)
	}
	return time.Now()
}

// observe returns the lease's record, read straight from Azurite.
func (a *azureOnce) observe() (lease.Record, error) {
	a.t.Helper()
	if a.observer == nil {
		l, err := lease.Open(a.t.Context(), a.direct, lease.Options{Identity: "observer", TTL: 15 * time.Second})
		if err != nil {
			a.t.Fatal(err)
		}
		a.observer = l
	}
	return a.observer.Observe(a.t.Context())
}

// waitRecord waits up to limit for the lease's record to be as want says,
// and fails the test if it is not.
func (a *azureOnce) waitRecord(limit time.Duration, what string, want func(lease.Record) bool) {
	a.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		rec, err := a.observe()
		switch {
		case err == nil && want(rec):
			return
		case time.Now().After(deadline):
			a.t.Errorf("%s: not within %v; the record reads %+v (err %v)", what, limit, rec, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDone waits until the record says period is done: within a few
// seconds of the command's return, well before the holds here end.
func (a *azureOnce) waitDone(period string) {
	a.t.Helper()
	a.waitRecord(5*time.Second, "the done mark after the command returned", func(rec lease.Record) bool {
		s := runner.ScheduleOf(rec.Annotations)
		return s.Period == period && s.Done
	})
}

// want runs another instance, straight to Azurite, with args, and checks
// its exit status and that its error line contains line. Its command
// appends its period to "ran".
func (a *azureOnce) want(what string, wantCode int, line string, args ...string) {
	a.t.Helper()
	script := `echo "$LEASEHOLD_PERIOD" >> "$1/ran"`
	code, stderr := a.e.run(time.Minute, append(onceArgs(a.direct, "other", args...), script, "sh", a.e.dir)...)
	if got := strings.Join(errorLines(stderr), "\n"); code != wantCode || !strings.Contains(got, line) {
		a.t.Errorf("%s: exit %d, %q; want exit %d and a line containing %q", what, code, got, wantCode, line)
	}
}

// wantRuns checks that the commands ran n times in all.
func (a *azureOnce) wantRuns(n int) {
	a.t.Helper()
	b, err := os.ReadFile(a.file("ran"))
	if err != nil && !os.IsNotExist(err) {
		a.t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != n {
		a.t.Errorf("the commands ran %d times, want %d: %q", got, n, b)
	}
}
