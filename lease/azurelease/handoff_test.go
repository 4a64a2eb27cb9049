package azurelease_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/azurelease"
	"github.com/leasehold/leasehold/lease/internal/emulators/azureemu"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/runner"
)

// TestHandoffAnswersLost: a handoff whose requests Azure applied but whose
// answers were lost (500 OperationTimedOut after the fact) still hands the
// lease to the successor alone. The holder's LeaseBlob change lost: its
// ReleaseTo fails, and called again says handed, as its record and the
// Azure lease show; a third contender is refused meanwhile. The
// successor's renewal under the handed ID lost: its Acquire fails, and
// called again takes the term, with the next token.
func TestHandoffAnswersLost(t *testing.T) {
	t.Parallel()
	p, open, openDirect := proxiedBlob(t, "handoff")
	a, b, c := open("a"), open("b"), openDirect("c")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	lost := p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("lease"), Fault: faultproxy.Replace(faultproxy.AzureOperationTimedOut), Times: 1})[0]
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err == nil || errors.Is(err, lease.ErrLost) {
		t.Errorf("ReleaseTo whose change's answer was lost: %v, want an unknown outcome", err)
	}
	if p.Applied(lost) != 1 {
		t.Fatalf("the change's answer was replaced %d times, want once", p.Applied(lost))
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); err != nil {
		t.Errorf("ReleaseTo again, after the change landed: %v, want nil", err)
	}
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "c"); !errors.Is(err, lease.ErrLost) {
		t.Errorf("ReleaseTo c after the handoff to b: %v, want lease.ErrLost", err)
	}
	if _, err := a.Renew(t.Context(), ta); !errors.Is(err, lease.ErrLost) {
		t.Errorf("Renew of the handed term: %v, want lease.ErrLost", err)
	}
	if err := a.Release(t.Context(), ta); err != nil {
		t.Errorf("Release of the handed term: %v, want nil", err)
	}
	if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("c's Acquire of the lease handed to b: %v, want lease.ErrHeld", err)
	}
	rec, err := c.Observe(t.Context())
	if err != nil || rec.Holder != "a" || rec.Successor() != "b" || rec.Annotations.Get("azurelease/handoff-lease") != "" {
		t.Errorf("Observe of the handed lease: %+v, %v; want a's record naming b, without the handed lease ID", rec, err)
	}

	lost = p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("lease"), Fault: faultproxy.Replace(faultproxy.AzureOperationTimedOut), Times: 1})[0]
	if _, err := b.Acquire(t.Context()); !errors.Is(err, lease.ErrUnavailable) {
		t.Errorf("b's Acquire whose renewal's answer was lost: %v, want lease.ErrUnavailable", err)
	}
	if p.Applied(lost) != 1 {
		t.Fatalf("the renewal's answer was replaced %d times, want once", p.Applied(lost))
	}
	tb, err := b.Acquire(t.Context())
	if err != nil {
		t.Fatalf("b's Acquire again: %v, want the term", err)
	}
	if tb.Token != ta.Token+1 || tb.Annotations.Get(lease.AnnotationSuccessor) != "" {
		t.Errorf("b's term: token %d, annotations %q; want token %d and no successor", tb.Token, tb.Annotations, ta.Token+1)
	}
	if _, err := c.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("c's Acquire of b's lease: %v, want lease.ErrHeld", err)
	}
	if _, err := b.Renew(t.Context(), tb); err != nil {
		t.Errorf("b's Renew: %v", err)
	}
}

