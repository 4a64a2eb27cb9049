//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// TestEndToEndProbeWritesOverNoLease: the store's probe (rule 9) writes at
// KEY.leasehold-probe "without ever writing over a live record to find
// out". A lease named like a probe key is refused at start, naming the
// key; and a live lease record found there all the same (written by an
// older leasehold, which did not refuse such keys) is left alone by a
// check of the lease beside it, which says why it cannot check the store.
// Red team #9: before, the check replaced that record with a released
// one, and its holder found its lease lost. On MinIO.
func TestEndToEndProbeWritesOverNoLease(t *testing.T) {
	e := newE2E(t)
	base := e.leaseURL(e.endpoint)
	path, query, _ := strings.Cut(base, "?")
	code, stderr := e.run(30*time.Second, "run", "--lease", path+driver.ProbeSuffix+"?"+query, "--", "true")
	if code != exitConfig || !strings.Contains(stderr, ".leasehold-probe\") must not end with .leasehold-probe") {
		t.Errorf("run on a lease named like a probe key: exit %d, want %d and an error naming the key; stderr:\n%s", code, exitConfig, stderr)
	}

	key := strings.TrimPrefix(path, "s3://"+e2eBucket+"/") + driver.ProbeSuffix
	live := driver.EncodeJSON(lease.Record{Holder: "holder", Token: 3, TTL: e2eTTL, Nonce: driver.NewNonce()})
	put, err := e.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(e2eBucket), Key: &key, Body: bytes.NewReader(live)})
	if err != nil {
		t.Fatalf("PutObject of a live record at %s: %v", key, err)
	}
	code, stderr = e.run(30*time.Second, "check", "--lease", base, "--ttl="+e2eTTL.String())
	if code == 0 || !strings.Contains(stderr, key+" holds a lease record that no probe wrote") {
		t.Errorf("check beside a live lease at its probe key: exit %d, want a failure naming the probe key; stderr:\n%s", code, stderr)
	}
	head, err := e.s3.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(e2eBucket), Key: &key})
	if err != nil || aws.ToString(head.ETag) != aws.ToString(put.ETag) {
		t.Errorf("the live record at %s after the check: ETag %s (%v), want %s, as written", key, aws.ToString(head.ETag), err, aws.ToString(put.ETag))
	}
}
