package azurelease_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	azlease "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
)

// TestTokensStrictlyIncrease takes one lease through every way a term can
// start and end, on Azurite's own clock, and checks that every
// acquisition's token is greater than all before it: a free acquire, a
// release, a takeover after a 15s lease lapsed, a lapsed term's release,
// the holder's own re-acquire, a broken lease.
func TestTokensStrictlyIncrease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	a, b := e.open(nil, "jobs", "worker-a"), e.open(nil, "jobs", "worker-b")
	var tokens []uint64
	note := func(how string, term lease.Term) {
		t.Helper()
		if n := len(tokens); n > 0 && term.Token <= tokens[n-1] {
			t.Errorf("%s: token %d, want more than every earlier token %v", how, term.Token, tokens)
		}
		tokens = append(tokens, term.Token)
	}

	ta := e.acquire(a)
	note("a's Acquire of a new blob", ta)
	if err := a.Release(ctx, ta); err != nil {
		t.Fatalf("a's Release: %v", err)
	}
	tb := e.acquire(b)
	note("b's Acquire after a's Release", tb)

	// b stops renewing; a polls until Azure lets its 15s lease lapse.
	start := time.Now()
	for {
		term, err := a.Acquire(ctx)
		if err == nil {
			ta = term
			break
		}
		if !errors.Is(err, lease.ErrHeld) {
			t.Fatalf("a's Acquire while b's lease lapses: %v, want lease.ErrHeld", err)
		}
		if time.Since(start) > testTTL+5*time.Second {
			t.Fatalf("a still refused %v after b's last renewal", time.Since(start))
		}
		time.Sleep(time.Second)
	}
	if d := time.Since(tb.Sent); d < testTTL-time.Second {
		t.Errorf("a took over %v after b's acquire was sent, want about the TTL (%v)", d, testTTL)
	}
	note("a's takeover after b's lease lapsed", ta)
	if err := b.Release(ctx, tb); !errors.Is(err, lease.ErrLost) {
		t.Errorf("b's Release of its lapsed and taken-over term: %v, want lease.ErrLost", err)
	}

	if _, err := a.Acquire(ctx); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("a's second Acquire of the lease it holds: %v, want lease.ErrHeld: its own term is live", err)
	}
	t2 := ta

	// Someone breaks a's lease (az storage blob lease break).
	breaker, _ := azlease.NewBlobClient(e.blob("jobs"), nil)
	if _, err := breaker.BreakLease(ctx, &azlease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(0))}); err != nil {
		t.Fatalf("BreakLease: %v", err)
	}
	if _, err := a.Renew(ctx, t2); !errors.Is(err, lease.ErrLost) {
		t.Errorf("a's Renew of a broken lease: %v, want lease.ErrLost", err)
	}
	tb = e.acquire(b)
	note("b's Acquire of a broken lease", tb)
	if err := b.Release(ctx, tb); err != nil {
		t.Fatalf("b's Release: %v", err)
	}
	note("a's Acquire after b's Release", e.acquire(a))
	t.Logf("tokens: %v", tokens)
}

// TestReleaseAfterLapse: a holder whose lease lapsed, with nobody taking it
// since, releases it without error; the record keeps its token.
func TestReleaseAfterLapse(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.open(nil, "jobs", "worker-a")
	ta := e.acquire(a)
	time.Sleep(testTTL + time.Second)
	r, err := a.Observe(t.Context())
	if err != nil || r.Holder != "worker-a" || r.Token != ta.Token || !r.Released {
		t.Errorf("Observe of a lapsed lease: %+v, %v; want worker-a's token %d, Released", r, err, ta.Token)
	}
	if err := a.Release(t.Context(), ta); err != nil {
		t.Errorf("Release of a lapsed term nobody took over: %v, want nil", err)
	}
	tb := e.acquire(e.open(nil, "jobs", "worker-b"))
	if tb.Token != ta.Token+1 {
		t.Errorf("the next Acquire's token is %d, want %d", tb.Token, ta.Token+1)
	}
}

