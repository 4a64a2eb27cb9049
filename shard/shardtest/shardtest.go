// Package shardtest is the conformance suite that every shard.Store runs,
// unchanged, beside the lease suite (lease/leasetest). A store that passes
// it keeps, through the shard.Store interface and package lease's sentinel
// errors alone, the promises shard.Store lists:
//
//   - Put with version "" creates an object only where the key holds
//     nothing, Put with a version replaces it only at that version, and a
//     failed condition is driver.ErrConflict and changes nothing;
//   - every Put of bytes that differ from the stored ones returns a new
//     version, the one Get and List then show;
//   - objects of 1 MiB are stored and read back whole;
//   - Get with the stored version known returns that version and no bytes;
//     with another, the bytes; a key that holds nothing is lease.ErrNoRecord;
//   - List returns every key under its prefix (and none beside it) with its
//     latest version, across as many pages as the store's listing takes;
//   - a cancelled context makes every call return an error matching
//     context.Canceled (a List no map) and changes nothing;
//   - Lease opens a working lease (acquire, a second contender refused,
//     renew, release, taken by the next) whose renewals show
//     (lease.RenewalsShow), and whose record List shows at one version while
//     no one writes it and at a new one after each renewal: the versions by
//     which the assigner judges a worker's liveness (rule 2);
//   - a group of workers on the store (shard.Worker) starts every shard,
//     balances on a join and on a leave with the fewest moves, and never
//     runs a shard on two workers at once nor starts one with an epoch that
//     does not increase, as an oracle that sees every start and end judges;
//   - and goes on balancing, as safely, after its assignment object was made
//     unreadable (Config.Unreadable, or bytes that are no assignment).
//
// A backend's test calls Run:
//
//	func TestShardConformance(t *testing.T) {
//		shardtest.Run(t, shardtest.Config{
//			NewStore: func(t *testing.T) shardtest.Clients { ... },
//			TTL:      3 * time.Second,
//		})
//	}
//
// Without FakeTime, subtests run in parallel in real time against a server
// (an emulator on loopback, or a cloud account); the group's run takes a
// few TTLs, so choose the shortest TTL the backend allows. Every subtest
// writes under a prefix of its own (Config.Prefix, the subtest's name and
// a random suffix), so state left by earlier runs cannot interfere; the
// backend's test deletes what is under Config.Prefix when it wants to.
package shardtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/shard"
)

// Clients returns a client of one store for the worker called identity:
// every client it returns reaches the same objects, as separate processes
// would.
type Clients func(identity string) shard.Store

// Config says how to reach the store under test.
type Config struct {
	// NewStore returns the clients of the store under test. It is called
	// once per subtest, inside the subtest's synctest bubble when FakeTime
	// is set. Required.
	NewStore func(t *testing.T) Clients
	// Prefix starts every key the suite writes. Default "shardtest".
	Prefix string
	// TTL is the TTL of the leases the suite opens and of the group's
	// workers: the shortest the backend allows. Default 2s.
	TTL time.Duration
	// CallTimeout bounds each request of the leases and the workers.
	// Default TTL/5.
	CallTimeout time.Duration
	// PageSize is how many keys one page of the store's listing holds, as
	// NewStore sets the store up (a test's knob, so that paging is tested
	// without writing thousands of keys); 0 if the store does not page.
	// The suite lists 2·PageSize+1 keys (at least 5).
	PageSize int
	// Unreadable, if set, makes the object at key one that the store
	// cannot return whole, as only this store can: called while key holds
	// an assignment, it returns tear, which the suite calls once the
	// object has been replaced, and which puts back what Unreadable saw
	// (DynamoDB: the head item, whose parts the replacement deleted; the
	// store's Get must then fail with lease.ErrCorrupt). Default: the suite
	// writes bytes that are no assignment over the object, which any store
	// holds.
	Unreadable func(t *testing.T, key string) (tear func())
	// UnreadableShards is the group's N in UnreadableAssignment: enough
	// for the object Unreadable tears (DynamoDB: 600 shards, over 3 KiB).
	// Default 6.
	UnreadableShards int
	// FakeTime runs each subtest inside a testing/synctest bubble, where
	// the group's run takes no real time: for in-memory stores only, as
	// network I/O cannot run inside a bubble.
	FakeTime bool
}

