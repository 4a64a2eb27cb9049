//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
	"github.com/leasehold/leasehold/runner"
)

// rt32Fleet is a fleet of runners on one mem:// lease, each as leasehold
// run --prefer configures it (the lease and its candidates' key beside
// it, one identity), whose tasks are journaled: two tasks running at once,
// or a token not above the one before, is a failure.
type rt32Fleet struct {
	t    *testing.T
	name string
	ttl  time.Duration

	wg      sync.WaitGroup // the runners
	mu      sync.Mutex
	running map[string]bool
	leads   []string // the identities in the order their tasks started
	tokens  []uint64
	errs    []string
}

func newRT32Fleet(t *testing.T, name string, ttl time.Duration) *rt32Fleet {
	return &rt32Fleet{t: t, name: name, ttl: ttl, running: map[string]bool{}}
}

func (f *rt32Fleet) url() string { return "mem://" + f.name }

// start runs who with prefer until ctx ends; its task keeps running for
// slow after its context has ended (a command slow to stop).
func (f *rt32Fleet) start(ctx context.Context, who, prefer string, slow time.Duration) {
	f.t.Helper()
	opts := lease.Options{Identity: who, TTL: f.ttl}
	l, err := memlease.Default.Open(f.name, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	cands, err := memlease.Default.Open(f.name+runner.CandidatesSuffix, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := runner.New(runner.Config{
		Lease: l, Candidates: cands, Prefer: prefer, Logger: slog.New(slog.DiscardHandler),
		DrainTimeout: slow + f.ttl,
		Task: func(tctx context.Context) error {
			term, _ := runner.Term(tctx)
			f.begin(who, term.Token)
			<-tctx.Done()
			time.Sleep(slow)
			f.end(who)
			return nil
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.wg.Go(func() { _ = r.Run(ctx) })
}

func (f *rt32Fleet) begin(who string, token uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for other, on := range f.running {
		if on {
			f.errs = append(f.errs, fmt.Sprintf("%s's task started (token %d) while %s's ran", who, token, other))
		}
	}
	if n := len(f.tokens); n > 0 && token <= f.tokens[n-1] {
		f.errs = append(f.errs, fmt.Sprintf("%s's token %d after %d", who, token, f.tokens[n-1]))
	}
	f.running[who] = true
	f.leads = append(f.leads, who)
	f.tokens = append(f.tokens, token)
}

func (f *rt32Fleet) end(who string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running[who] = false
}

// leader is the identity whose task runs, or "".
func (f *rt32Fleet) leader() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for who, on := range f.running {
		if on {
			return who
		}
	}
	return ""
}

func (f *rt32Fleet) check() {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.errs {
		f.t.Error(e)
	}
}

// rt32Handoff runs leasehold handoff with args in this process (inside the
// test's bubble) and returns its exit status and its stderr.
func rt32Handoff(ctx context.Context, args ...string) (int, string) {
	env, _, stderr := testEnv(nil)
	code := mainWith(ctx, nil, append([]string{"handoff"}, args...), env)
	return code, stderr.String()
}

// TestRedTeam32HandoffWithoutTTLFlag: leasehold handoff --to b on a fleet
// run with --ttl 2s, without --ttl itself, as the help's usage line shows
// it (leasehold handoff --lease URL [--to IDENTITY]). Its --timeout
// defaults to 3 of the leader's TTLs (6 s), but the request on the
// candidates' key is written with handoff's own default TTL (15 s), so it
// is renewed every 5 s, and the leader obeys only once it has seen it
// renewed: handoff gives up (75) although nothing failed, or moves the
// lease just as it gives up. Failed before the fix (exit 75, "did not hand
// the lease over within 6s"); handoff now writes its request with the
// leader's TTL when --ttl is not given.
func TestRedTeam32HandoffWithoutTTLFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-nottl"), 2*time.Second)
		f.start(ctx, "a", "1", 0)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 0)
		f.start(ctx, "c", "1", 0)
		time.Sleep(2 * time.Second)
		if who := f.leader(); who != "a" {
			t.Fatalf("leader %q, want a", who)
		}
		code, stderr := rt32Handoff(ctx, "--lease", f.url(), "--to", "b")
		if code != 0 {
			t.Errorf("handoff --to b without --ttl, on a fleet at --ttl 2s: exit %d, want 0; stderr:\n%s", code, stderr)
		}
		time.Sleep(2 * time.Second)
		if who := f.leader(); who != "b" {
			t.Errorf("after handoff --to b: %q leads (runs %v), want b", who, f.leads)
		}
		cancel()
		f.wg.Wait()
		f.check()
	})
}

