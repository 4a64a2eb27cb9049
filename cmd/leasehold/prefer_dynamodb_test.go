//go:build linux

// Found by the leasebench -deploy helper: openCandidates opened the
// candidates' lease through shard.OpenStore, which reads a dynamodb://
// URL's table as a shard group's (HASH "group", RANGE "key"), so --prefer
// failed on every lease in a lease table (HASH "lease"), the table the
// docs and Terraform make. It now opens the lease URL with the suffix
// after its key.

package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/leasehold/leasehold/runner"
)

// TestPreferOnADynamoDBLeaseTable: --prefer on a lease in a DynamoDB lease
// table (its one key, HASH "lease") opens the candidates' lease beside it,
// NAME.candidates in the same table, which the leader and a candidate
// both reach.
func TestPreferOnADynamoDBLeaseTable(t *testing.T) {
	endpoint, table := dynaliteTable(t)
	useAWSCredentials(t, aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"})
	o := &runOptions{commonOptions: commonOptions{
		lease:    fmt.Sprintf("dynamodb://%s/jobs/nightly?endpoint=%s&region=us-east-1", table, url.QueryEscape(endpoint)),
		identity: "a", ttl: 2 * time.Second,
	}}
	l, err := openCandidates(t.Context(), "run: --prefer", &o.commonOptions)
	if err != nil {
		t.Fatalf("openCandidates: %v", err)
	}
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatalf("Acquire on the candidates' lease: %v", err)
	}
	if err := l.Release(t.Context(), term); err != nil {
		t.Fatal(err)
	}
}

func TestCandidatesURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"s3://b/jobs/nightly?region=eu-west-1", "s3://b/jobs/nightly.candidates?region=eu-west-1"},
		{"dynamodb://t/nightly?endpoint=http%3A%2F%2F127.0.0.1%3A8000", "dynamodb://t/nightly.candidates?endpoint=http%3A%2F%2F127.0.0.1%3A8000"},
		{"gs://b/a%2Fb", "gs://b/a%2Fb.candidates"},
		{"mem://nightly", "mem://nightly.candidates"},
		{"quorum:mem://a,s3://b/k?region=eu-west-1,gs://c/d%2Fe", "quorum:mem://a.candidates,s3://b/k.candidates?region=eu-west-1,gs://c/d%2Fe.candidates"},
	} {
		if got, err := candidatesURL(c.in); err != nil || got != c.want {
			t.Errorf("candidatesURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"quorum:mem://a,mem://b", "quorum:mem://a,s3://,mem://c", "quorum:mem://a,quorum:mem://b,mem://c", "s3://", "%zz"} {
		if got, err := candidatesURL(bad); err == nil {
			t.Errorf("candidatesURL(%q) = %q, want an error", bad, got)
		}
	}
}

// TestRunRefusesACandidatesKey: run on another lease's candidates' key,
// alone or as a quorum's member, is refused by name before it campaigns;
// a key that only contains the suffix is not.
func TestRunRefusesACandidatesKey(t *testing.T) {
	for _, u := range []string{
		"mem://" + memName("job") + runner.CandidatesSuffix,
		"quorum:mem://" + memName("a") + ",mem://" + memName("b") + runner.CandidatesSuffix + ",mem://" + memName("c"),
	} {
		code, stderr := leasehold(t, t.Context(), "run", "--once", "--lease", u, "--", "true")
		if code != exitUsage || !strings.Contains(stderr, "names a candidates' key") {
			t.Errorf("run --lease %s: exit %d, want %d and a refusal naming the candidates' key; stderr:\n%s", u, code, exitUsage, stderr)
		}
	}
	u := "mem://" + memName("job.candidates-not")
	if code, stderr := leasehold(t, t.Context(), "run", "--once", "--lease", u, "--", "true"); code != 0 {
		t.Errorf("run --lease %s: exit %d, want 0; stderr:\n%s", u, code, stderr)
	}
}
