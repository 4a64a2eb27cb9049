//go:build unix

package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "run"}, {"run", "--help"}, {"status", "-h"}, {"help", "check"}, {"check", "--help"}, {"help", "version"}, {"version", "--help"}, {"help", "break"}, {"break", "--help"}} {
		env, stdout, stderr := testEnv(nil)
		if code := mainWith(context.Background(), nil, args, env); code != 0 || stdout.String() == "" || stderr.String() != "" {
			t.Errorf("leasehold %s: exit %d, %d bytes of help, stderr %q", strings.Join(args, " "), code, len(stdout.String()), stderr)
		}
	}
	env, stdout, _ := testEnv(nil)
	mainWith(context.Background(), nil, []string{"run", "--help"}, env)
	for _, want := range []string{"LEASEHOLD_TOKEN", "LEASEHOLD_HEALTH_URL", "Exit status", "75", "stopTimeout", "CONTAINER_APP_REPLICA_NAME", "--once",
		"LEASEHOLD_SHARD ", "LEASEHOLD_SHARDS", "640 writes", "/shards", "leasehold_shard_events_total"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run --help lacks %q", want)
		}
	}
	env, stdout, _ = testEnv(nil)
	mainWith(context.Background(), nil, []string{"status", "--help"}, env)
	if !strings.Contains(stdout.String(), "leasehold status --shards N --lease URL [--watch DURATION]") {
		t.Error("status --help does not show --shards")
	}
	env, stdout, _ = testEnv(nil)
	mainWith(context.Background(), nil, []string{"help"}, env)
	if !strings.Contains(stdout.String(), "leasehold check --lease URL") {
		t.Error("leasehold help does not list leasehold check")
	}
}

// TestHelpListsEveryGrant: leasehold help lists every grant each backend
// declares (driver.Store), the probe's included, so that an identity given
// exactly that list is not refused on its first write, and marks those
// only shard groups need; it and help check
// say which TTLs each store allows.
func TestHelpListsEveryGrant(t *testing.T) {
	env, stdout, _ := testEnv(nil)
	mainWith(context.Background(), nil, []string{"help"}, env)
	help := strings.Join(strings.Fields(stdout.String()), " ")
	n := 0
	for _, s := range driver.Stores() {
		for _, g := range s.Grants {
			n++
			if !strings.Contains(help, g.String()) {
				t.Errorf("leasehold help lacks %s's grant %q", s.Scheme, g)
			}
			if g.Group && !strings.Contains(help, g.String()+" (shard groups only)") {
				t.Errorf("leasehold help does not say %s's grant %q is for shard groups only", s.Scheme, g)
			}
		}
	}
	if n == 0 {
		t.Fatal("no backend declares a grant: are the backends linked in?")
	}
	env, stdout, _ = testEnv(nil)
	mainWith(context.Background(), nil, []string{"help", "check"}, env)
	check := strings.Join(strings.Fields(stdout.String()), " ")
	for _, s := range driver.Stores() {
		if !strings.Contains(help, s.TTLs) || !strings.Contains(check, s.TTLs) {
			t.Errorf("leasehold help or help check lacks %s's TTLs %q", s.Scheme, s.TTLs)
		}
	}
}

// TestHelpNamesProbedStores: leasehold help check names every store whose
// backend probes it (driver.Store.Probe) as probed, and status and break
// help name every store by who judges its leases.
func TestHelpNamesProbedStores(t *testing.T) {
	help := func(args ...string) string {
		env, stdout, _ := testEnv(nil)
		mainWith(context.Background(), nil, args, env)
		return strings.Join(strings.Fields(stdout.String()), " ")
	}
	check, status, brk := help("help", "check"), help("help", "status"), help("help", "break")
	_, probed, _ := strings.Cut(check, "conditional writes the store enforces them (")
	probed, _, _ = strings.Cut(probed, ":")
	for _, s := range driver.Stores() {
		if (s.Probe != "") != strings.Contains(probed, s.Name) {
			t.Errorf("help check lists %q as the probed stores; %s's Probe is %q", probed, s.Name, s.Probe)
		}
		if !strings.Contains(status, s.Name) || s.Judge == lease.JudgedByContender && !strings.Contains(brk, s.Name) {
			t.Errorf("help status or break does not name %s", s.Name)
		}
	}
}

// backendPages are the docs' pages of the backends, by scheme.
var backendPages = map[string]string{
	"s3":       "../../docs/backends/s3.md",
	"dynamodb": "../../docs/backends/dynamodb.md",
	"azblob":   "../../docs/backends/azure-blob.md",
	"gs":       "../../docs/backends/gcs.md",
}

// TestBackendPagesListEveryGrant: each backend's page in docs/backends
// names every action the backend grants (driver.Store), shard groups' and
// the probe's included, so that its IAM notes and help agree.
func TestBackendPagesListEveryGrant(t *testing.T) {
	for _, s := range driver.Stores() {
		if len(s.Grants) == 0 {
			continue
		}
		page, ok := backendPages[s.Scheme]
		if !ok {
			t.Errorf("%s declares grants and has no page in docs/backends (backendPages)", s.Scheme)
			continue
		}
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range s.Grants {
			for _, a := range g.Actions {
				if !strings.Contains(string(b), "`"+a+"`") {
					t.Errorf("%s does not name %s's action `%s` (on %s)", page, s.Scheme, a, g.Resource)
				}
			}
		}
	}
}
