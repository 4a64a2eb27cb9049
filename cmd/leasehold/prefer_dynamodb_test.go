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
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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
	} {
		if got, err := candidatesURL(c.in); err != nil || got != c.want {
			t.Errorf("candidatesURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"quorum:mem://a,mem://b,mem://c", "s3://", "%zz"} {
		if got, err := candidatesURL(bad); err == nil {
			t.Errorf("candidatesURL(%q) = %q, want an error", bad, got)
		}
	}
}
