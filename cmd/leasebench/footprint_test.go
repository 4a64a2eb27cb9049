package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tleasehold\nVmPeak:\t 1266432 kB\nVmHWM:\t   52000 kB\nVmRSS:\t   48212 kB\nRssAnon:\t   20000 kB\n"
	if got, err := parseVmRSS(status); err != nil || got != 48212*1024 {
		t.Errorf("parseVmRSS = %d, %v; want %d (VmRSS, not VmHWM or RssAnon)", got, err, 48212*1024)
	}
	for _, bad := range []string{"Name:\tx\nVmHWM:\t 5 kB\n", "VmRSS:\t 5 MB\n", "VmRSS:\t kB\n"} {
		if got, err := parseVmRSS(bad); err == nil {
			t.Errorf("parseVmRSS(%q) = %d, want an error", bad, got)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	if got, err := parseSchedstat("209093086 98142684 164\n"); err != nil || got != 209093086*time.Nanosecond {
		t.Errorf("parseSchedstat = %v, %v; want 209.093086ms (the first field: time on CPU)", got, err)
	}
	for _, bad := range []string{"", "1 2", "x 2 3"} {
		if _, err := parseSchedstat(bad); err == nil {
			t.Errorf("parseSchedstat(%q): want an error", bad)
		}
	}
}

// TestProcessCPU reads this process's CPU time before and after work of
// its own: it must count every thread's, and grow.
func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Skipf("no scheduler statistics here: %v", err)
	}
	ru0 := cpuTime()
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	after, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	used := cpuTime() - ru0
	if after <= before || after-before < used/2 {
		t.Errorf("processCPU went from %v to %v while getrusage counted %v (x %d)", before, after, used, x)
	}
}

// TestFirstRequestProxy sends a request through the proxy before the
// process ID is known: the proxy waits for it, reads that process's CPU
// time once, and carries the request, and every later one, to the store.
func TestFirstRequestProxy(t *testing.T) {
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Store", r.URL.Path)
	}))
	defer store.Close()
	p, err := newFirstRequestProxy(store.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	answered := make(chan string, 1)
	go func() {
		resp, err := http.Get(p.url + "/bucket/key")
		if err != nil {
			answered <- err.Error()
			return
		}
		resp.Body.Close()
		answered <- resp.Header.Get("X-Store")
	}()
	select {
	case got := <-answered:
		t.Fatalf("the first request was answered (%q) before the proxy had the process ID", got)
	case <-time.After(100 * time.Millisecond):
	}
	p.pid <- os.Getpid()
	if got := <-answered; got != "/bucket/key" {
		t.Fatalf("the store saw %q, want /bucket/key", got)
	}
	<-p.read
	if p.err != nil || p.cpu <= 0 {
		t.Errorf("CPU at the first request: %v, %v; want this process's, above zero", p.cpu, p.err)
	}
	resp, err := http.Get(p.url + "/again")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Store"); got != "/again" {
		t.Errorf("a second request reached the store as %q, want /again", got)
	}
}

// TestFootprintTable puts each build's figure side by side with the goal,
// leaves out figures not taken on a store, and shows a missing cell as –.
func TestFootprintTable(t *testing.T) {
	f := &footprint{
		builds: []*leaseholdBuild{{label: "before", what: "e979172"}, {label: "after", what: "work tree, abc"}},
		stores: []*store{{name: "mem"}, {name: "minio"}},
		cells:  map[string]map[string][]string{},
	}
	f.set("binary", "", 0, "56.2 MB")
	f.set("binary", "", 1, "28.0 MB")
	f.set("idle leader", "minio", 1, "19.0 MB")
	tb := f.table(footprintConfig{runs: 5, idle: 20 * time.Second, steady: 30 * time.Second})
	if got, want := strings.Join(tb.header, " | "), "figure | store | before (e979172) | after (work tree, abc) | goal (issue 38)"; got != want {
		t.Errorf("header %q, want %q", got, want)
	}
	var rows []string
	for _, r := range tb.rows {
		rows = append(rows, strings.Join(r, " | "))
	}
	want := []string{
		"binary size | – | 56.2 MB | 28.0 MB | ≤ 30 MB",
		"idle RSS, leader | minio | – | 19.0 MB | ≤ 20 MB",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestMaxRSS measures a small program from a process that holds 128 MiB:
// the figure must be the program's, not this process's high water mark,
// which the rusage of a process Go starts (vfork) reports.
func TestMaxRSS(t *testing.T) {
	if _, err := os.Stat(gnuTime); err != nil {
		t.Skipf("no GNU time: %v", err)
	}
	held := make([]byte, 128<<20)
	for i := range held {
		held[i] = 1
	}
	got, err := maxRSS(t.Context(), nil, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if got <= 0 || got >= 64<<20 {
		t.Errorf("maxRSS(/bin/true) = %d bytes from a process of %d MiB; want the program's own, well below", got, len(held)>>20)
	}
}
