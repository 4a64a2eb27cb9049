package main

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/leasehold/leasehold/internal/toxiproxy"
	"github.com/leasehold/leasehold/lease"
)

// TestBenchQuorum runs a quorum of three memleases' table in a bubble,
// two trials each, with a five-minute outage: every column is measured
// (member 1 alone, all up, member 1 refusing, member 1 hanging), the
// quorum costs three times its member's requests, and the outage leaves
// the store alone leaderless for about all of it and the quorum for none,
// under one term.
func TestBenchQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const outage = 5 * time.Minute
		q, why, err := setupQuorum(t.Context(), "quorum-mem", 2*time.Second)
		if q == nil {
			t.Fatal(why, err)
		}
		c := config{ttl: 2 * time.Second, trials: 2, parallel: 2, countFor: 30 * time.Second, outage: outage}
		qr := benchQuorum(t.Context(), c, q)
		if len(qr.errs) > 0 || len(qr.notes) > 0 {
			t.Fatalf("errors %v, notes %v", qr.errs, qr.notes)
		}
		heads := []string{"single store: mem-1", "quorum, all up", "quorum, member 1 refusing", "quorum, member 1 hanging"}
		if got := qr.table(c.trials).header[1:]; !slices.Equal(got, heads) {
			t.Fatalf("columns %q, want %q", got, heads)
		}
		single := qr.columns[0].r
		for _, col := range qr.columns {
			r := col.r
			if len(r.failover[warmed]) != 2 || len(r.failover[justStarted]) != 2 || len(r.handover) != 2 || len(r.firstLeader) != 2 {
				t.Errorf("%s: failovers %d and %d, handovers %d, first leaders %d; want 2 each",
					col.head, len(r.failover[warmed]), len(r.failover[justStarted]), len(r.handover), len(r.firstLeader))
			}
			for _, d := range slices.Concat(r.failover[warmed], r.failover[justStarted]) {
				if d < q.ttl || d > 2*q.ttl {
					t.Errorf("%s: crash failover %v, want between one TTL and two", col.head, d)
				}
			}
			if col.r == single {
				continue
			}
			// The quorum's leader writes, and its follower reads, every
			// member: three times its member's requests, each member's
			// under its name.
			for who, m := range map[string][2]map[string]float64{"leader": {r.leader, single.leader}, "follower": {r.follower, single.follower}} {
				ratio := total(m[0]) / total(m[1])
				if ratio < 2.5 || ratio > 3.5 || len(m[0]) != 3 || m[0]["mem-2"] == 0 {
					t.Errorf("%s: %s requests %v against one store's %v: want about three times, by member", col.head, who, m[0], m[1])
				}
			}
		}
		if !qr.outageDone || qr.outageSingle.leaderless < outage-q.ttl || qr.outageQuorum.leaderless != 0 || qr.outageQuorum.terms != 1 {
			t.Errorf("a %v outage of member 1's store: alone %v, quorum %v; want about all of it alone, the quorum 0s in one term", outage, qr.outageSingle, qr.outageQuorum)
		}
		var sb strings.Builder
		qr.table(c.trials).print(&sb, true)
		t.Log(sb.String())
		for _, want := range []string{"| crash failover ÷ TTL min / p50 / p99, follower warmed |", "| first leader of 5 contenders started together, p50 / p99 |",
			"| requests ÷ the single store's, leader / follower |", "| leaderless during a 5m0s outage of member 1's store (terms led in it) | 4m"} {
			if !strings.Contains(sb.String(), want) {
				t.Errorf("the table has no %q:\n%s", want, sb.String())
			}
		}
	})
}

// TestLinkCutsAStore: a link to MinIO through toxiproxy lets a lease's
// calls through; cut refusing, the store refuses their connections; cut
// hanging, they wait until their timeout; healed, they go through again.
func TestLinkCutsAStore(t *testing.T) {
	for _, v := range []string{"LEASEHOLD_MINIO_ENDPOINT", "LEASEHOLD_TOXIPROXY_URL"} {
		if os.Getenv(v) == "" {
			t.Skipf(`leasebench: %s is not set (scripts/stack up; eval "$(scripts/stack env)")`, v)
		}
	}
	ctx := t.Context()
	st, _, err := setupStore(ctx, "minio", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.cleanup(context.Background()) })
	q := &quorum{ttl: st.ttl, tp: toxiproxy.New(os.Getenv("LEASEHOLD_TOXIPROXY_URL"))}
	l, why, err := q.link(ctx, st)
	if l == nil {
		t.Fatal(why, err)
	}
	t.Cleanup(func() { l.close(context.Background()) })
	open, err := l.st.connect(l.st.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	le, err := open(ctx, "link-"+randomHex(4), lease.Options{Identity: "x", TTL: st.ttl})
	if err != nil {
		t.Fatal(err)
	}
	observe := func() error {
		_, err := le.Observe(ctx)
		if errors.Is(err, lease.ErrNoRecord) {
			return nil
		}
		return err
	}
	for _, step := range []struct {
		how  cut
		want string // in the error; "" for none
	}{{0, ""}, {cutRefuse, "connection refused"}, {0, ""}, {cutHang, "deadline exceeded"}, {0, ""}} {
		if err := l.set(step.how); err != nil {
			t.Fatal(err)
		}
		err := observe()
		switch {
		case step.want == "" && err != nil:
			t.Errorf("through the link, %v: Observe: %v, want it answered", step.how, err)
		case step.want != "" && (err == nil || !strings.Contains(err.Error(), step.want)):
			t.Errorf("through the link, cut %v: Observe: %v, want an error with %q", step.how, err, step.want)
		}
	}
}
