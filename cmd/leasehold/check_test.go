//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/leasehold/leasehold/internal/faultproxy"
)

// The checks leasehold check makes, in order.
var checkNames = []string{"ttl", "credentials", "store", "conditional writes", "permissions", "cost"}

// runCheck runs leasehold check in this process with args and -o json, and
// returns its exit status, its report and its error lines.
func runCheck(t *testing.T, args ...string) (int, checkReport, []string) {
	t.Helper()
	env, stdout, stderr := testEnv(nil)
	code := mainWith(t.Context(), nil, append([]string{"check", "-o", "json", "--start-timeout", "2s"}, args...), env)
	var rep checkReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("exit %d: -o json printed no report (%v):\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Check)
	}
	if strings.Join(names, ",") != strings.Join(checkNames, ",") {
		t.Errorf("checks %q, want %q", names, checkNames)
	}
	return code, rep, errorLines(stderr.String())
}

// result is the report's result of the check named name.
func (r checkReport) result(name string) checkResult {
	for _, c := range r.Checks {
		if c.Check == name {
			return c
		}
	}
	return checkResult{}
}

// wantAllOK fails the test unless every check passed, but for those
// skipped as expected, and check exited 0 with no error line.
func wantAllOK(t *testing.T, code int, rep checkReport, lines []string, skips ...string) {
	t.Helper()
	for _, c := range rep.Checks {
		want := verdictOK
		if strings.Contains(strings.Join(skips, ","), c.Check) {
			want = verdictSkip
		}
		if c.Verdict != want {
			t.Errorf("%s: %s, want %s: %s", c.Check, c.Verdict, want, c.Detail)
		}
	}
	if code != exitOK || !rep.OK || len(lines) != 0 {
		t.Errorf("exit %d, ok %t, error lines %q; want 0, true and none", code, rep.OK, lines)
	}
}

// wantFail fails the test unless check failed name, saying want, exited
// code, and printed one error line naming the check.
func wantFail(t *testing.T, code int, rep checkReport, lines []string, name, want string, wantCode int) {
	t.Helper()
	r := rep.result(name)
	if r.Verdict != verdictFail || !strings.Contains(r.Detail, want) {
		t.Errorf("%s: %s %q, want fail saying %q", name, r.Verdict, r.Detail, want)
	}
	if code != wantCode || rep.OK || len(lines) != 1 || !strings.Contains(lines[0], name+": ") || !strings.Contains(lines[0], want) {
		t.Errorf("exit %d, ok %t, error lines %q; want %d, false, and one line naming %s and saying %q", code, rep.OK, lines, wantCode, name, want)
	}
}

func TestCheckMemory(t *testing.T) {
	code, rep, lines := runCheck(t, "--lease", "mem://"+memName("check"))
	wantAllOK(t, code, rep, lines, "credentials")
	if p := rep.result("permissions"); !strings.Contains(p.Detail, "token 1") || !strings.Contains(p.Detail, "tokens only go up") {
		t.Errorf("permissions: %q, want the token acquired and why that is harmless", p.Detail)
	}
	c := rep.result("cost").Cost
	if c == nil || c.LeaderRequestsPerHour != 640 || c.FollowerRequestsPerHour != 1280 || c.LeaderDollarsPerMonth != 0 {
		t.Errorf("cost at TTL 15s: %+v, want 640 writes and 1,280 reads an hour, free", c)
	}
}

// TestCheckTimingTheRunnerRefuses: a call timeout the store allows but
// the runner refuses (not below the renew deadline) fails the ttl check,
// naming the flag, as leasehold run would refuse it.
func TestCheckTimingTheRunnerRefuses(t *testing.T) {
	code, rep, lines := runCheck(t, "--lease", "mem://"+memName("check-timing"), "--call-timeout", "10s")
	wantFail(t, code, rep, lines, "ttl", "--call-timeout: runner: CallTimeout (10s) of the lease must be less than RenewDeadline (8.4375s)", exitConfig)
}