// TestTTLOutOfRange: Azure leases last 15s to 60s; Open refuses any other
// TTL, naming the range, unless the lease is infinite.
func TestTTLOutOfRange(t *testing.T) {
	t.Parallel()
	// Open sends no request: the port need not answer.
	const cs = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:9/devstoreaccount1;"
	for _, row := range []struct {
		name     string
		ttl      time.Duration
		infinite bool
		ok       bool
	}{
		{"10s", 10 * time.Second, false, false},
		{"61s", 61 * time.Second, false, false},
		{"15.5s", 15500 * time.Millisecond, false, false},
		{"14.999s", 14999 * time.Millisecond, false, false},
		{"15s", 15 * time.Second, false, true},
		{"60s", 60 * time.Second, false, true},
		{"default", 0, false, true},
		{"10s-infinite", 10 * time.Second, true, true},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := azurelease.Open(t.Context(), azurelease.Options{Container: "leases", Blob: "jobs", ConnectionString: cs, InfiniteLease: row.infinite},
				lease.Options{Identity: "worker-1", TTL: row.ttl})
			if row.ok {
				if err != nil {
					t.Errorf("Open with TTL %v: %v, want a lease", row.ttl, err)
				}
				return
			}
			t.Logf("TTL %v: %v", row.ttl, err)
			var oe *lease.OptionError
			if !errors.As(err, &oe) || oe.Pkg != "azurelease" || oe.Field != "TTL" || !errors.Is(err, lease.ErrInvalid) {
				t.Fatalf("Open with TTL %v: %v, want an *lease.OptionError for azurelease's TTL", row.ttl, err)
			}
			if !strings.Contains(err.Error(), "from 15s to 60s") || !strings.Contains(err.Error(), "("+row.ttl.String()+")") {
				t.Errorf("Open with TTL %v: %q, want the value and the range 15s to 60s in the message", row.ttl, err)
			}
		})
	}
}

// TestOpenOptions: Open checks its options, naming the field, before any
// request.
func TestOpenOptions(t *testing.T) {
	t.Parallel()
	const cs = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:9/devstoreaccount1;"
	for _, row := range []struct {
		name string
		opts azurelease.Options
		want string
	}{
		{"no-account", azurelease.Options{Container: "leases", Blob: "jobs"}, "azurelease: Options (no Client, ConnectionString or AccountURL) must say how to reach the account"},
		{"two-ways", azurelease.Options{Container: "leases", Blob: "jobs", ConnectionString: cs, AccountURL: "https://a.blob.core.windows.net/"}, "azurelease: Options (AccountURL and ConnectionString set) must say how to reach the account once"},
		{"no-container", azurelease.Options{Blob: "jobs", ConnectionString: cs}, `azurelease: Container ("") is not a container name`},
		{"no-blob", azurelease.Options{Container: "leases", ConnectionString: cs}, `azurelease: Blob ("") must not be empty`},
		{"development-storage", azurelease.Options{Container: "leases", Blob: "jobs", ConnectionString: "UseDevelopmentStorage=true"}, "is not understood by the Go Azure SDK"},
		{"http-account-url", azurelease.Options{Container: "leases", Blob: "jobs", AccountURL: "http://127.0.0.1:10000/devstoreaccount1"}, "must be https"},
		{"account-url-password", azurelease.Options{Container: "leases", Blob: "jobs", AccountURL: "https://me:s3cret@a.blob.core.windows.net/"}, `AccountURL ("https://me:xxxxx@a.blob.core.windows.net/") is not a service URL`},
		{"account-url-sas", azurelease.Options{Container: "leases", Blob: "jobs", AccountURL: "https://a.blob.core.windows.net/?sv=2022-11-02&sig=s3cret"}, `AccountURL ("https://a.blob.core.windows.net/?sv=2022-11-02&sig=xxxxx") has a query (a SAS token?)`},
	} {
		t.Run(row.name, func(t *testing.T) {
			_, err := azurelease.Open(t.Context(), row.opts, lease.Options{Identity: "worker-1"})
			t.Logf("%v", err)
			if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), row.want) {
				t.Errorf("Open: %v, want lease.ErrInvalid with %q", err, row.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Open: %v shows a secret", err)
			}
		})
	}
}

