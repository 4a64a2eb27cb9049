package faultproxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// upstream is a store that records what reaches it and answers each
// request with status (200 unless the path says /refused).
type upstream struct {
	mu   sync.Mutex
	reqs []*http.Request
	body []string
}

func startUpstream(t *testing.T) (*upstream, string) {
	t.Helper()
	u := &upstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.reqs = append(u.reqs, r)
		u.body = append(u.body, string(b))
		u.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/refused") {
			w.WriteHeader(http.StatusPreconditionFailed)
			return
		}
		io.WriteString(w, "stored")
	}))
	t.Cleanup(srv.Close)
	return u, srv.URL
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

func do(t *testing.T, method, url string, header map[string]string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestPassThrough(t *testing.T) {
	t.Parallel()
	up, target := startUpstream(t)
	p := Start(t, target)
	resp, body, err := do(t, http.MethodPut, p.URL+"/bucket/key", map[string]string{"If-Match": `"abc"`})
	if err != nil || resp.StatusCode != 200 || body != "stored" {
		t.Fatalf("through the proxy: %v, %q, %v; want the store's 200 stored", resp, body, err)
	}
	r := up.reqs[0]
	if r.Host != strings.TrimPrefix(p.URL, "http://") || r.URL.Path != "/bucket/key" || r.Header.Get("If-Match") != `"abc"` || up.body[0] != "payload" {
		t.Errorf("the store got Host %q, path %q, If-Match %q, body %q; want the client's request as sent to the proxy", r.Host, r.URL.Path, r.Header.Get("If-Match"), up.body[0])
	}
}

func TestFaults(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		name       string
		fault      Fault
		path       string
		wantStatus int // 0: the connection closes unanswered
		wantCode   string
		reached    bool
		applied    int
	}{
		{"RefuseNeverReachesTheStore", Refuse(S3SlowDown), "/b/k", 503, "<Code>SlowDown</Code>", false, 1},
		{"ReplaceAfterApplied", Replace(AzureOperationTimedOut), "/b/k", 500, "<Code>OperationTimedOut</Code>", true, 1},
		{"ReplaceSparesRefusals", Replace(S3InternalError), "/b/refused", 412, "", true, 0},
		{"LoseAfterApplied", Lose(), "/b/k", 0, "", true, 1},
		{"LoseSparesRefusals", Lose(), "/b/refused", 412, "", true, 0},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			up, target := startUpstream(t)
			p := Start(t, target)
			rules := p.Add(Rule{Match: S3PutObject, Fault: row.fault})
			resp, body, err := do(t, http.MethodPut, p.URL+row.path, nil)
			switch {
			case row.wantStatus == 0 && err == nil:
				t.Errorf("answer %d %q, want the connection closed unanswered", resp.StatusCode, body)
			case row.wantStatus != 0 && (err != nil || resp.StatusCode != row.wantStatus || !strings.Contains(body, row.wantCode)):
				t.Errorf("answer %v %q (%v), want %d with %q", resp, body, err, row.wantStatus, row.wantCode)
			}
			if reached := up.count() == 1; reached != row.reached {
				t.Errorf("the store got the request: %t, want %t", reached, row.reached)
			}
			if n := p.Applied(rules[0]); n != row.applied {
				t.Errorf("Applied = %d, want %d", n, row.applied)
			}
		})
	}
}