// TestCheckHeldLease: a held lease is never written; write permission is
// reported as not tested, naming the holder.
func TestCheckHeldLease(t *testing.T) {
	name := "mem://" + memName("check-held")
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		leasehold(t, ctx, "run", "--lease", name, "--identity", "the-leader", "--", "sleep", "60")
	}()
	defer func() { stop(); <-done }()
	eventually(t, 10*time.Second, "the-leader holds the lease", func() bool {
		_, rep, _ := runCheck(t, "--lease", name)
		return strings.Contains(rep.result("store").Detail, "held by the-leader")
	})
	code, rep, lines := runCheck(t, "--lease", name)
	wantAllOK(t, code, rep, lines, "credentials", "permissions")
	if p := rep.result("permissions"); !strings.Contains(p.Detail, "write not tested") || !strings.Contains(p.Detail, "held by the-leader") {
		t.Errorf("permissions: %q, want write not tested, naming the holder", p.Detail)
	}
}

// TestCheckCost: check prices a leader and a follower at the runner's
// timing for the TTL, as the store's description says its renewals show:
// on Azure, a renewal is the lease's renewal and a metadata write, and a
// follower reads six times per renewal (its description's FollowerReads).
func TestCheckCost(t *testing.T) {
	for _, tc := range []struct {
		lease, ttl                 string
		leader, follower           float64
		leaderMonth, followerMonth string
		leaderText                 string
	}{
		{"s3://b/k", "15s", 640, 1280, "$2.34", "$0.37", "the leader 640 PUT/h"},
		{"dynamodb://t/n", "15s", 640, 1280, "$0.29", "$0.12", "the leader 640 PutItem/h"},
		{"azblob://c/b", "30s", 640, 1920, "$0.21", "$0.62", "the leader 320 PUT lease/renew + 320 PUT metadata/h"},
		{"gs://b/o", "3s", 3200, 6400, "$11.68", "$1.87", "the leader 3200 POST/h"},
		{"s3://b/k", "1000h", 0.00267, 0.00533, "$0.0000097", "$0.0000016", "the leader 1 PUT every 375h0m0s ($0.0000097/month), each follower 1 GET every 187h30m0s"},
		{"azblob://c/b", "60s", 320, 960, "$0.10", "$0.31", "the leader 160 PUT lease/renew + 160 PUT metadata/h"},
	} {
		t.Run(tc.lease, func(t *testing.T) {
			o := &checkOptions{}
			o.lease = tc.lease
			o.ttl, _ = time.ParseDuration(tc.ttl)
			timing, err := resolveTiming(o, o.leaseOptions())
			if err != nil {
				t.Fatal(err)
			}
			r := checkCost(o, timing)
			c := r.Cost
			if c == nil || c.LeaderRequestsPerHour != tc.leader || c.FollowerRequestsPerHour != tc.follower ||
				!strings.Contains(r.Detail, "("+tc.leaderMonth+"/month)") || !strings.Contains(r.Detail, "("+tc.followerMonth+"/month)") {
				t.Errorf("cost at %s: %+v %q; want %v and %v requests an hour, %s and %s a month", tc.ttl, c, r.Detail, tc.leader, tc.follower, tc.leaderMonth, tc.followerMonth)
			}
			if !strings.Contains(r.Detail, tc.leaderText) {
				t.Errorf("cost at %s: %q, want the leader's %q", tc.ttl, r.Detail, tc.leaderText)
			}
			// -o json's dollars are as printed: 2.34, not 2.3360000000000003.
			if l := "$" + strconv.FormatFloat(c.LeaderDollarsPerMonth, 'f', -1, 64); strings.TrimRight(l, "0") != strings.TrimRight(tc.leaderMonth, "0") {
				t.Errorf("cost at %s: -o json's leader_dollars_per_month %s, want it as printed, %s", tc.ttl, l, tc.leaderMonth)
			}
		})
	}
}