// withDefaults returns cfg with its defaults filled in.
func (cfg Config) withDefaults(t *testing.T) Config {
	t.Helper()
	if cfg.NewStore == nil {
		t.Fatal("shardtest: Config.NewStore is required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "shardtest"
	}
	if cfg.TTL == 0 {
		cfg.TTL = 2 * time.Second
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = cfg.TTL / 5
	}
	if cfg.UnreadableShards == 0 {
		cfg.UnreadableShards = groupShards
	}
	return cfg
}

// Run runs the suite against the store cfg describes.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	cfg = cfg.withDefaults(t)
	for _, tc := range []struct {
		name string
		run  func(e *env)
	}{
		{"CreateIsConditional", createIsConditional},
		{"ReplaceIsConditional", replaceIsConditional},
		{"VersionChangesWithBytes", versionChangesWithBytes},
		{"GetWithKnownVersion", getWithKnownVersion},
		{"LargeObject", largeObject},
		{"ListIsExact", listIsExact},
		{"ListAcrossPages", listAcrossPages},
		{"CancelledContext", cancelledContext},
		{"Lease", leaseWorks},
		{"Group", group},
		{"UnreadableAssignment", unreadableAssignment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if cfg.FakeTime {
				synctest.Test(t, func(t *testing.T) { tc.run(newEnv(t, cfg, tc.name)) })
				return
			}
			t.Parallel()
			tc.run(newEnv(t, cfg, tc.name))
		})
	}
}

// env is one subtest's view of the store: its clients and its prefix.
type env struct {
	t       *testing.T
	cfg     Config
	clients Clients
	s       shard.Store // the first client's
	prefix  string      // ends in "/"
}

func newEnv(t *testing.T, cfg Config, name string) *env {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	clients := cfg.NewStore(t)
	return &env{t: t, cfg: cfg, clients: clients, s: clients("shardtest-a"), prefix: cfg.Prefix + "/" + name + "-" + hex.EncodeToString(b[:]) + "/"}
}

func (e *env) key(name string) string { return e.prefix + name }

func (e *env) put(key string, data []byte, version string) string {
	e.t.Helper()
	v, err := e.s.Put(e.t.Context(), key, data, version)
	if err != nil {
		e.t.Fatalf("Put(%q, %d bytes, %q): %v", key, len(data), version, err)
	}
	if v == "" {
		e.t.Fatalf("Put(%q, %d bytes, %q) returned no version", key, len(data), version)
	}
	return v
}

// wantStored fails the test unless key holds data at version.
func (e *env) wantStored(key string, data []byte, version string) {
	e.t.Helper()
	got, v, err := e.s.Get(e.t.Context(), key, "")
	if err != nil || !bytes.Equal(got, data) || v != version {
		e.t.Fatalf("Get(%q): %d bytes %q at %q, %v; want %d bytes %q at %q", key, len(got), abbrev(got), v, err, len(data), abbrev(data), version)
	}
}

func (e *env) wantMissing(key string) {
	e.t.Helper()
	if got, v, err := e.s.Get(e.t.Context(), key, ""); !errors.Is(err, lease.ErrNoRecord) {
		e.t.Fatalf("Get(%q) of a key that holds nothing: %q at %q, %v; want lease.ErrNoRecord", key, abbrev(got), v, err)
	}
}

func abbrev(b []byte) string {
	if len(b) > 32 {
		return string(b[:32]) + "..."
	}
	return string(b)
}

func createIsConditional(e *env) {
	k := e.key("a")
	e.wantMissing(k)
	v1 := e.put(k, []byte("one"), "")
	if _, err := e.s.Put(e.t.Context(), k, []byte("two"), ""); !errors.Is(err, driver.ErrConflict) {
		e.t.Fatalf("Put creating %q where it exists: %v; want driver.ErrConflict", k, err)
	}
	e.wantStored(k, []byte("one"), v1)
	missing := e.key("missing")
	if _, err := e.s.Put(e.t.Context(), missing, []byte("two"), v1); !errors.Is(err, driver.ErrConflict) {
		e.t.Fatalf("Put replacing %q, which holds nothing, at version %q: %v; want driver.ErrConflict", missing, v1, err)
	}
	e.wantMissing(missing)
}

func replaceIsConditional(e *env) {
	k := e.key("a")
	v1 := e.put(k, []byte("one"), "")
	v2 := e.put(k, []byte("two"), v1)
	if v2 == v1 {
		e.t.Fatalf("Put of new bytes kept the version %q", v1)
	}
	if _, err := e.s.Put(e.t.Context(), k, []byte("three"), v1); !errors.Is(err, driver.ErrConflict) {
		e.t.Fatalf("Put at a stale version %q (stored %q): %v; want driver.ErrConflict", v1, v2, err)
	}
	e.wantStored(k, []byte("two"), v2)
}

