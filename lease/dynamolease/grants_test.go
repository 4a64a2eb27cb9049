package dynamolease_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
	"github.com/leasehold/leasehold/lease/dynamolease"
	"github.com/leasehold/leasehold/lease/internal/awstest"
	"github.com/leasehold/leasehold/lease/internal/storetest"
	"github.com/leasehold/leasehold/lease/leasetest"
)

// TestCallsAreGranted: the operations dynamolease sends in a lease's life,
// the store's check included, are exactly what Description grants (the
// grants leasehold help prints and the Terraform policy holds): each is
// allowed on the item it touches, and each granted action is called.
func TestCallsAreGranted(t *testing.T) {
	targets.Run(t, nil, func(t *testing.T, tg *target) {
		if tg.Elsewhere == nil {
			t.Skipf("%s: no second client of the store, for a second process's check", tg.Name)
		}
		name := storetest.UniqueName("dynamodb-grants")
		const table = "arn:aws:dynamodb:REGION:ACCOUNT:table/TABLE"
		calls := storetest.NewCounter(nil, func(r *http.Request) string {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var in struct {
				Key, Item map[string]struct{ S string }
			}
			_ = json.Unmarshal(body, &in)
			key := in.Key[dynamolease.DefaultKeyAttribute].S + in.Item[dynamolease.DefaultKeyAttribute].S
			resource := table
			if strings.HasSuffix(key, driver.ProbeSuffix) {
				resource += " (item NAME" + driver.ProbeSuffix + ")"
			}
			return "dynamodb:" + awstest.ByOperation(r) + " on " + resource
		})
		client, elsewhere := tg.NewClient(calls), tg.Elsewhere(calls)
		if l := tg.Open(t, client, name, tg.options("x")); l.Judge() != dynamolease.Description.Judge {
			t.Errorf("Judge() = %v, Description.Judge = %v", l.Judge(), dynamolease.Description.Judge)
		}
		leasetest.CheckCallsGranted(t, dynamolease.Description,
			func(id string) lease.Lease { return tg.Open(t, client, name, tg.options(id)) },
			func(id string) lease.Lease { return tg.Open(t, elsewhere, name, tg.options(id)) },
			func() []string { return slices.Sorted(maps.Keys(calls.Take())) })
	})
}
