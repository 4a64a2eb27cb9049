//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/memlease"
)

var memNames atomic.Int64

// memName is a fresh name for a lease in the process-wide in-memory store,
// so that tests run with -count=N do not meet their earlier runs' records.
func memName(name string) string {
	return fmt.Sprintf("%s-%d", name, memNames.Add(1))
}

// syncBuffer is a bytes.Buffer that leasehold's logger and the command's
// output may write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv is an environment with the variables vars (and no others from
// the test's own process for flags), and the default identity "host-42".
func testEnv(vars map[string]string) (*environment, *syncBuffer, *syncBuffer) {
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	environ := os.Environ()
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	return &environment{
		lookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		environ:   environ,
		stdout:    stdout,
		stderr:    stderr,
		identity:  "host-42",
	}, stdout, stderr
}

// leasehold runs leasehold in this process with args and returns its exit
// status and what it wrote to stderr. The run ends when ctx does, as if by
// SIGTERM.
func leasehold(t *testing.T, ctx context.Context, args ...string) (code int, stderr string) {
	t.Helper()
	env, _, errBuf := testEnv(nil)
	code = mainWith(ctx, nil, args, env)
	return code, errBuf.String()
}

// errorLines returns the lines leasehold printed as its own error.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "leasehold: ") {
			out = append(out, l)
		}
	}
	return out
}

// eventually waits up to limit for cond, polling.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// randomName is prefix and 8 random hex digits: a store name no other run uses.
func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// azuriteContainer creates a container on Azurite from the test stack,
// deleted when the test ends.
func azuriteContainer(t *testing.T) string {
	t.Helper()
	cs := os.Getenv("LEASEHOLD_AZURITE_CONNECTION_STRING")
	if cs == "" {
		t.Skip(`leasehold on Azurite: set LEASEHOLD_AZURITE_CONNECTION_STRING (scripts/stack up azurite; eval "$(scripts/stack env)")`)
	}
	client, err := azblob.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	container := randomName("leasehold-check-")
	if _, err := client.CreateContainer(t.Context(), container, nil); err != nil {
		t.Fatalf("CreateContainer %s: %v", container, err)
	}
	t.Cleanup(func() { _, _ = client.DeleteContainer(context.Background(), container, nil) })
	return container
}

// observe reads the mem:// lease name.
func observe(t *testing.T, name string) lease.Record {
	t.Helper()
	l, err := memlease.Default.Open(name, lease.Options{Identity: "observer", TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := l.Observe(context.Background())
	if err != nil {
		t.Fatalf("observe %s: %v", name, err)
	}
	return rec
}