// TestCheckUnreachableStore: a store that cannot be reached is no verdict
// on the lease: exit 69, saying it was not checked; and a TTL too short
// for a store across a network fails the ttl check up front, naming the
// flag, and the store is then reached at the default TTL (it was reached
// at 10ms, its calls timing out after 2ms, and failed as unreachable).
func TestCheckUnreachableStore(t *testing.T) {
	useAWSCredentials(t, aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"})
	code, rep, lines := runCheck(t, "--lease", s3Lease("b", "http://127.0.0.1:1"))
	wantFail(t, code, rep, lines, "store", "cannot reach the store within --start-timeout (2s)", exitUnavailable)
	if len(lines) != 1 || !strings.Contains(lines[0], "check: the store could not be reached, so the lease was not checked: store: ") {
		t.Errorf("error lines %q; want one saying the store could not be reached, not that the lease is unsafe", lines)
	}

	endpoint, creds, bucket := minio(t)
	useAWSCredentials(t, creds)
	code, rep, lines = runCheck(t, "--lease", s3Lease(bucket, endpoint), "--ttl", "10ms")
	wantFail(t, code, rep, lines, "ttl", "--ttl 10ms is too short for a store across a network: a leader would renew every 3.75ms, and each call to the store would time out after 2ms; give --ttl 1s or more", exitConfig)
	if r := rep.result("store"); r.Verdict != verdictOK {
		t.Errorf("store at --ttl 10ms: %s %q; want it read at the default TTL", r.Verdict, r.Detail)
	}
	if r := rep.result("cost"); r.Verdict != verdictSkip {
		t.Errorf("cost at --ttl 10ms: %s %q; want skipped", r.Verdict, r.Detail)
	}
}

// minio is MinIO from the test stack, with a bucket for the checks.
func minio(t *testing.T) (endpoint string, creds aws.Credentials, bucket string) {
	t.Helper()
	endpoint = os.Getenv("LEASEHOLD_MINIO_ENDPOINT")
	if endpoint == "" {
		t.Skip(`leasehold check on MinIO: set LEASEHOLD_MINIO_ENDPOINT (scripts/stack up minio; eval "$(scripts/stack env)")`)
	}
	creds = aws.Credentials{AccessKeyID: os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), SecretAccessKey: os.Getenv("LEASEHOLD_MINIO_SECRET_KEY")}
	return endpoint, creds, createBucket(t, endpoint, creds)
}

// createBucket creates a bucket on the S3 endpoint, deleted (with what the
// test put in it) when the test ends.
func createBucket(t *testing.T, endpoint string, creds aws.Credentials) string {
	t.Helper()
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.StaticCredentialsProvider{Value: creds}})
	bucket := randomName("leasehold-check-")
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("create bucket %s on %s: %v", bucket, endpoint, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		objs, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket})
		if err == nil {
			for _, o := range objs.Contents {
				_, _ = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key})
			}
		}
		if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
			t.Logf("cleanup: DeleteBucket %s: %v", bucket, err)
		}
	})
	return bucket
}

// useAWSCredentials gives this process (the AWS SDK's default chain) creds.
func useAWSCredentials(t *testing.T, creds aws.Credentials) {
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func s3Lease(bucket, endpoint string) string {
	return fmt.Sprintf("s3://%s/check/lease?endpoint=%s&use_path_style=true&region=us-east-1", bucket, url.QueryEscape(endpoint))
}

func TestCheckS3(t *testing.T) {
	stores := []struct{ name, variable string }{{"MinIO", "LEASEHOLD_MINIO_ENDPOINT"}, {"moto", "LEASEHOLD_MOTO_ENDPOINT"}}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			endpoint := os.Getenv(st.variable)
			if endpoint == "" {
				t.Skipf(`leasehold check on %s: set %s (scripts/stack up; eval "$(scripts/stack env)")`, st.name, st.variable)
			}
			creds := aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}
			if st.name == "MinIO" {
				creds = aws.Credentials{AccessKeyID: os.Getenv("LEASEHOLD_MINIO_ACCESS_KEY"), SecretAccessKey: os.Getenv("LEASEHOLD_MINIO_SECRET_KEY")}
			}
			useAWSCredentials(t, creds)
			bucket := createBucket(t, endpoint, creds)

			code, rep, lines := runCheck(t, "--lease", s3Lease(bucket, endpoint))
			wantAllOK(t, code, rep, lines)
			if c := rep.result("credentials"); !strings.Contains(c.Detail, "EnvConfigCredentials") {
				t.Errorf("credentials: %q, want the environment named", c.Detail)
			}

			code, rep, lines = runCheck(t, "--lease", s3Lease("no-such-bucket-"+bucket, endpoint))
			wantFail(t, code, rep, lines, "store", fmt.Sprintf("bucket %q does not exist", "no-such-bucket-"+bucket), exitConfig)
		})
	}
}

