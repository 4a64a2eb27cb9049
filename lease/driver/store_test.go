package driver_test

import (
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestRegisterStore(t *testing.T) {
	s := driver.Store{Scheme: "test-store", Name: "a test store", Judge: lease.JudgedByContender, Probe: "a probe",
		Grants: []driver.Grant{
			{Actions: []string{"x:Read", "x:Write"}, Resource: "x::KEY"},
			{Actions: []string{"x:Write"}, Resource: "x::KEY" + driver.ProbeSuffix, Probe: true},
		},
		Price: driver.Price{Service: "memory"}}
	driver.RegisterStore(s)
	got, ok := driver.LookupStore("test-store")
	if !ok || got.Name != s.Name {
		t.Fatalf("LookupStore(%q) = %+v, %v; want the Store registered", "test-store", got, ok)
	}
	if _, ok := driver.LookupStore("no-such-store"); ok {
		t.Error("LookupStore of a scheme never registered found one")
	}
	found := false
	for _, r := range driver.Stores() {
		found = found || r.Scheme == "test-store"
	}
	if !found {
		t.Errorf("Stores() lacks the Store registered")
	}
	if got, want := got.ProbeGrants(), "x:Write on x::KEY.leasehold-probe"; got != want {
		t.Errorf("ProbeGrants() = %q, want %q", got, want)
	}

	for _, bad := range []struct {
		name string
		s    driver.Store
		want string
	}{
		{"twice", s, "registered twice"},
		{"no judge", driver.Store{Scheme: "a", Name: "a", Probe: "p", Price: driver.Price{Service: "memory"}}, "has no Judge"},
		{"probe and conditions", driver.Store{Scheme: "b", Name: "b", Judge: lease.JudgedByStore, Probe: "p", Conditions: "c", Price: driver.Price{Service: "memory"}}, "exactly one of Probe and Conditions"},
		{"no price", driver.Store{Scheme: "c", Name: "c", Judge: lease.JudgedByStore, Conditions: "c"}, "no Scheme, Name or Price.Service"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, bad.want) {
					t.Errorf("RegisterStore panicked with %q, want %q", r, bad.want)
				}
			}()
			driver.RegisterStore(bad.s)
		})
	}
}

// TestStoreRenewalsShow: a store's renewals show when its contenders judge
// expiry (every write changes the record), or when its Price names the
// request that shows them (Azure's metadata write).
func TestStoreRenewalsShow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store driver.Store
		want  bool
	}{
		{"judged by contender", driver.Store{Judge: lease.JudgedByContender, Price: driver.Price{Renew: "PUT"}}, true},
		{"judged by store", driver.Store{Judge: lease.JudgedByStore, Price: driver.Price{Renew: "PUT lease/renew"}}, false},
		{"judged by store, shown", driver.Store{Judge: lease.JudgedByStore, Price: driver.Price{Renew: "PUT lease/renew", Show: "PUT metadata"}}, true},
	} {
		if got := tc.store.RenewalsShow(); got != tc.want {
			t.Errorf("%s: RenewalsShow() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