func versionChangesWithBytes(e *env) {
	k := e.key("a")
	seen := map[string]int{}
	var v string
	for i := range 5 {
		// Each write differs from the one before; the last brings the
		// first bytes back, whose version need not be new (an ETag is the
		// bytes' MD5) but must differ from the one it replaces.
		data := fmt.Appendf(nil, "write %d", i%4)
		next := e.put(k, data, v)
		if next == v {
			e.t.Fatalf("write %d of new bytes kept the version %q", i, v)
		}
		if j, dup := seen[next]; dup && j != i-4 {
			e.t.Fatalf("write %d returned version %q, that of write %d, whose bytes differ", i, next, j)
		}
		seen[next] = i
		v = next
		e.wantStored(k, data, v)
		list, err := e.s.List(e.t.Context(), e.prefix)
		if err != nil || list[k] != v {
			e.t.Fatalf("List(%q) after write %d: %v, %v; want %q at %q", e.prefix, i, list, err, k, v)
		}
	}
}

func getWithKnownVersion(e *env) {
	k := e.key("a")
	v1 := e.put(k, []byte("one"), "")
	if data, v, err := e.s.Get(e.t.Context(), k, v1); err != nil || data != nil || v != v1 {
		e.t.Fatalf("Get(%q) knowing the stored version %q: %q at %q, %v; want no bytes, the version alone", k, v1, data, v, err)
	}
	v2 := e.put(k, []byte("two"), v1)
	if data, v, err := e.s.Get(e.t.Context(), k, v1); err != nil || string(data) != "two" || v != v2 {
		e.t.Fatalf("Get(%q) knowing an earlier version %q: %q at %q, %v; want %q at %q", k, v1, data, v, err, "two", v2)
	}
	missing := e.key("missing")
	if _, _, err := e.s.Get(e.t.Context(), missing, v1); !errors.Is(err, lease.ErrNoRecord) {
		e.t.Fatalf("Get(%q) of a key that holds nothing, knowing a version: %v; want lease.ErrNoRecord", missing, err)
	}
}

// largeObject: the assignment of shard.MaxShards shards is about 700 kB;
// the promise is 1 MiB.
func largeObject(e *env) {
	k := e.key("assignment")
	big := func(b byte) []byte {
		data := make([]byte, 1<<20)
		for i := range data {
			data[i] = b + byte(i*7)
		}
		return data
	}
	v1 := e.put(k, big(1), "")
	e.wantStored(k, big(1), v1)
	v2 := e.put(k, big(2), v1)
	e.wantStored(k, big(2), v2)
}

func listIsExact(e *env) {
	if list, err := e.s.List(e.t.Context(), e.prefix); err != nil || len(list) != 0 {
		e.t.Fatalf("List(%q) of an empty prefix: %v, %v; want nothing, no error", e.prefix, list, err)
	}
	want := map[string]string{}
	for _, name := range []string{"members/w1", "members/w2", "acks/w1", "assignment"} {
		want[e.key(name)] = e.put(e.key(name), []byte(name), "")
	}
	// Beside the prefix, not under it.
	sibling := e.prefix[:len(e.prefix)-1] + "x/assignment"
	e.put(sibling, []byte("elsewhere"), "")
	list, err := e.s.List(e.t.Context(), e.prefix)
	if err != nil || !maps.Equal(list, want) {
		e.t.Fatalf("List(%q): %v, %v; want %v", e.prefix, list, err, want)
	}
	// A write that returned shows at once.
	k := e.key("assignment")
	want[k] = e.put(k, []byte("moved"), want[k])
	if list, err = e.s.List(e.t.Context(), e.prefix); err != nil || !maps.Equal(list, want) {
		e.t.Fatalf("List(%q) after a replace: %v, %v; want %v", e.prefix, list, err, want)
	}
	members := e.key("members/")
	if list, err = e.s.List(e.t.Context(), members); err != nil || len(list) != 2 || list[e.key("members/w1")] != want[e.key("members/w1")] {
		e.t.Fatalf("List(%q): %v, %v; want members/w1 and w2 alone", members, list, err)
	}
}

