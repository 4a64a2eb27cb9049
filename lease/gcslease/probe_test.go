package gcslease_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
)

// deleteAfterFirstUpload carries a client's requests and, once the first
// upload has been applied (the store check's first write of the probe
// object, before any write of the lease), runs del before it answers: a
// lifecycle rule or a cleanup job acting between two steps of the check.
type deleteAfterFirstUpload struct {
	once sync.Once
	del  func()
}

func (d *deleteAfterFirstUpload) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && resp.StatusCode == http.StatusOK {
		d.once.Do(d.del)
	}
	return resp, err
}

// TestProbeObjectDeletedMidProbe: a store that enforces preconditions is
// accepted even when its probe object is deleted between two steps of the
// check.
func TestProbeObjectDeletedMidProbe(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	object := s.Name("probe-deleted")
	direct := s.Client(t, nil)
	rt := &deleteAfterFirstUpload{del: func() {
		if err := s.Delete(t.Context(), direct, object+gcslease.ProbeSuffix); err != nil {
			t.Errorf("deleting the probe object between the check's steps: %v", err)
		}
	}}
	l := s.Open(t, s.Client(t, rt), object, testOptions("worker-1"))
	if _, err := l.Acquire(t.Context()); err != nil {
		t.Fatalf("Acquire on a conforming store whose probe object was deleted mid-check: %v, want won", err)
	}
}

// TestLongObjectName: a name too long to have a probe object beside it
// (Cloud Storage allows 1024 bytes; the probe's is 16 longer) is refused at
// Open, naming its length; the longest name allowed works.
func TestLongObjectName(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	long := func(n int) string {
		name := s.Name("long") + "/"
		return name + strings.Repeat("o", n-len(name))
	}
	_, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: s.Bucket, Object: long(1020), Client: s.Client(t, nil)}, testOptions("worker-1"))
	var oe *lease.OptionError
	if !errors.As(err, &oe) || oe.Field != "Object" || lease.Retryable(err) || !strings.Contains(err.Error(), "is 1020 bytes long; at most 1008") {
		t.Errorf("Open with a 1020-byte name: %v, want a lease.OptionError on Object naming its length and the limit", err)
	}
	object := long(1008)
	s.Track(object)
	l := s.Open(t, s.Client(t, nil), object, testOptions("worker-1"))
	if _, err := l.Acquire(t.Context()); err != nil {
		t.Errorf("Acquire with a 1008-byte name (its probe object's is 1024): %v, want won", err)
	}
}
