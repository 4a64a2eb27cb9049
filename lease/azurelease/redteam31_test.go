package azurelease_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestRedTeam31HandoffSuccessorWriteRefused: the successor's takeover of
// a handed lease whose record write Azure refused (503 ServerBusy) fails,
// and leaves the lease handed to it: a third contender is still refused
// (lease.Handoffer: "no third contender takes the lease in between", as
// on a compare-and-swap store, whose refused takeover changes nothing),
// and the successor's next Acquire takes it, with a greater token (not
// necessarily the next: the failed write's token counts as tried).
func TestRedTeam31HandoffSuccessorWriteRefused(t *testing.T) {
	t.Parallel()
	p, open, _ := proxiedBlob(t, "rt31-successor-refused")
	a, b, c := open("a"), open("b"), open("c")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
		t.Fatalf("ReleaseTo b: %v", err)
	}
	refused := p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("metadata"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 1})[0]
	if _, err := b.Acquire(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
		t.Errorf("b's Acquire whose record write was refused: %v, want lease.ErrUnavailable", err)
	}
	if p.Applied(refused) != 1 {
		t.Fatalf("the record write was refused %d times, want once", p.Applied(refused))
	}
	if tc, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("c's Acquire after b's failed takeover: %+v, %v; want lease.ErrHeld: the lease is handed to b", tc, err)
	}
	tb, err := b.Acquire(t.Context())
	if err != nil || tb.Token <= ta.Token {
		t.Errorf("b's Acquire again: %+v, %v; want the term with a token above %d", tb, err, ta.Token)
	}
}

// gate holds every Set Blob Metadata until n LeaseBlob renewals have
// passed it (or a second has), so that the takeovers of several callers
// all renew the handed lease before any writes its record.
type gate struct {
	n       int
	mu      sync.Mutex
	renewed int
	open    chan struct{}
}

func (g *gate) Do(req *policy.Request) (*http.Response, error) {
	switch operation(req.Raw()) {
	case "LeaseBlob renew":
		g.mu.Lock()
		if g.renewed++; g.renewed == g.n {
			close(g.open)
		}
		g.mu.Unlock()
	case "SetBlobMetadata":
		select {
		case <-g.open:
		case <-time.After(time.Second):
		}
	}
	return req.Next()
}

// TestRedTeam31HandoffTwoCallersOneSuccessor (rule 14, rule 1): two
// callers on the successor's one Lease value Acquire the lease handed to
// it at once. Both renew the handed lease ID, as the record names one ID
// for the successor; the record write of one lands, and the other's fails
// (the blob changed). The one whose write failed must not give back the
// lease ID the other's term holds: the winner's term stays held, a third
// contender is refused, and the winner renews.
func TestRedTeam31HandoffTwoCallersOneSuccessor(t *testing.T) {
	t.Parallel()
	cs, _ := azurite(t)
	container := azureemu.NewContainer(t, azureemu.NewClient(t, cs))
	blobName := leasetest.UniqueName("rt31-two-callers")
	open := func(identity string, perRequest ...policy.Policy) lease.Lease {
		l, err := azurelease.Open(t.Context(), azurelease.Options{Container: container, Blob: blobName, Client: azureemu.NewClient(t, cs, perRequest...)},
			lease.Options{Identity: identity, TTL: testTTL})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	g := &gate{n: 2, open: make(chan struct{})}
	a, b, c := open("a"), open("b", g), open("c")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
		t.Fatalf("ReleaseTo b: %v", err)
	}
	var wg sync.WaitGroup
	terms := make([]lease.Term, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { terms[i], errs[i] = b.Acquire(t.Context()) })
	}
	wg.Wait()
	var won []lease.Term
	for i := range 2 {
		if errs[i] == nil {
			won = append(won, terms[i])
		}
	}
	if len(won) != 1 {
		t.Fatalf("two callers on b's Lease: %+v, %v; want exactly one term", terms, errs)
	}
	if tc, err := c.Acquire(t.Context()); err == nil {
		t.Errorf("c acquired token %d while b's caller holds token %d: two leaders", tc.Token, won[0].Token)
	} else if !errors.Is(err, lease.ErrHeld) {
		t.Errorf("c's Acquire while b holds: %v, want lease.ErrHeld", err)
	}
	if _, err := b.Renew(t.Context(), won[0]); err != nil {
		t.Errorf("the winning caller's Renew: %v", err)
	}
}

// TestRedTeam31HandoffSequencesHold (an attack that held): a ReleaseTo
// whose change Azure refused, repeated naming another successor, hands
// the lease to that one only; the old holder's own Acquire after its
// handoff is refused; two handoffs in a row (a to c, c back to a) take
// strictly greater tokens; and a Break of a handed lease frees it, the
// named successor's Acquire then taking it as any contender would, with
// a greater token.
func TestRedTeam31HandoffSequencesHold(t *testing.T) {
	t.Parallel()
	p, open, _ := proxiedBlob(t, "rt31-sequences")
	a, b, c := open("a"), open("b"), open("c")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	refused := p.Add(faultproxy.Rule{Match: faultproxy.AzureLeaseAction("change"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 1})[0]
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); !errors.Is(err, lease.ErrUnavailable) {
		t.Errorf("ReleaseTo b whose change was refused: %v, want lease.ErrUnavailable", err)
	}
	if p.Applied(refused) != 1 {
		t.Fatalf("the change was refused %d times, want once", p.Applied(refused))
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "c"); err != nil {
		t.Fatalf("ReleaseTo c after the refused change: %v", err)
	}
	if _, err := b.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("b's Acquire of the lease handed to c: %v, want lease.ErrHeld", err)
	}
	if _, err := a.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("a's Acquire of the lease it handed to c: %v, want lease.ErrHeld", err)
	}
	tc, err := c.Acquire(t.Context())
	if err != nil || tc.Token <= ta.Token {
		t.Fatalf("c's Acquire: %+v, %v; want a token above %d", tc, err, ta.Token)
	}
	if err := c.(lease.Handoffer).ReleaseTo(t.Context(), tc, "a"); err != nil {
		t.Fatalf("c's ReleaseTo a: %v", err)
	}
	ta2, err := a.Acquire(t.Context())
	if err != nil || ta2.Token <= tc.Token {
		t.Fatalf("a's Acquire of the lease c handed back: %+v, %v; want a token above %d", ta2, err, tc.Token)
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta2, "b"); err != nil {
		t.Fatalf("a's ReleaseTo b: %v", err)
	}
	rec, err := c.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.(lease.Breaker).Break(t.Context(), rec); err != nil {
		t.Fatalf("Break of the lease handed to b: %v", err)
	}
	tb, err := b.Acquire(t.Context())
	if err != nil || tb.Token <= ta2.Token {
		t.Errorf("b's Acquire after the break: %+v, %v; want a token above %d", tb, err, ta2.Token)
	}
	if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("c's Acquire while b holds: %v, want lease.ErrHeld", err)
	}
}
