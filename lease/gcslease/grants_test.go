package gcslease_test

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/gcslease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// uploadName finds the object's name in the metadata part of a multipart
// upload.
var uploadName = regexp.MustCompile(`"name":"([^"]*)"`)

// TestCallsAreGranted: the requests gcslease sends in a lease's life, the
// store's check included, need exactly the permissions Description grants
// (the grants leasehold help prints and the Terraform role holds; see
// label).
func TestCallsAreGranted(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	object := s.Name("grants")
	s.Track(object + gcslease.ProbeSuffix)
	calls := storetest.NewCounter(nil, label(object, "OBJECT"))
	client, elsewhere := s.Client(t, calls), s.Client(t, calls)
	if l := s.Open(t, client, object, testOptions("x")); l.Judge() != gcslease.Description.Judge {
		t.Errorf("Judge() = %v, Description.Judge = %v", l.Judge(), gcslease.Description.Judge)
	}
	leasetest.CheckCallsGranted(t, gcslease.Description,
		func(id string) lease.Lease { return s.Open(t, client, object, testOptions(id)) },
		func(id string) lease.Lease { return s.Open(t, elsewhere, object, testOptions(id)) },
		func() []string { return slices.Sorted(maps.Keys(calls.Take())) })
}

// label returns a labeller of requests to the store for
// leasetest.CheckGrants: each names the permissions it needs and its
// resource, with name written as placeholder (a lease's object as OBJECT,
// a shard group's prefix as GROUP). A read needs storage.objects.get, an
// upload storage.objects.create, and an upload over an existing
// generation (ifGenerationMatch > 0) also storage.objects.delete, as Cloud
// Storage documents for overwrites; a listing is storage.objects.list on
// the bucket, and names its prefix when that is not name's "/".
func label(name, placeholder string) func(*http.Request) string {
	return func(r *http.Request) string {
		if strings.HasSuffix(r.URL.Path, "/o") && r.Method == http.MethodGet {
			if p := r.URL.Query().Get("prefix"); p != name+"/" {
				return "storage.objects.list with the prefix " + p + " on projects/_/buckets/BUCKET"
			}
			return "storage.objects.list on projects/_/buckets/BUCKET"
		}
		object, _ := url.PathUnescape(r.URL.Path[strings.LastIndex(r.URL.Path, "/o/")+len("/o/"):])
		perms := "storage.objects.get"
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m := uploadName.FindSubmatch(body); m != nil {
				object = string(m[1])
			}
			perms = "storage.objects.create"
			if g := r.URL.Query().Get("ifGenerationMatch"); g != "" && g != "0" {
				perms += ", storage.objects.delete"
			}
		}
		return perms + " on projects/_/buckets/BUCKET/objects/" + strings.Replace(object, name, placeholder, 1)
	}
}