func listAcrossPages(e *env) {
	n := max(2*e.cfg.PageSize+1, 5)
	want := map[string]string{}
	for i := range n {
		k := e.key(fmt.Sprintf("acks/w%05d", i))
		want[k] = e.put(k, []byte{byte(i)}, "")
	}
	list, err := e.s.List(e.t.Context(), e.prefix)
	if err != nil || !maps.Equal(list, want) {
		e.t.Fatalf("List(%q) of %d keys (pages of %d): %d keys, %v; want all %d", e.prefix, n, e.cfg.PageSize, len(list), err, n)
	}
}

func cancelledContext(e *env) {
	k := e.key("a")
	v1 := e.put(k, []byte("one"), "")
	ctx, cancel := context.WithCancel(e.t.Context())
	cancel()
	if _, _, err := e.s.Get(ctx, k, ""); !errors.Is(err, context.Canceled) {
		e.t.Errorf("Get with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := e.s.Put(ctx, k, []byte("two"), v1); !errors.Is(err, context.Canceled) {
		e.t.Errorf("Put with a cancelled context: %v; want context.Canceled", err)
	}
	if _, err := e.s.Put(ctx, e.key("b"), []byte("two"), ""); !errors.Is(err, context.Canceled) {
		e.t.Errorf("Put creating with a cancelled context: %v; want context.Canceled", err)
	}
	if list, err := e.s.List(ctx, e.prefix); !errors.Is(err, context.Canceled) || list != nil {
		e.t.Errorf("List with a cancelled context: %v, %v; want no map and context.Canceled", list, err)
	}
	e.wantStored(k, []byte("one"), v1)
	e.wantMissing(e.key("b"))
}

// listLease lists the prefix three times, and returns the version at which
// the listings showed the lease at key; what says what happened to the
// lease since it was last written.
func (e *env) listLease(key, what string) string {
	e.t.Helper()
	seen := map[string]bool{}
	var v string
	for range 3 {
		list, err := e.s.List(e.t.Context(), e.prefix)
		if err != nil || list[key] == "" {
			e.t.Fatalf("List(%q) of a lease's prefix: %v, %v; want the lease's record", e.prefix, list, err)
		}
		v = list[key]
		seen[v] = true
	}
	if len(seen) != 1 {
		e.t.Fatalf("three listings of a lease %s showed the versions %v; want one, the record's", what, seen)
	}
	return v
}

func leaseWorks(e *env) {
	ctx := e.t.Context()
	k := e.key("assigner")
	open := func(id string) lease.Lease {
		e.t.Helper()
		l, err := e.clients(id).Lease(k, lease.Options{Identity: id, TTL: e.cfg.TTL, CallTimeout: e.cfg.CallTimeout})
		if err != nil {
			e.t.Fatalf("Lease(%q) for %s: %v", k, id, err)
		}
		return l
	}
	a, b := open("shardtest-a"), open("shardtest-b")
	t1, err := a.Acquire(ctx)
	if err != nil || t1.Token < 1 {
		e.t.Fatalf("Acquire of a free lease: %+v, %v; want a term with a token of at least 1", t1, err)
	}
	var held *lease.HeldError
	if _, err := b.Acquire(ctx); !errors.Is(err, lease.ErrHeld) || !errors.As(err, &held) || held.Record.Holder != "shardtest-a" {
		e.t.Fatalf("Acquire of a held lease: %v; want lease.ErrHeld naming shardtest-a", err)
	}
	if !lease.RenewalsShow(a) {
		e.t.Fatalf("lease.RenewalsShow of the store's lease (judged by the %v) is false; the assigner judges liveness by the versions renewals write", a.Judge())
	}
	last := e.listLease(k, "acquired")
	for i := range 2 {
		if t1, err = a.Renew(ctx, t1); err != nil {
			e.t.Fatalf("Renew %d: %v", i+1, err)
		}
		renewed := e.listLease(k, "renewed")
		if renewed == last {
			e.t.Fatalf("after Renew %d the lease lists at %q, as before it: the renewal does not show", i+1, renewed)
		}
		last = renewed
	}
	if err := a.Release(ctx, t1); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
	e.listLease(k, "released")
	t2, err := b.Acquire(ctx)
	if err != nil || t2.Token <= t1.Token {
		e.t.Fatalf("Acquire of the released lease: %+v, %v; want a token greater than %d", t2, err, t1.Token)
	}
	if err := b.Release(ctx, t2); err != nil {
		e.t.Fatalf("Release: %v", err)
	}
}
