package main

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/runner"
)

// curveRow is one point of the cost/failover curve: how a follower polls
// or reads, what that costs in requests, and the crash failover it buys.
type curveRow struct {
	who, setting string
	follower     map[string]float64 // requests per hour at the default TTL
	failover     []time.Duration
	ttl          time.Duration
	err          error
}

// curveVariants are the points measured for leasehold: followers reading
// just after the holder's renewals, and once between, at four renew
// intervals, the default among them; 7/16 of the TTL is the longest that
// leaves a renew deadline above it and a sixteenth of the TTL for drift.
func curveVariants(ttl time.Duration) []struct {
	who, setting string
	v            variant
} {
	type point = struct {
		who, setting string
		v            variant
	}
	var out []point
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"TTL/6", ttl / 6}, {"TTL/4", ttl / 4}, {"3/8 TTL (default)", runner.DefaultRenewInterval(ttl)}, {"7/16 TTL", ttl * 7 / 16}} {
		out = append(out, point{"leasehold", "renew every " + f.name, variant{renew: f.d}})
	}
	return out
}

// benchCurve measures the curve's leasehold points on st, trials trials
// each and requests counted for countFor, one point after another.
func benchCurve(ctx context.Context, st *store, n, parallel int, countFor time.Duration) []curveRow {
	var rows []curveRow
	for _, p := range curveVariants(st.ttl) {
		progress("curve: %s, %s: %d crash failovers, requests for %v", p.who, p.setting, n, countFor)
		row := curveRow{who: p.who, setting: p.setting, ttl: st.ttl}
		var err error
		if row.failover, _, err = trials(ctx, n, parallel, func(ctx context.Context) (time.Duration, error) { return failoverTrial(ctx, st, p.v, warmed) }); err == nil {
			_, row.follower, _, err = requestRates(ctx, st, countFor, p.v)
		}
		row.err = err
		rows = append(rows, row)
		if ctx.Err() != nil {
			break
		}
	}
	return rows
}

func (r curveRow) cells() []string {
	if r.err != nil {
		return []string{r.who, r.setting, "FAILED: " + r.err.Error(), "", ""}
	}
	q := func(at float64) string { return ratioTo(r.ttl)(quantile(r.failover, at)) }
	return []string{r.who, r.setting, fmt.Sprintf("%.0f", total(r.follower)), q(.5), q(.99)}
}
