//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// operationsPage is where the docs show leasehold check at work.
const operationsPage = "../../docs/operations.md"

// TestOperationsCheckSample runs the leasehold check command the operations
// page shows and compares the lines that do not depend on the store (the
// lease, the TTL's timing and the cost) with the page's sample output, so
// that a change of the defaults, the prices or the wording that the page
// does not follow fails here. The store's lines are left out: the test has
// no credentials, and fails those checks at once.
func TestOperationsCheckSample(t *testing.T) {
	b, err := os.ReadFile(operationsPage)
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "$ leasehold check "
	_, sample, ok := strings.Cut(string(b), "\n"+prompt)
	if !ok {
		t.Fatalf("%s shows no %q", operationsPage, prompt)
	}
	sample, _, _ = strings.Cut(sample, "\n```")
	command, sample, _ := strings.Cut(sample, "\n")
	var args []string
	for _, a := range strings.Fields(command) {
		args = append(args, strings.Trim(a, "'"))
	}

	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": empty, "AWS_SHARED_CREDENTIALS_FILE": empty, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_PROFILE": "", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
	} {
		t.Setenv(k, v)
	}
	env, stdout, _ := testEnv(nil)
	mainWith(t.Context(), nil, append([]string{"check", "--start-timeout", "2s"}, args...), env)

	printed := map[string]string{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		printed[strings.Fields(line + " -")[0]] = line
	}
	compared := 0
	for _, line := range strings.Split(sample, "\n") {
		name := strings.Fields(line + " -")[0]
		if name != "lease" && name != "ttl" && name != "cost" {
			continue
		}
		compared++
		if printed[name] != line {
			t.Errorf("%s's sample of leasehold check says\n%s\nand the command prints\n%s", operationsPage, line, printed[name])
		}
	}
	if compared != 3 {
		t.Errorf("%s's sample of leasehold check has %d of the lines lease, ttl and cost", operationsPage, compared)
	}
}

// TestShardCostDocumented: the cost of a shard group that run's help
// gives (shardCost, from the requests package shard makes) is what
// docs/shards.md and package shard's doc say, word for word (line breaks
// and comment markers aside): the assigner's instance, which renews two
// leases, was documented at a worker's 640 writes an hour in four
// hand-written places.
func TestShardCostDocumented(t *testing.T) {
	want := strings.Join(strings.Fields(shardCost()), " ")
	for _, doc := range []string{"../../docs/shards.md", "../../shard/doc.go"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "\n//", "\n")), " "); !strings.Contains(text, want) {
			t.Errorf("%s does not say, as leasehold run --help does:\n%s", doc, want)
		}
	}
}
