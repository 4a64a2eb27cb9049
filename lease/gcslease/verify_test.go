package gcslease

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

// objectName finds the object's name in an upload's metadata.
var objectName = regexp.MustCompile(`"name":"([^"]*)"`)

// probeStore is a fake Cloud Storage that takes uploads only, enforces
// ifGenerationMatch only if enforce is set, and counts the uploads of each
// object name.
func probeStore(t *testing.T, enforce bool) (endpoint string, uploads func(name string) int) {
	t.Helper()
	var mu sync.Mutex
	count := map[string]int{}
	generation := map[string]int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, jsonError(404, "notFound", "No such object"))
			return
		}
		// A multipart upload: the object's JSON metadata, then its bytes.
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		mr := multipart.NewReader(r.Body, params["boundary"])
		var parts [2][]byte
		for i := range parts {
			p, err := mr.NextPart()
			if err != nil {
				t.Errorf("upload part %d: %v", i+1, err)
				return
			}
			parts[i], _ = io.ReadAll(p)
		}
		m := objectName.FindSubmatch(parts[0])
		if m == nil {
			t.Errorf("an upload without an object name: %s", parts[0])
			return
		}
		name := string(m[1])
		mu.Lock()
		count[name]++
		want, cond := r.URL.Query().Get("ifGenerationMatch"), true
		if want != "" {
			cond = want == strconv.FormatInt(generation[name], 10)
		}
		if enforce && !cond {
			mu.Unlock()
			w.WriteHeader(http.StatusPreconditionFailed)
			fmt.Fprint(w, jsonError(412, "conditionNotMet", "At least one of the pre-conditions you specified did not hold."))
			return
		}
		generation[name] = 1700000000000000 + int64(count[name])
		gen := generation[name]
		mu.Unlock()
		crc := binary.BigEndian.AppendUint32(nil, crc32.Checksum(parts[1], crc32.MakeTable(crc32.Castagnoli)))
		fmt.Fprintf(w, `{"kind":"storage#object","bucket":"leases","name":%q,"generation":"%d","metageneration":"1","contentType":"application/json","crc32c":%q}`,
			name, gen, base64.StdEncoding.EncodeToString(crc))
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
	endpoint, uploads := probeStore(t, true)
	d := newConn(testClient(t, endpoint), "leases", "jobs", time.Second)
	if err := d.Verify(t.Context()); err != nil {
		t.Errorf("Verify of a store that enforces preconditions: %v, want nil", err)
	}
	if n := uploads("jobs" + ProbeSuffix); n != 4 {
		t.Errorf("Verify of a store that enforces preconditions made %d uploads of the probe object, want 4", n)
	}

	endpoint, uploads = probeStore(t, false)
	l, err := driver.NewCAS(newConn(testClient(t, endpoint), "leases", "jobs", time.Second), lease.Options{Identity: "worker-1", TTL: MinTTL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(t.Context())
	if !errors.Is(err, lease.ErrUnsafeStore) || lease.Retryable(err) || !strings.Contains(err.Error(), "step 2, create-if-absent again, over the probe record that step 1 created: the store applied an upload with ifGenerationMatch=0 on a record that exists") {
		t.Errorf("Acquire on a store that ignores preconditions: %v, want lease.ErrUnsafeStore, not retryable, naming the step and what it applied", err)
	}
	if n := uploads("jobs"); n != 0 || uploads("jobs"+ProbeSuffix) != 4 {
		t.Errorf("uploads: %d of the lease's object, want none; %d of the probe, want 4 (two probes: create, then the refused one applied)", n, uploads("jobs"+ProbeSuffix))
	}
}