// TestCheckIgnoringStore: a store that accepts conditional writes and
// ignores them (the fault proxy in front of MinIO) fails the conditional
// writes check, exit 78, with one line saying why.
func TestCheckIgnoringStore(t *testing.T) {
	endpoint, creds, bucket := minio(t)
	useAWSCredentials(t, creds)
	p := faultproxy.Start(t, endpoint)
	p.IgnoreConditions(creds)
	code, rep, lines := runCheck(t, "--lease", s3Lease(bucket, p.URL))
	wantFail(t, code, rep, lines, "conditional writes", "lease: store does not keep the contract", exitConfig)
	if r := rep.result("conditional writes"); !strings.Contains(r.Detail, "If-None-Match") {
		t.Errorf("conditional writes: %q, want the condition the store ignored named", r.Detail)
	}
	if r := rep.result("permissions"); r.Verdict != verdictSkip || !strings.Contains(r.Detail, "write not tested") {
		t.Errorf("permissions: %s %q; want skip, with no write to a store that ignores conditions", r.Verdict, r.Detail)
	}
}

// TestCheckProbeRefused: a store that refuses the probe object to the
// credentials (403 AccessDenied, the fault proxy in front of MinIO) is no
// store that ignores conditions: the conditional writes check fails as
// permission denied, naming the grants the probe needs, exit 78.
func TestCheckProbeRefused(t *testing.T) {
	endpoint, creds, bucket := minio(t)
	useAWSCredentials(t, creds)
	p := faultproxy.Start(t, endpoint)
	p.Add(faultproxy.Rule{Match: faultproxy.PathSuffix(".leasehold-probe"), Fault: faultproxy.Refuse(faultproxy.S3Error(http.StatusForbidden, "AccessDenied"))})
	code, rep, lines := runCheck(t, "--lease", s3Lease(bucket, p.URL))
	wantFail(t, code, rep, lines, "conditional writes", "permission denied: the store refused the probe, which needs s3:GetObject, s3:PutObject on arn:aws:s3:::BUCKET/KEY.leasehold-probe", exitConfig)
	if r := rep.result("conditional writes"); strings.Contains(r.Detail, "does not keep the contract") {
		t.Errorf("conditional writes: %q, want no verdict on the store", r.Detail)
	}
}

// TestCheckNoCredentials: with no AWS credentials anywhere (no AWS_
// variables, an empty home, instance metadata off), the credentials line
// says none were found and where the SDK looked.
func TestCheckNoCredentials(t *testing.T) {
	endpoint, _, bucket := minio(t)
	bin := buildBinaries(t)
	cmd := exec.Command(bin+"/leasehold", "check", "-o", "json", "--start-timeout", "2s", "--lease", s3Lease(bucket, endpoint))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_EC2_METADATA_DISABLED=true"}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	var rep checkReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("exit %d: no report (%v):\n%s\nstderr:\n%s", code, err, out, stderr.String())
	}
	wantFail(t, code, rep, errorLines(stderr.String()), "credentials", "no usable AWS credentials were found", exitConfig)
	if c := rep.result("credentials"); !strings.Contains(c.Detail, "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: not set") || !strings.Contains(c.Detail, "IMDS: turned off by AWS_EC2_METADATA_DISABLED") {
		t.Errorf("credentials: %q, want where the SDK looked", c.Detail)
	}
	if strings.Contains(stderr.String(), "SDK ") {
		t.Errorf("the AWS SDK logged to stderr:\n%s", stderr.String())
	}
}

