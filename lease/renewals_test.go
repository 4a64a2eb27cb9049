package lease_test

import (
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// judged is a Lease that only says who judges it; shown also says that its
// renewals show.
type judged struct {
	lease.Lease
	judge lease.Judge
}

func (j judged) Judge() lease.Judge { return j.judge }

type shown struct{ judged }

func (shown) RenewalsShow() bool { return true }

// TestRenewalsShow: a compare-and-swap store's renewals always show; a
// native lease's only when it says so (lease.RenewalShower).
func TestRenewalsShow(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    lease.Lease
		want bool
	}{
		{"judged by contender", judged{judge: lease.JudgedByContender}, true},
		{"judged by store", judged{judge: lease.JudgedByStore}, false},
		{"judged by store, renewals show", shown{judged{judge: lease.JudgedByStore}}, true},
	} {
		if got := lease.RenewalsShow(tc.l); got != tc.want {
			t.Errorf("%s: lease.RenewalsShow = %v, want %v", tc.name, got, tc.want)
		}
	}
}