// TestRedTeam32HandoffStoreHangs (holds): leasehold handoff whose calls
// hang once its request is on the candidates' key exits within --timeout
// (and the release's own bound) with a failure, and no two runs overlap
// whether the leader obeyed the request (it may have seen it written
// twice before the hang) or not.
func TestRedTeam32HandoffStoreHangs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-hang"), 2*time.Second)
		f.start(ctx, "a", "1", 0)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 0)
		time.Sleep(2 * time.Second)
		done, began := rt32HandoffAsync(ctx, "--lease", f.url(), "--to", "b", "--ttl", "2s", "--identity", "op32", "--timeout", "10s")
		rt32Until(ctx, t, f.name+runner.CandidatesSuffix, func(rec lease.Record) bool { return rec.Holder == "op32" && rec.Held() })
		memlease.Default.Hang("op32")
		defer memlease.Default.Heal("op32")
		select {
		case r := <-done:
			if r.code == 0 {
				t.Errorf("handoff with its store hung: exit 0; stderr:\n%s", r.stderr)
			}
			if took := time.Since(began); took > 15*time.Second {
				t.Errorf("handoff with its store hung returned after %v, --timeout 10s", took)
			}
		case <-time.After(10 * time.Minute):
			t.Fatal("handoff with its store hung: still running after 10 minutes, --timeout 10s")
		}
		time.Sleep(10 * time.Second)
		cancel()
		f.wg.Wait()
		f.check()
	})
}

type rt32Result struct {
	code   int
	stderr string
}

// rt32HandoffAsync starts leasehold handoff with args and returns where
// its result comes, and when it started.
func rt32HandoffAsync(ctx context.Context, args ...string) (<-chan rt32Result, time.Time) {
	done := make(chan rt32Result, 1)
	go func() {
		code, stderr := rt32Handoff(ctx, args...)
		done <- rt32Result{code, stderr}
	}()
	return done, time.Now()
}

// rt32Until reads the mem:// lease name every 10 ms until cond holds of
// its record, for up to a minute.
func rt32Until(ctx context.Context, t *testing.T, name string, cond func(lease.Record) bool) lease.Record {
	t.Helper()
	l, err := memlease.Default.Open(name, lease.Options{Identity: "watcher32", TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if rec, err := l.Observe(ctx); err == nil && cond(rec) {
			return rec
		}
	}
	t.Fatalf("%s: not within a minute", name)
	return lease.Record{}
}

// TestRedTeam32HandoffBlindReportsNotHandedOver: the leader obeys
// leasehold handoff --to b (the lease's record names b its successor),
// and then handoff's store stops answering it: it cannot read who leads
// now, yet it exits 75 saying "the leader a did not hand the lease over
// within 10s", which is false (b leads), and tells an operator to act on
// a leader that has gone (leasehold break, a restart). Want: it says it
// cannot tell (the store did not answer), with exit 69, as for an
// unreachable store.
func TestRedTeam32HandoffBlindReportsNotHandedOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-blind"), 2*time.Second)
		f.start(ctx, "a", "1", 0)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 0)
		time.Sleep(2 * time.Second)
		done, _ := rt32HandoffAsync(ctx, "--lease", f.url(), "--to", "b", "--ttl", "2s", "--identity", "op32", "--timeout", "10s")
		rt32Until(ctx, t, f.name, func(rec lease.Record) bool { return rec.Successor() == "b" || rec.Holder == "b" })
		memlease.Default.Hang("op32")
		defer memlease.Default.Heal("op32")
		r := <-done
		time.Sleep(time.Second)
		if who := f.leader(); who != "b" {
			t.Fatalf("after handoff --to b: %q leads, runs %v; want b", who, f.leads)
		}
		if r.code != exitUnavailable || strings.Contains(r.stderr, "did not hand the lease over") {
			t.Errorf("handoff that lost its store once b was named (b leads): exit %d, want %d, not saying a did not hand over; stderr:\n%s", r.code, exitUnavailable, r.stderr)
		}
		cancel()
		f.wg.Wait()
		f.check()
	})
}