// dynaliteTable creates a lease table on dynalite from the test stack,
// deleted when the test ends, and returns the endpoint and the table.
func dynaliteTable(t *testing.T) (endpoint, table string) {
	t.Helper()
	endpoint = os.Getenv("LEASEHOLD_DYNALITE_ENDPOINT")
	if endpoint == "" {
		t.Skip(`leasehold on dynalite: set LEASEHOLD_DYNALITE_ENDPOINT (scripts/stack up dynalite; eval "$(scripts/stack env)")`)
	}
	creds := aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}
	client := ddb.New(ddb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.StaticCredentialsProvider{Value: creds}})
	table = randomName("leasehold-check-")
	_, err := client.CreateTable(t.Context(), &ddb.CreateTableInput{
		TableName:            &table,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("lease"), KeyType: types.KeyTypeHash}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("lease"), AttributeType: types.ScalarAttributeTypeS}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", table, err)
	}
	t.Cleanup(func() { _, _ = client.DeleteTable(context.Background(), &ddb.DeleteTableInput{TableName: &table}) })
	return endpoint, table
}

func TestCheckDynamoDB(t *testing.T) {
	endpoint, table := dynaliteTable(t)
	useAWSCredentials(t, aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"})
	leaseURL := func(table string) string {
		return fmt.Sprintf("dynamodb://%s/check?endpoint=%s&region=us-east-1", table, url.QueryEscape(endpoint))
	}

	code, rep, lines := runCheck(t, "--lease", leaseURL(table))
	wantAllOK(t, code, rep, lines)
	if r := rep.result("conditional writes"); !strings.Contains(r.Detail, "on the probe item beside the lease") {
		t.Errorf("conditional writes: %q, want the probe it sent named", r.Detail)
	}
	client := ddb.New(ddb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	out, err := client.GetItem(t.Context(), &ddb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"lease": &types.AttributeValueMemberS{Value: "check.leasehold-probe"}}, ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Item) == 0 {
		t.Errorf("GetItem of the probe item check.leasehold-probe: %v, %d attributes; want the item check's probe wrote", err, len(out.Item))
	}

	code, rep, lines = runCheck(t, "--lease", leaseURL("no-such-table-"+table))
	wantFail(t, code, rep, lines, "store", fmt.Sprintf("table %q does not exist", "no-such-table-"+table), exitConfig)
}

// TestCheckIgnoringDynamoDB: an endpoint that answers 200 to conditional
// PutItems and ignores their conditions (the fault proxy in front of
// dynalite) fails the conditional writes check, exit 78, naming the step,
// and nothing is written to the lease's item.
func TestCheckIgnoringDynamoDB(t *testing.T) {
	endpoint, table := dynaliteTable(t)
	creds := aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}
	useAWSCredentials(t, creds)
	p := faultproxy.Start(t, endpoint)
	p.IgnoreConditions(creds)
	code, rep, lines := runCheck(t, "--lease", fmt.Sprintf("dynamodb://%s/check?endpoint=%s&region=us-east-1", table, url.QueryEscape(p.URL)))
	wantFail(t, code, rep, lines, "conditional writes", "lease: store does not keep the contract", exitConfig)
	if r := rep.result("conditional writes"); !strings.Contains(r.Detail, "step 2, create-if-absent again") || !strings.Contains(r.Detail, "PutItem with ConditionExpression") {
		t.Errorf("conditional writes: %q, want the step and the condition the store ignored named", r.Detail)
	}
	if r := rep.result("permissions"); r.Verdict != verdictSkip || !strings.Contains(r.Detail, "write not tested") {
		t.Errorf("permissions: %s %q; want skip, with no write to a store that ignores conditions", r.Verdict, r.Detail)
	}
	client := ddb.New(ddb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: credentials.StaticCredentialsProvider{Value: creds}})
	out, err := client.GetItem(t.Context(), &ddb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"lease": &types.AttributeValueMemberS{Value: "check"}}, ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Item) != 0 {
		t.Errorf("GetItem of the lease: %v, %d attributes; want no item: nothing written to the lease", err, len(out.Item))
	}
}