// TestMissingContainer: every call on a lease in a container that does not
// exist fails with lease.ErrNotFound naming the container, and nothing is
// created.
func TestMissingContainer(t *testing.T) {
	t.Parallel()
	cs := azureemu.ConnectionString(t)
	c := azureemu.NewClient(t, cs)
	name := "leasehold-missing-" + fmt.Sprint(time.Now().UnixNano())
	l, err := azurelease.Open(t.Context(), azurelease.Options{Container: name, Blob: "jobs", Client: c}, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, acqErr := l.Acquire(t.Context())
	_, obsErr := l.Observe(t.Context())
	_, renErr := l.Renew(t.Context(), lease.Term{Holder: "worker-1", Token: 1, Version: "00000000-0000-4000-8000-000000000000"})
	for what, err := range map[string]error{"Acquire": acqErr, "Observe": obsErr, "Renew": renErr} {
		t.Logf("%s: %v", what, err)
		if !errors.Is(err, lease.ErrNotFound) || !strings.Contains(err.Error(), `container "`+name+`" does not exist`) || lease.Retryable(err) {
			t.Errorf("%s in a missing container: %v, want lease.ErrNotFound naming %q, not retryable", what, err, name)
		}
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.ErrorCode != "ContainerNotFound" {
			t.Errorf("%s: errors.As finds no *azcore.ResponseError with ContainerNotFound in %v", what, err)
		}
	}
	if _, err := c.ServiceClient().NewContainerClient(name).GetProperties(t.Context(), nil); err == nil {
		t.Errorf("the container %q exists after the calls; azurelease must never create containers", name)
	}
}

// TestForeignInfiniteLease: a blob that another tool leased for ever is
// reported as held by an unknown holder, with a message saying what to do,
// and is never taken over. Once broken, it is acquired with a token above
// the last leasehold term's.
func TestForeignInfiniteLease(t *testing.T) {
	t.Parallel()
	parent := newEnv(t)
	for _, row := range []struct {
		name  string
		setup func(e *env, blob string) (lastToken uint64)
	}{
		{"new-blob", func(e *env, blob string) uint64 {
			e.put(blob, "", nil)
			return 0
		}},
		{"released-lease", func(e *env, blob string) uint64 {
			l := e.open(nil, blob, "worker-old")
			term := e.acquire(l)
			if err := l.Release(e.t.Context(), term); err != nil {
				e.t.Fatal(err)
			}
			return term.Token
		}},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			e, ctx := parent.on(t), t.Context()
			last := row.setup(e, row.name)
			other, _ := azlease.NewBlobClient(e.blob(row.name), nil)
			if _, err := other.AcquireLease(ctx, -1, nil); err != nil {
				t.Fatalf("the other tool's AcquireLease(-1): %v", err)
			}
			before := e.props(row.name)
			l := e.open(nil, row.name, "worker-1")
			deadline := time.Now().Add(testTTL + 2*time.Second) // longer than any lease leasehold takes
			for i := 0; time.Now().Before(deadline); i++ {
				_, err := l.Acquire(ctx)
				if i == 0 {
					t.Logf("Acquire: %v", err)
				}
				var held *lease.HeldError
				if !errors.As(err, &held) || !errors.Is(err, lease.ErrHeld) {
					t.Fatalf("Acquire %d of a blob with a foreign infinite lease: %v, want a *lease.HeldError", i, err)
				}
				if held.Record.Holder != "" || held.Record.Token != 0 || held.Wait <= 0 {
					t.Errorf("HeldError names %q, token %d, wait %v; want an unknown holder (\"\", 0) and a positive wait", held.Record.Holder, held.Record.Token, held.Wait)
				}
				if !strings.Contains(err.Error(), "infinite Azure lease") || !strings.Contains(err.Error(), "az storage blob lease break") {
					t.Errorf("Acquire: %q, want it to say the lease is infinite and how to break it", err)
				}
				time.Sleep(2 * time.Second)
			}
			r, err := l.Observe(ctx)
			if err != nil || r.Holder != "" || r.Held() || r.Released {
				t.Errorf("Observe: %+v, %v; want an unknown holder, not released", r, err)
			}
			if after := e.props(row.name); *after.ETag != *before.ETag {
				t.Errorf("the blob changed (ETag %s, was %s) while held by another tool", *after.ETag, *before.ETag)
			}
			if _, err := other.BreakLease(ctx, &azlease.BlobBreakOptions{BreakPeriod: to.Ptr(int32(0))}); err != nil {
				t.Fatalf("BreakLease: %v", err)
			}
			if term := e.acquire(l); term.Token != last+1 {
				t.Errorf("Acquire after the break: token %d, want %d", term.Token, last+1)
			}
		})
	}
}

// TestForeignBlob: a blob that leasehold did not write (foreign metadata,
// a key of the record missing, values leasehold could not have written,
// content) is lease.ErrCorrupt, not retryable, and is never changed.
func TestForeignBlob(t *testing.T) {
	t.Parallel()
	parent := newEnv(t)
	good := map[string]string{"leasehold": "1", "holder": "worker-1", "token": "3", "ttl_ms": "15000", "released": "true", "nonce": "0123456789abcdef"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for gk, gv := range good {
			m[gk] = gv
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, row := range []struct {
		name string
		body string
		md   map[string]string
	}{
		{"token-banana", "", with("token", "banana")},
		{"token-zero", "", with("token", "0")},
		{"foreign-metadata", "", map[string]string{"owner": "another-tool", "locked": "true"}},
		{"nonce-missing", "", with("nonce", "")},
		{"format-2", "", with("leasehold", "2")},
		{"no-marker", "", with("leasehold", "")},
		{"released-maybe", "", with("released", "maybe")},
		{"ttl-garbage", "", with("ttl_ms", "15s")},
		{"bad-holder", "", with("holder", "%zz")},
		{"content", "hello", nil},
		{"content-and-record", "hello", good},
	} {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			e := parent.on(t)
			e.put(row.name, row.body, row.md)
			before := e.props(row.name)
			l := e.open(nil, row.name, "worker-2")
			_, acqErr := l.Acquire(t.Context())
			_, obsErr := l.Observe(t.Context())
			t.Logf("Acquire: %v", acqErr)
			for what, err := range map[string]error{"Acquire": acqErr, "Observe": obsErr} {
				if !errors.Is(err, lease.ErrCorrupt) || lease.Retryable(err) {
					t.Errorf("%s of a foreign blob: %v, want lease.ErrCorrupt, not retryable", what, err)
				}
			}
			after := e.props(row.name)
			if *after.ETag != *before.ETag || *after.LeaseState != azlease.StateTypeAvailable {
				t.Errorf("the foreign blob changed: ETag %s (was %s), lease state %s", *after.ETag, *before.ETag, *after.LeaseState)
			}
		})
	}
}

