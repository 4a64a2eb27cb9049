//go:build redteam11open

package sim_test

// Red team 11, open (fails on 2329058): run with
//   go test ./sim -tags redteam11open -run TestRedteam11 -v

import (
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestRedteam11HoldWaiverCountsARestoreThatChangedNothing (the oracle,
// 2329058's third change). The "duplicate called during a hold" check
// now waives every state fault from when the hold term's acquisition
// landed, not from its task's start. Between the two, a term without a
// Period has written one body, its acquisition's: the restore fault puts
// back "an earlier body of the current term", which is that body, the
// record unchanged (apply records the fault before it looks, and even
// when termBodies finds none). So a restore in that window, which cannot
// have lost the hold, waives a duplicate that ran inside it, whatever the
// runner did: the synthetic history below (w0's acquisition lands at
// +9 s and is answered at +10 s, when its task starts; a restore at
// +9.5 s; w0's task ends at +10.5 s with a 9 s hold; w1, called at
// +11.9 s, runs at +12 s) is reported before 2329058 and not since. (The
// sibling check "run during a minimum hold" waives state faults from a
// TTL before the task's start, and so misses it both before and after.)
// A waiver that counts only state faults that changed the record (a
// restore that put back another version, a foreign object or a delete
// that a write of the term met, restore-under's put-back) keeps
// 6000171332's waiver and loses this blind spot.
func TestRedteam11HoldWaiverCountsARestoreThatChangedNothing(t *testing.T) {
	st := newStore()
	t0 := time.Unix(1_000_000, 0)
	h := &history{t0: t0, outcomes: map[int]outcome{}, lingered: map[int]bool{}, st: st}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	st.acqs = append(st.acqs, acq{holder: "w0", token: 1, at: t0.Add(sec(9))})
	st.acqs = append(st.acqs, acq{holder: "w1", token: 2, at: t0.Add(sec(12))})
	h.events = []event{
		{at: sec(10), task: 1, who: "w0", start: true, token: 1, minHold: 3 * ttl, called: sec(9)},
		{at: sec(10.5), task: 1, who: "w0", ok: true},
		{at: sec(12), task: 2, who: "w1", start: true, token: 2, called: sec(11.9)},
		{at: sec(13), task: 2, who: "w1", ok: true},
	}
	h.calls = []call{{who: "w0", at: sec(9), ran: 1}, {who: "w1", at: sec(11.9), ran: 2}}
	h.faults = []step{{At: sec(9.5), F: restore, Who: 0, N: 2}}
	sc := scenario{contenders: []contender{{id: "w0", kind: onceKind, minHold: 3 * ttl}, {id: "w1", kind: onceKind}}}
	if hold := 3*ttl - lease.DefaultRenewInterval(ttl) - sc.timeout(); sec(11.9) >= sec(10)+hold {
		t.Fatalf("the call is not inside the hold's checked part (premise)")
	}
	v := h.check(sc)
	for _, s := range v {
		t.Log(s)
	}
	if len(v) == 0 {
		t.Errorf("no violation: w1 ran inside w0's hold, and the only fault, a restore at +9.5 s before w0's task started, put back the record it replaced (w0's acquisition, the term's one body)")
	}
}