func TestCheckAzure(t *testing.T) {
	container := azuriteContainer(t)
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING"))
	code, rep, lines := runCheck(t, "--lease", "azblob://"+container+"/check")
	wantAllOK(t, code, rep, lines, "conditional writes")
	if c := rep.result("credentials"); !strings.Contains(c.Detail, `account key of "devstoreaccount1"`) {
		t.Errorf("credentials: %q, want the connection string's account key named", c.Detail)
	}

	code, rep, lines = runCheck(t, "--lease", "azblob://no-such-"+container+"/check")
	wantFail(t, code, rep, lines, "store", fmt.Sprintf("container %q does not exist", "no-such-"+container), exitConfig)

	code, rep, lines = runCheck(t, "--lease", "azblob://"+container+"/check", "--ttl", "10s")
	wantFail(t, code, rep, lines, "ttl", "TTL (10s) must be a whole number of seconds from 15s to 60s", exitConfig)
	if s := rep.result("store"); s.Verdict != verdictOK {
		t.Errorf("store: %s %q; want the other checks made at the default TTL", s.Verdict, s.Detail)
	}
}

func TestCheckCloudStorage(t *testing.T) {
	bucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
	if os.Getenv("STORAGE_EMULATOR_HOST") == "" || bucket == "" {
		t.Skip(`leasehold check on fake-gcs-server: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up gcs; eval "$(scripts/stack env)")`)
	}
	code, rep, lines := runCheck(t, "--lease", "gs://"+bucket+"/"+randomName("check-"))
	wantAllOK(t, code, rep, lines)
	if c := rep.result("credentials"); !strings.Contains(c.Detail, "emulator") {
		t.Errorf("credentials: %q, want the emulator named", c.Detail)
	}
	code, rep, lines = runCheck(t, "--lease", "gs://"+bucket+"/check", "--ttl", "1s")
	wantFail(t, code, rep, lines, "ttl", "TTL (1s) must be at least 3s", exitConfig)
}

// TestCheckOfAQuorumOnTheEmulators: check probes each member of a quorum
// of MinIO, dynalite and fake-gcs-server by its own store's rules (each
// member's conditional writes, which a store that does not keep them is
// refused for: rule 9) and passes, pricing the quorum as its members added
// up: the CLI's quorum path against real servers, not memleases.
func TestCheckOfAQuorumOnTheEmulators(t *testing.T) {
	gcsBucket := os.Getenv("LEASEHOLD_GCS_BUCKET")
	if os.Getenv("STORAGE_EMULATOR_HOST") == "" || gcsBucket == "" {
		t.Skip(`leasehold check of a quorum on the emulators: set STORAGE_EMULATOR_HOST and LEASEHOLD_GCS_BUCKET (scripts/stack up; eval "$(scripts/stack env)")`)
	}
	endpoint, creds, bucket := minio(t)
	dynalite, table := dynaliteTable(t)
	useAWSCredentials(t, creds) // dynalite takes any
	name := randomName("qcheck-")
	q := "quorum:" + s3Lease(bucket, endpoint) +
		"," + fmt.Sprintf("dynamodb://%s/%s?endpoint=%s&region=us-east-1", table, name, url.QueryEscape(dynalite)) +
		",gs://" + gcsBucket + "/" + name
	env, stdout, stderr := testEnv(nil)
	code := mainWith(t.Context(), nil, []string{"check", "--lease", q, "-o", "json", "--start-timeout", "5s"}, env)
	var rep checkReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("exit %d: -o json printed no report (%v):\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		seen[c.Check] = true
		if c.Verdict != verdictOK {
			t.Errorf("%s: %s, want %s: %s", c.Check, c.Verdict, verdictOK, c.Detail)
		}
	}
	for i := 1; i <= 3; i++ {
		for _, check := range []string{"store", "conditional writes"} {
			if want := fmt.Sprintf("member %d %s", i, check); !seen[want] {
				t.Errorf("no %q among the checks %v", want, seen)
			}
		}
	}
	if code != exitOK || !rep.OK {
		t.Errorf("check of a quorum of MinIO, dynalite and fake-gcs-server: exit %d, ok %t; want 0 and true\n%s", code, rep.OK, stderr)
	}
}