// TestRedTeam32HandoffToASlowStop (holds): handoff --to b while the
// leader's task takes 5 s (more than the 2 s TTL) to stop once
// cancelled, as a command that ignores SIGTERM for its --grace: b's task
// starts only after a's returned, with a greater token.
func TestRedTeam32HandoffToASlowStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-slow"), 2*time.Second)
		f.start(ctx, "a", "1", 5*time.Second)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 5*time.Second)
		f.start(ctx, "c", "1", 5*time.Second)
		time.Sleep(2 * time.Second)
		code, stderr := rt32Handoff(ctx, "--lease", f.url(), "--to", "b", "--ttl", "2s", "--timeout", "30s")
		if code != 0 {
			t.Errorf("handoff --to b of a slow-stopping leader: exit %d, want 0; stderr:\n%s", code, stderr)
		}
		if who := f.leader(); who != "b" {
			t.Errorf("after handoff --to b: %q leads (runs %v), want b", who, f.leads)
		}
		cancel()
		f.wg.Wait()
		f.check()
	})
}

// TestRedTeam32LeaseDeletedMidHandoff (holds): the lease's record is
// deleted (a lifecycle rule, a person) once the leader has named b its
// successor, before b took it: no two tasks run at once, and every token
// is above the one before (no contender writes a token at or below the
// highest it has seen), whoever leads after.
func TestRedTeam32LeaseDeletedMidHandoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-deleted"), 2*time.Second)
		f.start(ctx, "a", "1", 500*time.Millisecond)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 0)
		f.start(ctx, "c", "1", 0)
		time.Sleep(2 * time.Second)
		done, _ := rt32HandoffAsync(ctx, "--lease", f.url(), "--to", "b", "--ttl", "2s", "--timeout", "20s")
		rt32Until(ctx, t, f.name, func(rec lease.Record) bool { return rec.Successor() == "b" })
		memlease.Default.Delete(f.name)
		<-done
		time.Sleep(10 * time.Second)
		if f.leader() == "" {
			t.Errorf("nobody leads 10 s after the record was deleted mid-handoff (runs %v)", f.leads)
		}
		cancel()
		f.wg.Wait()
		f.check()
	})
}

// TestRedTeam32HandoffTinyTimeout: handoff --timeout 1ns (the request
// cannot even be written): exit 75, the leader did not hand over in time,
// with the leader untouched; not a configuration error (78) nor a store's
// (69) for the context's deadline.
func TestRedTeam32HandoffTinyTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := newRT32Fleet(t, memName("rt32-tiny"), 2*time.Second)
		f.start(ctx, "a", "1", 0)
		time.Sleep(time.Second)
		f.start(ctx, "b", "1", 0)
		time.Sleep(2 * time.Second)
		code, stderr := rt32Handoff(ctx, "--lease", f.url(), "--to", "b", "--ttl", "2s", "--timeout", "1ns")
		if code != exitRefused {
			t.Errorf("handoff --timeout 1ns: exit %d, want %d; stderr:\n%s", code, exitRefused, stderr)
		}
		time.Sleep(10 * time.Second)
		if who := f.leader(); who != "a" || len(f.leads) != 1 {
			t.Errorf("after handoff --timeout 1ns: %q leads, runs %v; want a's one run", who, f.leads)
		}
		cancel()
		f.wg.Wait()
		f.check()
	})
}
