package gcscas

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// objectName finds the object's name in an upload's metadata.
var objectName = regexp.MustCompile(`"name":"([^"]*)"`)

// probeStore is a fake Cloud Storage holding the probe object, which
// enforces generation preconditions only if enforce is set, and counts the
// uploads of each object name.
func probeStore(t *testing.T, enforce bool) (endpoint string, uploads func(name string) int) {
	t.Helper()
	crc := binary.BigEndian.AppendUint32(nil, crc32.Checksum([]byte(probeBody), crc32.MakeTable(crc32.Castagnoli)))
	var mu sync.Mutex
	count := map[string]int{}
	exists := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, jsonError(404, "notFound", "No such object"))
			return
		}
		// A multipart upload names the object in its JSON metadata part.
		body, _ := io.ReadAll(r.Body)
		m := objectName.FindSubmatch(body)
		if m == nil {
			t.Errorf("an upload without an object name: %s", body)
			return
		}
		name := string(m[1])
		mu.Lock()
		count[name]++
		refuse := enforce && exists && r.URL.Query().Get("ifGenerationMatch") != ""
		exists = true
		mu.Unlock()
		if refuse {
			w.WriteHeader(http.StatusPreconditionFailed)
			fmt.Fprint(w, jsonError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold."))
			return
		}
		fmt.Fprintf(w, `{"kind":"storage#object","bucket":"leases","name":%q,"generation":"1700000000000002","metageneration":"1","contentType":"application/json","crc32c":%q}`,
			name, base64.StdEncoding.EncodeToString(crc))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func(name string) int {
		mu.Lock()
		defer mu.Unlock()
		return count[name]
	}
}

// TestVerify: a store that refuses the probe's failing preconditions
// passes; one that applies them is refused with lease.ErrUnsafeStore,
// saying what it applied, and the lease's own object is never written.
func TestVerify(t *testing.T) {
	t.Parallel()
	endpoint, _ := probeStore(t, true)
	d := newConn(testClient(t, endpoint), "leases", "jobs", time.Second)
	if err := d.Verify(t.Context()); err != nil {
		t.Errorf("Verify of a store that enforces preconditions: %v, want nil", err)
	}

	endpoint, uploads := probeStore(t, false)
	l, err := driver.NewCAS(newConn(testClient(t, endpoint), "leases", "jobs", time.Second), lease.Options{Identity: "worker-1", TTL: MinTTL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(t.Context())
	if !errors.Is(err, lease.ErrUnsafeStore) || lease.Retryable(err) || !strings.Contains(err.Error(), "ifGenerationMatch=0 over an object that exists") {
		t.Errorf("Acquire on a store that ignores preconditions: %v, want lease.ErrUnsafeStore, not retryable, naming what it applied", err)
	}
	if n := uploads("jobs"); n != 0 || uploads("jobs"+ProbeSuffix) != 2 {
		t.Errorf("uploads: %d of the lease's object, want none; %d of the probe, want 2 (create, then the refused one applied)", n, uploads("jobs"+ProbeSuffix))
	}
}