// TestHang: a hung PutObject reaches no store and is never answered; it
// ends when its client gives up, or unanswered when the proxy stops, while
// requests the rule does not match pass.
func TestHang(t *testing.T) {
	t.Parallel()
	up, target := startUpstream(t)
	put := func(ctx context.Context, url string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader("payload"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	stopped := make(chan error, 1)
	t.Run("WhileTheProxyRuns", func(t *testing.T) {
		p := Start(t, target)
		rules := p.Add(Rule{Match: S3PutObject, Fault: Hang()})
		began := time.Now() // before the deadline is set: a loaded machine may pause between the two
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		if err := put(ctx, p.URL+"/b/k"); err == nil || time.Since(began) < 300*time.Millisecond {
			t.Errorf("a hung PutObject ended after %v with %v, want its client's timeout (300ms)", time.Since(began), err)
		}
		if resp, body, err := do(t, http.MethodGet, p.URL+"/b/k", nil); err != nil || body != "stored" {
			t.Errorf("a GetObject beside the hang: %v %q (%v), want passed through", resp, body, err)
		}
		// The next one hangs until the proxy stops, at this subtest's end.
		go func() { stopped <- put(context.Background(), p.URL+"/b/k") }()
		for p.Applied(rules[0]) < 2 {
			time.Sleep(10 * time.Millisecond)
		}
	})
	select {
	case err := <-stopped:
		if err == nil {
			t.Errorf("a PutObject hung when the proxy stopped was answered, want the connection closed unanswered")
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("a PutObject hung when the proxy stopped still hangs 5s later")
	}
	if n := up.count(); n != 1 {
		t.Errorf("the store got %d requests, want 1 (the GetObject; no hung PutObject)", n)
	}
}

func TestServiceAnswers(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		a       Answer
		status  int
		header  string
		content string
	}{
		{S3ConditionalRequestConflict, 409, "Content-Type", "<Code>ConditionalRequestConflict</Code>"},
		{DynamoThrottling, 400, "Content-Type", `"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"`},
		{DynamoTransactionConflict, 400, "X-Amzn-Requestid", "#TransactionConflictException"},
		{DynamoReplicatedWriteConflict, 400, "Content-Type", "#ReplicatedWriteConflictException"},
		{DynamoInternalServerError, 500, "Content-Type", "#InternalServerError"},
		{AzureServerBusy, 503, "X-Ms-Error-Code", "<Code>ServerBusy</Code>"},
	} {
		if row.a.Status != row.status || row.a.Headers[row.header] == "" || !strings.Contains(row.a.Body, row.content) {
			t.Errorf("answer %+v, want status %d, header %s and %q in the body", row.a, row.status, row.header, row.content)
		}
	}
	if AzureServerBusy.Headers["X-Ms-Error-Code"] != "ServerBusy" {
		t.Errorf("Azure's error code header is %q, want ServerBusy", AzureServerBusy.Headers["X-Ms-Error-Code"])
	}
}

func TestEveryAndTimes(t *testing.T) {
	t.Parallel()
	up, target := startUpstream(t)
	p := Start(t, target)
	rules := p.Add(Rule{Match: DynamoOp("PutItem"), Fault: Refuse(DynamoThrottling), Every: 2, Times: 2})
	var statuses []int
	for range 6 {
		resp, _, err := do(t, http.MethodPost, p.URL+"/", map[string]string{"X-Amz-Target": "DynamoDB_20120810.PutItem"})
		if err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, resp.StatusCode)
	}
	if want := []int{200, 400, 200, 400, 200, 200}; !slices.Equal(statuses, want) || p.Applied(rules[0]) != 2 || up.count() != 4 {
		t.Errorf("answers %v, applied %d, store reached %d times; want %v, 2 and 4", statuses, p.Applied(rules[0]), up.count(), want)
	}
	if resp, _, _ := do(t, http.MethodPost, p.URL+"/", map[string]string{"X-Amz-Target": "DynamoDB_20120810.GetItem"}); resp.StatusCode != 200 {
		t.Errorf("GetItem answered %d, want passed through", resp.StatusCode)
	}
	p.Clear()
}

// TestIgnoreConditions: the conditions are gone, and the request carries a
// new signature of the same scope, which no longer signs them (MinIO checks
// the signature itself in lease/s3lease's tests).
func TestIgnoreConditions(t *testing.T) {
	t.Parallel()
	up, target := startUpstream(t)
	p := Start(t, target)
	creds := aws.Credentials{AccessKeyID: "key", SecretAccessKey: "secret"}
	p.IgnoreConditions(creds)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, p.URL+"/bucket/key", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", "*")
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	if err := v4.NewSigner().SignHTTP(t.Context(), creds, req, "UNSIGNED-PAYLOAD", "s3", "eu-west-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.Header.Get("Authorization"), "if-none-match") {
		t.Fatalf("the client's signature does not sign If-None-Match: %s", req.Header.Get("Authorization"))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := up.reqs[0]
	auth := r.Header.Get("Authorization")
	if r.Header.Get("If-None-Match") != "" || strings.Contains(auth, "if-none-match") || !strings.Contains(auth, "/eu-west-1/s3/aws4_request") {
		t.Errorf("the store got If-None-Match %q, Authorization %q; want no condition, signed again for eu-west-1/s3", r.Header.Get("If-None-Match"), auth)
	}
}
