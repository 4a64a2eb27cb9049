package s3lease_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
	"github.com/leasehold/leasehold/lease/s3lease"
)

// TestCallsAreGranted: the requests s3lease sends in a lease's life, the
// store's check included, are exactly what Description grants (the grants
// leasehold help prints and the Terraform policy holds): each request is
// allowed, and each granted action is called.
func TestCallsAreGranted(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		if tg.Elsewhere == nil {
			t.Skipf("%s: no second address of the store, for a second process's check", tg.Name)
		}
		key := storetest.UniqueName("s3lease-grants")
		calls := storetest.NewCounter(nil, tg.label(key, "KEY"))
		client, elsewhere := tg.NewClient(calls), tg.Elsewhere(calls)
		if l := tg.Open(t, client, key, testOptions("x")); l.Judge() != s3lease.Description.Judge {
			t.Errorf("Judge() = %v, Description.Judge = %v", l.Judge(), s3lease.Description.Judge)
		}
		calls.Take()
		leasetest.CheckCallsGranted(t, s3lease.Description,
			func(id string) lease.Lease { return tg.Open(t, client, key, testOptions(id)) },
			func(id string) lease.Lease { return tg.Open(t, elsewhere, key, testOptions(id)) },
			func() []string { return slices.Sorted(maps.Keys(calls.Take())) })
	})
}

// label returns a labeller of the target's requests for
// leasetest.CheckGrants: each names the IAM action it needs and its
// resource, with name written as placeholder (a lease's key as KEY, a
// shard group's prefix as GROUP). A listing is s3:ListBucket on the
// bucket, and names its prefix when that is not name's "/".
func (tg *target) label(name, placeholder string) func(*http.Request) string {
	return func(r *http.Request) string {
		if r.URL.Query().Has("list-type") {
			if p := r.URL.Query().Get("prefix"); p != name+"/" {
				return "s3:ListBucket with the prefix " + p + " on arn:aws:s3:::BUCKET"
			}
			return "s3:ListBucket on arn:aws:s3:::BUCKET"
		}
		object := strings.TrimPrefix(r.URL.Path, "/")
		if tg.PathStyle {
			object = strings.TrimPrefix(object, tg.Bucket+"/")
		}
		action := map[string]string{http.MethodGet: "s3:GetObject", http.MethodHead: "s3:GetObject", http.MethodPut: "s3:PutObject"}[r.Method]
		if action == "" {
			action = "HTTP " + r.Method
		}
		return action + " on arn:aws:s3:::BUCKET/" + strings.Replace(object, name, placeholder, 1)
	}
}