// TestMetadataKeysAnyCase: Azure keeps metadata keys case-insensitively,
// and Azurite returns them capitalised; a record whose keys come back in
// any case is read, and the next acquisition continues its tokens.
func TestMetadataKeysAnyCase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.put("jobs", "", map[string]string{"LeaseHold": "1", "HOLDER": "worker%201", "Token": "41", "ttl_MS": "20000", "Released": "true", "nonce": "0123456789abcdef"})
	l := e.open(nil, "jobs", "worker-2")
	r, err := l.Observe(t.Context())
	if err != nil || r.Holder != "worker 1" || r.Token != 41 || r.TTL != 20*time.Second || !r.Released {
		t.Fatalf("Observe: %+v, %v; want worker 1's released token 41, TTL 20s", r, err)
	}
	term := e.acquire(l)
	if term.Token != 42 {
		t.Errorf("Acquire: token %d, want 42", term.Token)
	}
	p := e.props("jobs")
	var keys []string
	for k := range p.Metadata {
		keys = append(keys, k)
	}
	t.Logf("metadata keys as the service returns them: %v", keys)
}

// TestUnreachable: a service that does not answer (a closed port) is
// lease.ErrUnavailable, retryable, for every method.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cs := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://" + addr + "/devstoreaccount1;"
	l, err := azurelease.Open(t.Context(), azurelease.Options{Container: "leases", Blob: "jobs", ConnectionString: cs}, lease.Options{Identity: "worker-1"})
	if err != nil {
		t.Fatal(err)
	}
	term := lease.Term{Holder: "worker-1", Token: 1, Version: "00000000-0000-4000-8000-000000000000"}
	_, acqErr := l.Acquire(t.Context())
	_, obsErr := l.Observe(t.Context())
	_, renErr := l.Renew(t.Context(), term)
	relErr := l.Release(t.Context(), term)
	for what, err := range map[string]error{"Acquire": acqErr, "Observe": obsErr, "Renew": renErr, "Release": relErr} {
		t.Logf("%s: %v", what, err)
		if !errors.Is(err, lease.ErrUnavailable) || !lease.Retryable(err) || errors.Is(err, lease.ErrLost) {
			t.Errorf("%s against a closed port: %v, want lease.ErrUnavailable, retryable, not lost", what, err)
		}
	}
}

// TestInfiniteLease: with Options.InfiniteLease the Azure lease never
// lapses; contenders see its holder, and a release frees it as usual.
func TestInfiniteLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	open := func(id string, infinite bool, ttl time.Duration) lease.Lease {
		l, err := azurelease.Open(ctx, azurelease.Options{Container: e.Container, Blob: "jobs", Client: e.Client, InfiniteLease: infinite},
			lease.Options{Identity: id, TTL: ttl})
		if err != nil {
			t.Fatalf("Open(%s, InfiniteLease %t): %v", id, infinite, err)
		}
		return l
	}
	// With InfiniteLease, the TTL only sets the runner's cadence: 5s is
	// allowed.
	a, b, c := open("worker-a", true, 5*time.Second), open("worker-b", true, 5*time.Second), open("worker-c", false, testTTL)
	ta := e.acquire(a)
	if p := e.props("jobs"); *p.LeaseDuration != azlease.DurationTypeInfinite {
		t.Errorf("lease duration %s, want infinite", *p.LeaseDuration)
	}
	ta, err := a.Renew(ctx, ta)
	if err != nil {
		t.Fatalf("Renew of an infinite lease: %v", err)
	}
	for _, l := range []lease.Lease{b, c} {
		_, err := l.Acquire(ctx)
		t.Logf("%s's Acquire: %v", l.Options().Identity, err)
		var held *lease.HeldError
		if !errors.As(err, &held) || held.Record.Holder != "worker-a" || held.Record.Token != ta.Token {
			t.Errorf("%s's Acquire: %v, want held by worker-a with token %d", l.Options().Identity, err, ta.Token)
		}
	}
	if err := a.Release(ctx, ta); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if tb := e.acquire(b); tb.Token != ta.Token+1 {
		t.Errorf("b's Acquire after the release: token %d, want %d", tb.Token, ta.Token+1)
	}
}
