//go:build preferdynamoopen

// Open (build tag preferdynamoopen): openCandidates opens the candidates'
// lease through shard.OpenStore, which reads a dynamodb:// URL's table as
// a shard group's (HASH "group", RANGE "key"), so --prefer fails on every
// lease in a lease table (HASH "lease"), the table the docs and Terraform
// make.

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
	l, err := openCandidates(t.Context(), o)
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
