package shard

import "time"

// absent is the version of a liveness key that a listing did not show.
const absent = "\x00absent"

// judge decides, on the assigner's own monotonic clock, which workers'
// liveness has expired, by rule 2 applied to listings: a key's version
// counts from the return of the first listing of an unbroken run that
// showed it; the run is broken by a listing that fails, and by one that
// returns more than the group's renew interval after the previous one was
// sent. A key that a listing does not show counts as a version of its own
// (absent). A key expires once its version has counted a TTL. This is the
// count lease/driver's engine keeps for one record, kept here for every
// member from one listing, so that judging M workers costs one listing,
// not M reads.
//
// The judge also counts for every identity that no listing has shown
// (rest): absent from the first listing on, in the same unbroken run. A
// term that none of the assigner's records names (its liveness key and its
// acknowledgement deleted, the assignments that gave it shards overwritten
// by a restore) is one of those: it has stopped once rest has counted a
// TTL (see unknownExpired).
type judge struct {
	ttl, gap time.Duration
	counts   map[string]*count
	rest     count
	lastSent time.Time // when the previous listing was sent
}

type count struct {
	version string
	at      time.Time // when the run of version began
	last    string    // the version the latest successful listing showed
	changed time.Time // when a listing first showed last
}

func newJudge(ttl, gap time.Duration) *judge {
	return &judge{ttl: ttl, gap: gap, counts: map[string]*count{}}
}

// saw counts a listing sent at sent that returned now with versions (by
// identity), for those identities and every one watched before, and for
// watch. It reports whether the listing broke the run.
func (j *judge) saw(versions map[string]string, watch []string, sent, now time.Time) (broken bool) {
	broken = now.Sub(j.lastSent) > j.gap
	j.lastSent = sent
	for _, id := range watch {
		if j.counts[id] == nil {
			j.counts[id] = &count{}
		}
	}
	for id := range versions {
		if j.counts[id] == nil {
			j.counts[id] = &count{}
		}
	}
	for id, c := range j.counts {
		v, ok := versions[id]
		if !ok {
			v = absent
		}
		c.see(v, broken, now)
	}
	j.rest.see(absent, broken, now)
	return broken
}

// see counts a listing that returned at now with version v.
func (c *count) see(v string, broken bool, now time.Time) {
	if v != c.version || broken {
		c.version, c.at = v, now
	}
	if v != c.last {
		c.last, c.changed = v, now
	}
}

// failed breaks every run: a listing failed.
func (j *judge) failed() {
	for _, c := range j.counts {
		c.version = ""
	}
	j.rest.version = ""
}

// expired reports whether id's liveness key has stayed unchanged (or
// absent) for a TTL, so that every term of id that had written it has
// stopped (see the package doc), and none has written since.
func (j *judge) expired(id string, now time.Time) bool {
	c := j.counts[id]
	return c != nil && c.over(j.ttl, now)
}

// unknownExpired reports whether every identity that no listing has shown
// has had no liveness key for a TTL: every term of such an identity has
// stopped, whether or not anything the assigner reads names it.
func (j *judge) unknownExpired(now time.Time) bool {
	return j.rest.over(j.ttl, now)
}

// over reports whether c's version has counted ttl at now.
func (c *count) over(ttl time.Duration, now time.Time) bool {
	return c.version != "" && now.Sub(c.at) >= ttl
}

// expiredFor returns how long ago id's liveness key expired (see
// expired): 0 if it has not.
func (j *judge) expiredFor(id string, now time.Time) time.Duration {
	if !j.expired(id, now) {
		return 0
	}
	return now.Sub(j.counts[id].at) - j.ttl
}

// alive reports whether id counts for balance: the latest successful
// listing showed its liveness key, at a version first listed within the
// last TTL, and it has not expired. A failed listing restarts the count
// towards expiry, but does not make a worker whose key stopped changing
// count again.
func (j *judge) alive(id string, now time.Time) bool {
	c := j.counts[id]
	return c != nil && c.last != "" && c.last != absent && now.Sub(c.changed) < j.ttl && !j.expired(id, now)
}

// due returns the earliest moment (on the assigner's clock) at which one of
// ids can be judged expired, among those whose renewals seem to have
// stopped: a version unchanged for longer than one and a half renew
// intervals, when the worker renews every one. ok is false when there is
// none. The assigner lists again at that moment, and tells the workers to
// read the assignment just after it (assignment.Expect).
func (j *judge) due(ids []string, now time.Time) (at time.Time, ok bool) {
	for _, id := range ids {
		c := j.counts[id]
		if c == nil || c.version == "" || now.Sub(c.at) <= j.gap*3/2 || j.expired(id, now) {
			continue
		}
		if e := c.at.Add(j.ttl); !ok || e.Before(at) {
			at, ok = e, true
		}
	}
	return at, ok
}
