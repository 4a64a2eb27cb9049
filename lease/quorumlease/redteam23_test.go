package quorumlease_test

import (
	"testing"
	"testing/synctest"
)

// TestRedTeam23LeftRunningReadSplitsTheAnchor: a member that is back is
// not skipped for longer than "CallTimeout and a renew interval" (readAll's
// comment), and "a contender that holds a minority while another holds a
// member keeps it at most a TTL" (package doc, no livelock), so two
// contenders that start together with a minority down have a leader within
// a TTL. Sequence, CallTimeout 4/5 of the TTL (Options allow up to the
// TTL): member 1 hangs for b; b's Observe waits it out (silent) and its
// next Observe, within the silence, leaves a read running; member 1 heals
// and member 3 goes down for b and c. b and c try at a follower's pace
// from the same instant: b counts member 1 silent while that read runs
// (since a512314, even once its silence is over) and anchors on member 2, c
// anchors on member 1. When the read ends, each still holds its member,
// and each then finds its own campaign lapsed and its own record on its
// member held "by another" for a TTL more: no leader for two TTLs (4.085s
// at TTL 2s; 800ms before a512314, whose attempts waited for member 1 once
// its silence was over). The sequence is leftRunningReadLeader's
// (redteam24_test.go) at its first timing.
func TestRedTeam23LeftRunningReadSplitsTheAnchor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { leftRunningReadLeader(t, ttl*4/5, 0, 0) })
}
