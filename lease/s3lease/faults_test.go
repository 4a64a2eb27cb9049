package s3lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/emulators/s3emu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/s3lease"
	"github.com/leasehold/leasehold/runner"
)

// The fault tests run on MinIO: the proxy needs the store's keys to sign
// the requests of a store that ignores conditions.
func onMinIO(name string) bool { return name == "minio" }

// proxied starts a fault proxy in front of the target, and returns it with
// a client of the store through it.
func (tg *target) proxied(t *testing.T) (*faultproxy.Proxy, *s3.Client) {
	t.Helper()
	p := faultproxy.Start(t, tg.Endpoint)
	return p, s3emu.StaticClient(p.URL, tg.AccessKey, tg.Secret)(nil)
}

// leasePuts matches the PutObjects of a lease's record, not those of the
// store's check.
var leasePuts = faultproxy.Both(faultproxy.S3PutObject, faultproxy.Not(faultproxy.PathSuffix(s3lease.ProbeSuffix)))

// TestFaultAnswers: S3's answers to a store under strain are
// lease.ErrUnavailable, retryable; a write whose answer was lost or
// replaced by a 500 after S3 applied it is resolved by reading back.
func TestFaultAnswers(t *testing.T) {
	targets.Run(t, onMinIO, func(t *testing.T, tg *target) {
		open := func(t *testing.T, endpoint, identity string) lease.Lease {
			key := storetest.UniqueName("s3lease-fault")
			return tg.Open(t, s3emu.StaticClient(endpoint, tg.AccessKey, tg.Secret)(nil), key, lease.Options{Identity: identity, TTL: 5 * time.Second, CallTimeout: 2 * time.Second})
		}
		faultproxy.CheckRefusals(t, tg.Endpoint, open, []faultproxy.Refusal{
			{Name: "GetSlowDown", Rule: faultproxy.Rule{Match: faultproxy.S3GetObject, Fault: faultproxy.Refuse(faultproxy.S3SlowDown)}, Mention: "api error SlowDown"},
			{Name: "GetInternalError", Rule: faultproxy.Rule{Match: faultproxy.S3GetObject, Fault: faultproxy.Refuse(faultproxy.S3InternalError)}, Mention: "api error InternalError"},
			{Name: "PutConditionalRequestConflict", Rule: faultproxy.Rule{Match: leasePuts, Fault: faultproxy.Refuse(faultproxy.S3ConditionalRequestConflict)}, Mention: "api error ConditionalRequestConflict"},
			{Name: "PutSlowDown", Rule: faultproxy.Rule{Match: leasePuts, Fault: faultproxy.Refuse(faultproxy.S3SlowDown)}, Mention: "api error SlowDown"},
			{Name: "ProbeSlowDown", Rule: faultproxy.Rule{Match: faultproxy.PathSuffix(s3lease.ProbeSuffix), Fault: faultproxy.Refuse(faultproxy.S3SlowDown)}, Mention: s3lease.ProbeSuffix + ": operation error S3: PutObject"},
		})
		faultproxy.CheckLostAnswers(t, tg.Endpoint, open, leasePuts, faultproxy.S3InternalError)
		t.Run("AppliedAnswer500ReadBackSlowDown", func(t *testing.T) {
			p, c := tg.proxied(t)
			key := storetest.UniqueName("s3lease-unknown")
			l := tg.Open(t, c, key, testOptions("worker-1"))
			// The read before the write passes; the read back does not.
			p.Add(faultproxy.Rule{Match: leasePuts, Fault: faultproxy.Replace(faultproxy.S3InternalError), Times: 1},
				faultproxy.Rule{Match: faultproxy.S3GetObject, Fault: faultproxy.Refuse(faultproxy.S3SlowDown), Every: 2, Times: 1})
			_, err := l.Acquire(t.Context())
			awstest.CheckError(t, "Acquire whose answer and read back both failed", err, lease.ErrUnavailable, "outcome unknown", "")
			p.Clear()
			// The write had landed: the same lease retakes it at once.
			term, err := l.Acquire(t.Context())
			if err != nil || term.Token != 2 {
				t.Errorf("Acquire after the unknown outcome: %+v, %v; want its own record retaken with token 2", term, err)
			}
		})
	})
}

// ignoringStore returns a client of the target through a fault proxy that
// ignores conditional writes, and checks that it does: two creates of one
// key both succeed.
func (tg *target) ignoringStore(t *testing.T) *s3.Client {
	t.Helper()
	p, c := tg.proxied(t)
	p.IgnoreConditions(aws.Credentials{AccessKeyID: tg.AccessKey, SecretAccessKey: tg.Secret})
	key := storetest.UniqueName("s3lease-ignored")
	tg.Track(key)
	for i := range 2 {
		if _, err := c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: &tg.Bucket, Key: &key, IfNoneMatch: aws.String("*")}); err != nil {
			t.Fatalf("create %d of %s through the ignoring store: %v, want it applied", i+1, key, err)
		}
	}
	return c
}

// TestIgnoringStoreRefused: five contenders, started together through the
// runner on a store that ignores conditional writes, all refuse it with
// lease.ErrUnsafeStore; no task runs, and the lease's key stays empty.
func TestIgnoringStoreRefused(t *testing.T) {
	targets.Run(t, onMinIO, func(t *testing.T, tg *target) {
		c := tg.ignoringStore(t)
		key := storetest.UniqueName("s3lease-unsafe")
		var ran atomic.Int32
		errs := make([]error, 5)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range errs {
			l := tg.Open(t, c, key, testOptions(fmt.Sprintf("worker-%d", i+1)))
			r, err := runner.New(runner.Config{Lease: l, Task: func(context.Context) error { ran.Add(1); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() {
				<-start
				_, errs[i] = r.RunOnce(t.Context())
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			awstest.CheckError(t, fmt.Sprintf("worker-%d's RunOnce", i+1), err, lease.ErrUnsafeStore, "the store applied a PutObject with If-None-Match: * on a record that exists", "")
		}
		if n := ran.Load(); n != 0 {
			t.Errorf("the task ran %d times on a store that ignores conditional writes, want never", n)
		}
		_, err := tg.NewClient(nil).GetObject(t.Context(), &s3.GetObjectInput{Bucket: &tg.Bucket, Key: &key})
		var nsk *types.NoSuchKey
		if !errors.As(err, &nsk) {
			t.Errorf("GetObject of the lease's key: %v, want NoSuchKey: nothing written to the lease", err)
		}
	})
}

// TestConformanceThroughProxy runs the conformance suite through the fault
// proxy, which loses the answer of one write of a lease record in seven
// after S3 applied it (a 500 InternalError instead): the engine's read back
// resolves each, so the suite, which allows no other error, still passes.
// The store's check passes untouched: a failed check is a retryable error
// the suite would rightly report.
func TestConformanceThroughProxy(t *testing.T) {
	targets.Run(t, onMinIO, func(t *testing.T, tg *target) {
		p, c := tg.proxied(t)
		rules := p.Add(faultproxy.Rule{Match: leasePuts, Fault: faultproxy.Replace(faultproxy.S3InternalError), Every: 7})
		t.Cleanup(func() {
			t.Logf("writes applied whose answer was a 500: %d", p.Applied(rules[0]))
			if p.Applied(rules[0]) == 0 {
				t.Errorf("no answer was replaced: the suite did not meet the fault")
			}
		})
		h := tg.Harness(c, tg.NewClient(nil))
		// The proxy is one more hop for each request of a suite that sends
		// many at once: 500ms was too short now and then under -race.
		h.CallTimeout = time.Second
		storetest.RunConformance(t, h)
	})
}
