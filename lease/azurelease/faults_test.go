package azurelease_test

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// blobEndpoint is the BlobEndpoint of a connection string: scheme, host
// and port, and the account's path.
var blobEndpoint = regexp.MustCompile(`BlobEndpoint=(https?://[^/;]+)(/[^;]*)?`)

// azurite returns Azurite's connection string and its blob service's
// address (http://HOST:PORT), or skips the test: the fault proxy speaks
// plain HTTP, so it stands in front of Azurite only.
func azurite(t *testing.T) (cs, upstream string) {
	t.Helper()
	cs = os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING")
	if cs == "" {
		t.Skip(`azurelease: Azurite is not configured: set LEASEHOLD_AZURITE_CONNECTION_STRING (scripts/stack up azurite; eval "$(scripts/stack env)")`)
	}
	m := blobEndpoint.FindStringSubmatch(cs)
	if m == nil {
		t.Fatalf("the Azurite connection string has no BlobEndpoint")
	}
	return cs, m[1]
}

// viaProxy returns cs with its blob endpoint at proxy.
func viaProxy(cs, proxy string) string {
	return blobEndpoint.ReplaceAllString(cs, "BlobEndpoint="+proxy+"$2")
}

// TestFaultAnswers: Azure's answers to an account under strain are
// lease.ErrUnavailable, retryable; a Set Blob Metadata (the record) whose
// answer was lost or replaced by 500 OperationTimedOut after Azure applied
// it is resolved by reading back.
func TestFaultAnswers(t *testing.T) {
	t.Parallel()
	cs, upstream := azurite(t)
	container := azureemu.NewContainer(t, azureemu.NewClient(t, cs))
	open := func(t *testing.T, endpoint, identity string) lease.Lease {
		l, err := azurelease.Open(t.Context(), azurelease.Options{Container: container, Blob: leasetest.UniqueName("fault"), Client: azureemu.NewClient(t, viaProxy(cs, endpoint))},
			lease.Options{Identity: identity, TTL: testTTL})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	leaseOps, metadata := faultproxy.AzureComp("lease"), faultproxy.AzureComp("metadata")
	faultproxy.CheckRefusals(t, upstream, open, []faultproxy.Refusal{
		{Name: "GetPropertiesServerBusy", Rule: faultproxy.Rule{Match: faultproxy.AzureGetProperties, Fault: faultproxy.Refuse(faultproxy.AzureServerBusy)}, Mention: "503 ServerBusy"},
		{Name: "AcquireServerBusy", Rule: faultproxy.Rule{Match: leaseOps, Fault: faultproxy.Refuse(faultproxy.AzureServerBusy)}, Mention: "503 ServerBusy"},
		{Name: "AcquireOperationTimedOut", Rule: faultproxy.Rule{Match: leaseOps, Fault: faultproxy.Refuse(faultproxy.AzureOperationTimedOut)}, Mention: "500 OperationTimedOut"},
		{Name: "SetMetadataServerBusy", Rule: faultproxy.Rule{Match: metadata, Fault: faultproxy.Refuse(faultproxy.AzureServerBusy)}, Mention: "503 ServerBusy"},
	})
	faultproxy.CheckLostAnswers(t, upstream, open, metadata, faultproxy.AzureOperationTimedOut)
}

// TestConformanceThroughProxy runs the conformance suite through the fault
// proxy, which answers one applied Set Blob Metadata in five (the record's
// writes) with 500 OperationTimedOut: the backend's read back resolves
// each. Only those: a lease request whose answer is lost is an unknown
// outcome the backend reports (it cannot read a lease ID back), which the
// suite, rightly, does not accept.
func TestConformanceThroughProxy(t *testing.T) {
	t.Parallel()
	cs, upstream := azurite(t)
	p := faultproxy.Start(t, upstream)
	rules := p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("metadata"), Fault: faultproxy.Replace(faultproxy.AzureOperationTimedOut), Every: 5})
	t.Cleanup(func() {
		t.Logf("Set Blob Metadata applied whose answer was a 500: %d", p.Applied(rules[0]))
		if p.Applied(rules[0]) == 0 {
			t.Errorf("no answer was replaced: the suite did not meet the fault")
		}
	})
	a := azureemu.New(t)
	storetest.RunConformance(t, a.Harness(azureemu.NewClient(t, viaProxy(cs, p.URL)), a.Client))
}

// TestRenewalThatDoesNotShowFails: a renewal whose metadata write (the
// write that makes it show) fails is a failed Renew, though Azure renewed
// the lease: the holder keeps counting its deadline from its last renewal
// that showed, so a judge of the blob's ETags (rule 2, as package shard's
// assigner judges liveness) never sees the holder act past what its ETag
// allows. The next renewal that shows succeeds.
func TestRenewalThatDoesNotShowFails(t *testing.T) {
	t.Parallel()
	cs, upstream := azurite(t)
	container := azureemu.NewContainer(t, azureemu.NewClient(t, cs))
	p := faultproxy.Start(t, upstream)
	l, err := azurelease.Open(t.Context(), azurelease.Options{Container: container, Blob: leasetest.UniqueName("show"), Client: azureemu.NewClient(t, viaProxy(cs, p.URL))},
		lease.Options{Identity: "worker-1", TTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before, err := l.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rule := p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("metadata"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 1})[0]
	renewed, err := l.Renew(t.Context(), term)
	if !errors.Is(err, lease.ErrUnavailable) || !strings.Contains(err.Error(), "503 ServerBusy") || renewed != (lease.Term{}) {
		t.Errorf("Renew whose metadata write was refused: %+v, %v; want no term and lease.ErrUnavailable saying 503 ServerBusy", renewed, err)
	}
	if p.Applied(rule) != 1 {
		t.Fatalf("the refusal was applied %d times, want once", p.Applied(rule))
	}
	if after, err := l.Observe(t.Context()); err != nil || after.Version != before.Version {
		t.Errorf("after the failed Renew the record is at %q (%v), want %q: nothing showed", after.Version, err, before.Version)
	}
	renewed, err = l.Renew(t.Context(), term)
	if err != nil || !renewed.Sent.After(term.Sent) {
		t.Fatalf("Renew once Azure answers again: %+v, %v; want the term, sent later", renewed, err)
	}
	if after, err := l.Observe(t.Context()); err != nil || after.Version == before.Version {
		t.Errorf("after the Renew that showed the record is at %q (%v), want a version other than %q", after.Version, err, before.Version)
	}
}
