package runner

import (
	"context"
	"fmt"
	"time"
)

// watchHealth polls HealthCheck every HealthInterval and watches for task
// progress, and ends the term as Unhealthy after HealthThreshold failures
// in a row or StallTimeout without progress. Without either it returns at
// once.
func (r *Runner) watchHealth(ctx context.Context, st *leadership, stopTerm context.CancelCauseFunc) {
	if r.cfg.HealthCheck == nil && r.cfg.StallTimeout == 0 {
		return
	}
	var tick, stalled <-chan time.Time
	if r.cfg.HealthCheck != nil {
		ticker := time.NewTicker(r.cfg.HealthInterval)
		defer ticker.Stop()
		tick = ticker.C
	}
	var stall *time.Timer
	if r.cfg.StallTimeout > 0 {
		stall = time.NewTimer(r.cfg.StallTimeout)
		defer stall.Stop()
		stalled = stall.C
	}
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.progress:
			if stall != nil {
				stall.Reset(r.cfg.StallTimeout)
			}
		case <-stalled:
			stopTerm(&stepDown{reason: Unhealthy, err: fmt.Errorf("runner: no progress for %v (StallTimeout)", r.cfg.StallTimeout)})
			return
		case <-tick:
			err := r.check(ctx)
			if err == nil {
				failures = 0
				continue
			}
			failures++
			// The step-down first, logged after: a Logger may block.
			last := failures >= r.cfg.HealthThreshold
			if last {
				stopTerm(&stepDown{reason: Unhealthy, err: fmt.Errorf("runner: health check failed %d times in a row: %w", failures, err)})
			}
			r.cfg.Logger.Warn("health check failed", "failures", failures, "threshold", r.cfg.HealthThreshold, "err", err)
			if last {
				return
			}
		}
	}
}

// check runs HealthCheck bounded by HealthTimeout. A check that does not
// return in time has failed, and is left to finish on its own.
func (r *Runner) check(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, r.cfg.HealthTimeout)
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- r.cfg.HealthCheck(cctx) }()
	select {
	case err := <-result:
		return err
	case <-cctx.Done():
		return fmt.Errorf("runner: health check gave no answer within HealthTimeout (%v)", r.cfg.HealthTimeout)
	}
}
