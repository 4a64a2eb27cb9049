package sim_test

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRedTeam19TokenWaiverNeedsTheStoresOrder: the token-order waiver of
// the pair tookRestored names (a restored body's taker and the term whose
// record the body replaced) is for tokens that rose in the store's order
// while the replaced term's answer came late. w0, which had read w2's
// token 2 (not unseenToken's case: rule 10 binds it), takes the restored
// body over with token 2 again, an engine bug (a repeated fencing token,
// while w2 may still lead). Whichever of the two starts its task first,
// the oracle must report it: the taker's token is not above the one its
// Lease had seen, and the store's order did not rise. Both were waived.
func TestRedTeam19TokenWaiverNeedsTheStoresOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		w2At time.Duration // when w2's task starts
	}{
		{"the taker starts after the replaced term", 100 * time.Millisecond},
		{"the replaced term's answer comes after the taker's start", 1300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := waiverHistory(1400*time.Millisecond, 1200*time.Millisecond)
			h.st.acqs[1].known = 2 // w0 had read w2's token
			h.st.acqs[1].token = 2 // and wrote it again
			for i, e := range h.events {
				switch {
				case e.who == "w0" && e.start:
					h.events[i].token = 2
				case e.who == "w2" && e.start:
					h.events[i].at = tc.w2At
				}
			}
			slices.SortStableFunc(h.events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
			if v := tokenOrder(h); len(v) != 1 || !strings.Contains(v[0], "with token 2") {
				t.Errorf("w0 took the restored body over with token 2, w2's, which it had read: got %q, want that reported", v)
			}
		})
	}
}
