package driver_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
)

func TestSameWrite(t *testing.T) {
	w := lease.Record{Holder: "a", Token: 3, Nonce: "n1"}
	for _, tc := range []struct {
		name string
		r, w lease.Record
		want bool
	}{
		{"the record written", w, w, true},
		{"version and TTL do not matter", lease.Record{Holder: "a", Token: 3, Nonce: "n1", Version: "v9", TTL: 1}, w, true},
		{"another nonce", lease.Record{Holder: "a", Token: 3, Nonce: "n2"}, w, false},
		{"another holder", lease.Record{Holder: "b", Token: 3, Nonce: "n1"}, w, false},
		{"another token", lease.Record{Holder: "a", Token: 4, Nonce: "n1"}, w, false},
		{"released, written held", lease.Record{Holder: "a", Token: 3, Nonce: "n1", Released: true}, w, false},
		{"other annotations", lease.Record{Holder: "a", Token: 3, Nonce: "n1", Annotations: lease.NewAnnotations(map[string]string{"shard/epoch": "2"})}, w, false},
		{"a write without a nonce matches nothing", lease.Record{Holder: "a", Token: 3}, lease.Record{Holder: "a", Token: 3}, false},
	} {
		if got := driver.SameWrite(tc.r, tc.w); got != tc.want {
			t.Errorf("%s: SameWrite(%+v, %+v) = %t, want %t", tc.name, tc.r, tc.w, got, tc.want)
		}
	}
}

func TestCheckTerm(t *testing.T) {
	opts := lease.Options{Identity: "a"}
	if err := driver.CheckTerm(lease.Term{Holder: "a", Token: 1, Version: "v"}, opts); err != nil {
		t.Errorf("CheckTerm of a term issued to a: %v", err)
	}
	for _, bad := range []lease.Term{{Holder: "b", Token: 1, Version: "v"}, {Holder: "a", Version: "v"}, {Holder: "a", Token: 1},
		{Holder: "a", Token: 1, Version: "v", Annotations: lease.NewAnnotations(map[string]string{"period": "1"})}} {
		if err := driver.CheckTerm(bad, opts); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("CheckTerm(%+v) = %v, want an error matching lease.ErrInvalid", bad, err)
		}
	}
}

func TestReadBack(t *testing.T) {
	want := lease.Record{Holder: "a", Token: 2, Nonce: "mine"}
	other := lease.Record{Holder: "b", Token: 2, Nonce: "theirs"}
	werr := errors.New("answer lost")
	reads := func(r lease.Record, err error) func(context.Context) (lease.Record, error) {
		return func(context.Context) (lease.Record, error) { return r, err }
	}
	if got, err := driver.ReadBack(t.Context(), werr, want, reads(want, nil)); err != nil || got != want {
		t.Errorf("ReadBack of a write that landed = %+v, %v; want it, nil", got, err)
	}
	if got, err := driver.ReadBack(t.Context(), werr, want, reads(other, nil)); err != werr || got != other {
		t.Errorf("ReadBack of a write that did not land = %+v, %v; want the record read and the write's error", got, err)
	}
	if _, err := driver.ReadBack(t.Context(), werr, want, reads(lease.Record{}, lease.ErrUnavailable)); !errors.Is(err, lease.ErrUnavailable) || !errors.Is(err, werr) {
		t.Errorf("ReadBack whose read failed = %v, want an error matching lease.ErrUnavailable and the write's", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := driver.ReadBack(ctx, werr, want, reads(want, nil)); err != context.Canceled {
		t.Errorf("ReadBack after ctx ended = %v, want context.Canceled, unwrapped", err)
	}
}

func TestLostTo(t *testing.T) {
	for _, tc := range []struct {
		r    lease.Record
		want string
	}{
		{lease.Record{Holder: "b", Token: 5}, `lease: lost: now held by "b" (token 5)`},
		{lease.Record{Holder: "a", Token: 4, Released: true}, `lease: lost: released by "a" (token 4)`},
		{lease.Record{}, `lease: lost: now held by a holder that has not written its name yet`},
	} {
		if err := driver.LostTo(tc.r); !errors.Is(err, lease.ErrLost) || err.Error() != tc.want {
			t.Errorf("LostTo(%+v) = %q, want %q matching lease.ErrLost", tc.r, err, tc.want)
		}
	}
}

func TestNextToken(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prev    uint64
		highest uint64
		want    uint64 // 0: lease.ErrCorrupt
	}{
		{"never acquired", 0, 0, 1},
		{"record ahead", 7, 3, 8},
		{"record as seen", 7, 7, 8},
		{"record deleted", 0, 7, 8},
		{"record restored from an older backup", 2, 7, 8},
		{"record cannot grow", math.MaxUint64, 0, 0},
		{"highest cannot grow", 1, math.MaxUint64, 0},
	} {
		got, err := driver.NextToken(lease.Record{Token: tc.prev}, tc.highest)
		if tc.want == 0 && (!errors.Is(err, lease.ErrCorrupt) || !strings.Contains(err.Error(), "cannot grow")) {
			t.Errorf("%s: NextToken(token %d, highest %d) = %d, %v; want ErrCorrupt saying it cannot grow", tc.name, tc.prev, tc.highest, got, err)
		}
		if tc.want != 0 && (got != tc.want || err != nil) {
			t.Errorf("%s: NextToken(token %d, highest %d) = %d, %v; want %d", tc.name, tc.prev, tc.highest, got, err, tc.want)
		}
	}
}

func TestBreakNeeded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rec     lease.Record
		needed  bool
		invalid bool
	}{
		{"held", lease.Record{Holder: "a", Token: 3, Version: "v1"}, true, false},
		{"released", lease.Record{Holder: "a", Token: 3, Released: true, Version: "v1"}, false, false},
		{"not observed", lease.Record{Holder: "a", Token: 3}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needed, err := driver.BreakNeeded(tc.rec)
			if needed != tc.needed || errors.Is(err, lease.ErrInvalid) != tc.invalid {
				t.Errorf("BreakNeeded(%+v) = %t, %v; want %t, invalid %t", tc.rec, needed, err, tc.needed, tc.invalid)
			}
		})
	}
}
