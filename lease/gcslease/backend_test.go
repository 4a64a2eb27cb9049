package gcslease_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/option"
	storage "google.golang.org/api/storage/v1"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
)

func TestStoredJSON(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c := s.Client(t, nil)
	object := s.Name("stored-json")
	l := s.Open(t, c, object, testOptions("worker-1"))
	term, err := l.Acquire(t.Context())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	body, gen, contentType := s.Get(t, c, object)
	t.Logf("stored at gs://%s/%s (generation %d, %s): %s", s.Bucket, object, gen, contentType, body)
	if strconv.FormatInt(gen, 10) != term.Version {
		t.Errorf("object's generation is %d, want the term's Version %q", gen, term.Version)
	}
	storetest.CheckStoredJSON(t, body, contentType, "worker-1", testTTL)
	if err := l.Release(t.Context(), term); err != nil {
		t.Fatalf("Release: %v", err)
	}
	body, _, _ = s.Get(t, c, object)
	if r, err := driver.DecodeJSON(body); err != nil || !r.Released || r.Token != term.Token {
		t.Errorf("after Release the object is %s (%+v, %v), want a released record with token %d", body, r, err, term.Token)
	}
}

// TestRaceOneWinner races contenders, each with a client of its own, on one
// object, round after round: on a free lease (every write is
// ifGenerationMatch=0) and on a released one (every write is
// ifGenerationMatch on the generation all of them read). Exactly one must
// win each round: the store's condition must be atomic.
func TestRaceOneWinner(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	const contenders, rounds = 8, 10
	clients := make([]*storage.Service, contenders)
	for i := range clients {
		clients[i] = s.Client(t, nil)
	}
	race := func(t *testing.T, ls []lease.Lease) (winner int, term lease.Term) {
		t.Helper()
		terms := make([]lease.Term, len(ls))
		errs := make([]error, len(ls))
		var wg sync.WaitGroup
		for i, l := range ls {
			wg.Go(func() { terms[i], errs[i] = l.Acquire(t.Context()) })
		}
		wg.Wait()
		winner = -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("contenders %d and %d both won (tokens %d and %d)", winner, i, terms[winner].Token, terms[i].Token)
			case err == nil:
				winner = i
			case !errors.Is(err, lease.ErrHeld):
				t.Errorf("contender %d: %v, want a win or lease.ErrHeld", i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("no contender won: %v", errs)
		}
		return winner, terms[winner]
	}
	for round := range rounds {
		object := s.Name(fmt.Sprintf("race-%d", round))
		ls := make([]lease.Lease, contenders)
		for i := range ls {
			ls[i] = s.Open(t, clients[i], object, testOptions(fmt.Sprintf("contender-%d", i)))
		}
		w, term := race(t, ls) // ifGenerationMatch=0
		if err := ls[w].Release(t.Context(), term); err != nil {
			t.Fatalf("round %d: Release: %v", round, err)
		}
		for _, l := range ls {
			if _, err := l.Observe(t.Context()); err != nil { // every contender reads the released generation
				t.Fatalf("round %d: Observe: %v", round, err)
			}
		}
		if w2, term2 := race(t, ls); term2.Token != term.Token+1 { // ifGenerationMatch=<released generation>
			t.Errorf("round %d: contender %d won the released lease with token %d, want %d", round, w2, term2.Token, term.Token+1)
		}
	}
}

func TestForeignObjectNotTakenOver(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c := s.Client(t, nil)
	object := s.Name("foreign")
	foreign := []byte("id,owner\n1,batch-job\n")
	gen, err := s.Put(t.Context(), c, object, foreign)
	if err != nil {
		t.Fatalf("writing the foreign object: %v", err)
	}
	l := s.Open(t, c, object, testOptions("worker-1"))
	for i := range 2 {
		_, err := l.Acquire(t.Context())
		if !errors.Is(err, lease.ErrCorrupt) || lease.Retryable(err) {
			t.Fatalf("Acquire %d of a foreign object: %v, want lease.ErrCorrupt, not retryable", i+1, err)
		}
		if !strings.Contains(err.Error(), "gs://"+s.Bucket+"/"+object) {
			t.Errorf("error %q does not name the object gs://%s/%s", err, s.Bucket, object)
		}
		if i == 0 {
			t.Logf("error: %v", err)
			time.Sleep(testTTL + 200*time.Millisecond)
		}
	}
	body, after, _ := s.Get(t, c, object)
	if string(body) != string(foreign) || after != gen {
		t.Errorf("the foreign object is now %q (generation %d), want it untouched: %q (generation %d)", body, after, foreign, gen)
	}
}

// TestMissingBucket: a read in a missing bucket is answered as a read of a
// missing object, so Observe reports no record; Acquire's write finds the
// bucket missing.
func TestMissingBucket(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	missing := storetest.UniqueName("leasehold-missing")
	l, err := gcslease.Open(t.Context(), gcslease.Options{Bucket: missing, Object: "leases/jobs", Client: s.Client(t, nil)}, testOptions("worker-1"))
	if err != nil {
		t.Fatalf("Open: %v, want a lease (Open sends no request)", err)
	}
	_, err = l.Acquire(t.Context())
	storetest.CheckError(t, "Acquire in a missing bucket", err, lease.ErrNotFound, `bucket "`+missing+`" does not exist`)
	if _, err := l.Observe(t.Context()); !errors.Is(err, lease.ErrNoRecord) {
		t.Errorf("Observe in a missing bucket: %v, want lease.ErrNoRecord", err)
	}
}

// TestUnreachableEndpoint: a closed port fails at once, a server that never
// answers within CallTimeout; both are lease.ErrUnavailable, and retryable.
func TestUnreachableEndpoint(t *testing.T) {
	t.Parallel()
	storetest.Unreachable(t, testCallTimeout, func(t *testing.T, ctx context.Context, endpoint string) error {
		c, err := storage.NewService(ctx, option.WithEndpoint(endpoint+"/storage/v1/"), option.WithoutAuthentication())
		if err != nil {
			t.Fatal(err)
		}
		l, err := gcslease.Open(ctx, gcslease.Options{Bucket: "leases", Object: "jobs", Client: c}, testOptions("worker-1"))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		_, err = l.Acquire(ctx)
		return err
	})
}