// TestHandoffChangeRefused: a handoff whose LeaseBlob change Azure refused
// leaves the term the holder's: its Release then frees the lease, and the
// successor named, whose renewal under the ID the record named fails,
// waits as any contender does and takes the lease once free.
func TestHandoffChangeRefused(t *testing.T) {
	t.Parallel()
	p, open, _ := proxiedBlob(t, "handoff-refused")
	a, b := open("a"), open("b")
	ta, err := leasetest.Acquire(t, t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	refused := p.Add(faultproxy.Rule{Match: faultproxy.AzureComp("lease"), Fault: faultproxy.Refuse(faultproxy.AzureServerBusy), Times: 1})[0]
	if err := a.(lease.Handoffer).ReleaseTo(t.Context(), ta, "b"); !errors.Is(err, lease.ErrUnavailable) {
		t.Errorf("ReleaseTo whose change was refused: %v, want lease.ErrUnavailable", err)
	}
	if p.Applied(refused) != 1 {
		t.Fatalf("the change was refused %d times, want once", p.Applied(refused))
	}
	if _, err := b.Acquire(t.Context()); !errors.Is(err, lease.ErrHeld) {
		t.Errorf("b's Acquire while the change did not land: %v, want lease.ErrHeld (a still holds it)", err)
	}
	if err := a.Release(t.Context(), ta); err != nil {
		t.Fatalf("a's Release: %v", err)
	}
	tb, err := b.Acquire(t.Context())
	if err != nil || tb.Token <= ta.Token {
		t.Errorf("b's Acquire once a released: %+v, %v; want a term with a token above %d", tb, err, ta.Token)
	}
}

// proxiedBlob is a blob of its own (its name from prefix) behind a fault
// proxy p in front of Azurite: open opens its lease for identity through
// p, and openDirect straight at Azurite.
func proxiedBlob(t *testing.T, prefix string) (p *faultproxy.Proxy, open, openDirect func(identity string) lease.Lease) {
	t.Helper()
	cs, upstream := azurite(t)
	container := azureemu.NewContainer(t, azureemu.NewClient(t, cs))
	p = faultproxy.Start(t, upstream)
	blobName := leasetest.UniqueName(prefix)
	via := func(endpoint string) func(string) lease.Lease {
		return func(identity string) lease.Lease {
			l, err := azurelease.Open(t.Context(), azurelease.Options{Container: container, Blob: blobName, Client: azureemu.NewClient(t, viaProxy(cs, endpoint))},
				lease.Options{Identity: identity, TTL: testTTL})
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	return p, via(p.URL), via(upstream)
}

// TestRunnerHandsOffOnAzurite: runner.Config.Prefer on Azure Blob, end to
// end against Azurite: a leads with Prefer "1"; b, with "2", announces
// itself on the candidates' blob and a hands the lease to it. a's task has
// returned before b's starts, b's token is greater, a's demotion says
// HandedOff to b, and no third contender c (Prefer "1", polling) ever
// leads.
func TestRunnerHandsOffOnAzurite(t *testing.T) {
	t.Parallel()
	cs, _ := azurite(t)
	container := azureemu.NewContainer(t, azureemu.NewClient(t, cs))
	name := leasetest.UniqueName("runner-handoff")
	open := func(blob, identity string) lease.Lease {
		l, err := azurelease.Open(t.Context(), azurelease.Options{Container: container, Blob: blob, Client: azureemu.NewClient(t, cs)},
			lease.Options{Identity: identity, TTL: testTTL})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	type span struct {
		token      uint64
		start, end time.Time
	}
	var (
		mu        sync.Mutex
		spans     = map[string]*span{}
		demotions = map[string][]runner.Demotion{}
	)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	run := func(who, prefer string) {
		r, err := runner.New(runner.Config{
			Lease: open(name, who), Candidates: open(name+runner.CandidatesSuffix, who), Prefer: prefer,
			Task: func(ctx context.Context) error {
				term, _ := runner.Term(ctx)
				mu.Lock()
				spans[who] = &span{token: term.Token, start: time.Now()}
				mu.Unlock()
				<-ctx.Done()
				mu.Lock()
				spans[who].end = time.Now()
				mu.Unlock()
				return nil
			},
			OnDemoted: func(d runner.Demotion) {
				mu.Lock()
				defer mu.Unlock()
				demotions[who] = append(demotions[who], d)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = r.Run(ctx) })
	}
	leads := func(who string) bool {
		mu.Lock()
		defer mu.Unlock()
		return spans[who] != nil
	}
	waitFor := func(who string) {
		t.Helper()
		for deadline := time.Now().Add(8 * testTTL); !leads(who); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not lead within %v", who, 8*testTTL)
			}
		}
	}
	run("a", "1")
	waitFor("a")
	run("c", "1")
	run("b", "2")
	waitFor("b")
	mu.Lock()
	a, b := *spans["a"], *spans["b"]
	da := demotions["a"]
	mu.Unlock()
	if a.end.IsZero() || !a.end.Before(b.start) {
		t.Errorf("a's task ended at %v, b's began at %v: want a's ended first", a.end, b.start)
	}
	if b.token <= a.token {
		t.Errorf("b's token %d after a's %d: want greater", b.token, a.token)
	}
	if len(da) != 1 || da[0].Reason != runner.HandedOff || da[0].Successor != "b" {
		t.Errorf("a's demotions %+v: want one, HandedOff to b", da)
	}
	if leads("c") {
		t.Errorf("c, a follower that was not named, led during the handoff")
	}
}
