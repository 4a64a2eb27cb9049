package shard

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestJudge: rule 2 on listings, for a worker w, and for the identities no
// listing showed (unknownExpired: absent from the first listing on), which
// expire in the same unbroken run, and only in one.
func TestJudge(t *testing.T) {
	const ttl, gap = 15 * time.Second, 5 * time.Second
	list := func(j *judge, versions map[string]string) {
		sent := time.Now()
		time.Sleep(10 * time.Millisecond) // the listing's latency
		j.saw(versions, nil, sent, time.Now())
	}
	for _, tc := range []struct {
		name    string
		run     func(j *judge)
		expired bool
		unknown bool // whether the identities no listing showed have expired
	}{
		{"unchanged for a TTL", func(j *judge) {
			for range 10 {
				list(j, map[string]string{"w": "v1"})
				time.Sleep(2 * time.Second)
			}
		}, true, true},
		{"changed within the TTL", func(j *judge) {
			for i := range 10 {
				list(j, map[string]string{"w": []string{"v1", "v2"}[i/5]})
				time.Sleep(2 * time.Second)
			}
		}, false, true},
		{"a gap longer than the renew interval restarts the count", func(j *judge) {
			list(j, map[string]string{"w": "v1"})
			time.Sleep(gap + time.Second)
			for range 6 {
				list(j, map[string]string{"w": "v1"})
				time.Sleep(2 * time.Second)
			}
		}, false, false},
		{"a failed listing restarts the count", func(j *judge) {
			for i := range 10 {
				if i == 3 {
					j.failed()
				}
				list(j, map[string]string{"w": "v1"})
				time.Sleep(2 * time.Second)
			}
		}, false, false},
		{"the count starts when the listing that first showed the version returned, not when it was sent", func(j *judge) {
			sent := time.Now()
			time.Sleep(4 * time.Second) // a slow listing: the worker may have renewed until it returned
			j.saw(map[string]string{"w": "v1"}, nil, sent, time.Now())
			time.Sleep(500 * time.Millisecond)
			for range 6 {
				list(j, map[string]string{"w": "v1"})
				time.Sleep(2 * time.Second)
			}
			// 16.6 s after the first listing was sent, 12.6 s after it returned.
		}, false, false},
		{"absent for a TTL", func(j *judge) {
			list(j, map[string]string{"w": "v1"})
			for range 9 {
				time.Sleep(2 * time.Second)
				list(j, map[string]string{})
			}
		}, true, true},
		{"never seen", func(j *judge) {
			for range 10 {
				list(j, map[string]string{"other": "v"})
				time.Sleep(2 * time.Second)
			}
		}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j := newJudge(ttl, gap)
				tc.run(j)
				if got := j.expired("w", time.Now()); got != tc.expired {
					t.Fatalf("expired: %t, want %t", got, tc.expired)
				}
				if got := j.unknownExpired(time.Now()); got != tc.unknown {
					t.Fatalf("the identities never listed expired: %t, want %t", got, tc.unknown)
				}
			})
		})
	}
}

// TestJudgeAlive: a worker counts for balance while its key changes; a
// failed listing restarts the count towards expiry but does not make a
// worker whose key stopped changing count again.
func TestJudgeAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl, gap = 15 * time.Second, 5 * time.Second
		j := newJudge(ttl, gap)
		for i := range 10 {
			j.saw(map[string]string{"renewing": fmt.Sprint(i), "stuck": "v"}, nil, time.Now(), time.Now())
			time.Sleep(2 * time.Second)
		}
		now := time.Now()
		if !j.alive("renewing", now) || j.alive("stuck", now) || !j.expired("stuck", now) {
			t.Fatalf("alive: renewing %t, stuck %t; stuck expired %t; want true, false, true", j.alive("renewing", now), j.alive("stuck", now), j.expired("stuck", now))
		}
		j.failed()
		j.saw(map[string]string{"renewing": "10", "stuck": "v"}, nil, time.Now(), time.Now())
		now = time.Now()
		if j.alive("stuck", now) || j.expired("stuck", now) {
			t.Fatalf("after a failed listing: stuck alive %t, expired %t; want neither", j.alive("stuck", now), j.expired("stuck", now))
		}
	})
}
