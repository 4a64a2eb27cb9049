//go:build unix

package main

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/shard"
)

// runShards is leasehold run --shards, and --holders: it joins the group
// at the --lease prefix and runs one command per shard this instance owns
// (with --holders, per slot: one at most), each started and stopped as
// the single command is for a term, until stopped.
func runShards(ctx context.Context, hurry <-chan struct{}, o *runOptions, env *environment, log *slog.Logger) error {
	g, err := openGroup(ctx, o.lease, o.leaseOptions(), o.startTimeout, log)
	if err != nil {
		return stoppedEarly(ctx, o, err)
	}
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	s := newSession(o, env, hurry, log, stopRun)
	s.sup.leading = nil // a shard's command is no lease's leader: /leader answers for the assigner
	defer s.sup.followJobControl()()
	w, err := shard.New(s.shardConfig(g))
	if err != nil {
		return usageError("run", err)
	}
	s.state.owned, s.state.assigner = w.Owned, w.Assigner
	s.state.m.addShards(o.shards, w.Owned, w.Assigner)
	if o.listen != "" {
		stop, err := s.state.serve(ctx, o.listen, log)
		if err != nil {
			return exitf(exitConfig, "run: --listen %s: %v", o.listen, err)
		}
		defer stop()
	}
	err = w.Run(runCtx)
	if f := s.fatal.Load(); f != nil {
		return f
	}
	if errors.Is(err, lease.ErrInvalid) { // the group's N, cap, TTL or renew interval differ
		return exitf(exitConfig, "run: %s%v", groupFlagOf(o, err), err)
	}
	if err != nil {
		return exitf(storeExit(err), "run: %v", err)
	}
	return nil
}

// shardConfig is the shard worker's configuration for the flags, on group g.
func (s *session) shardConfig(g group) shard.Config {
	o, t := s.o, s.o.timing
	return shard.Config{
		Store:           g.store,
		Group:           g.name,
		Shards:          o.shards,
		MaxPerWorker:    o.perWorker(),
		Identity:        o.identity,
		Run:             s.runShard,
		TTL:             t.LeaseOptions.TTL,
		RenewInterval:   t.RenewInterval,
		RenewDeadline:   t.RenewDeadline,
		CallTimeout:     t.LeaseOptions.CallTimeout,
		HealthCheck:     healthCheck(o.healthCmd, o.healthURL, s.sup.env),
		HealthInterval:  o.healthInterval,
		HealthTimeout:   o.healthTimeout,
		HealthThreshold: o.healthThreshold,
		StallTimeout:    o.stallTimeout,
		// As for one lease: renew through the grace period and the kill,
		// and a TTL more as a backstop for a command that does not die.
		DrainTimeout: o.grace + o.ttl,
		OnEvent:      s.shardEvent,
		OnSettled:    s.state.m.settled,
		OnRenew:      s.state.m.renewed,
		Logger:       s.log,
	}
}

// runShard is the worker's Run: the command for one start of shard sh,
// with the shard in its environment (LEASEHOLD_SHARD and LEASEHOLD_SHARDS,
// or with --holders LEASEHOLD_SLOT and LEASEHOLD_SLOTS). The shard is released once it
// returns, after the command exited. A command that cannot be started
// ends the run; one that exits by itself too, with its status, as without
// --shards: the other shards' commands are stopped and every shard
// released, to run elsewhere. The run ends at the worker's report of the
// shard's end (shardEvent), not here: ended before runShard returned, the
// run would have cancelled the shard's context, and the worker would
// count a command that exited by itself as revoked.
func (s *session) runShard(ctx context.Context, sh shard.Shard) error {
	err := s.sup.supervise(ctx, job{
		token: sh.Epoch,
		vars:  shardVars(s.o, sh),
		log:   s.log.With("identity", s.o.identity, unit(s.o.groupFlag()), sh.Index),
	})
	var ee *exitError
	switch {
	case errors.As(err, &ee):
	case ctx.Err() != nil:
		return err
	default:
		code, _ := exitCode(err)
		ee = &exitError{code: code}
	}
	s.ending.CompareAndSwap(nil, &endingShard{shard: sh, err: ee})
	return err
}

// groupFlagOf is optionFlag for an error of the group's worker: the
// group's N and cap (Shards, MaxPerWorker) are --holders' with --holders,
// and a cap that differs says which kind of group it is.
func groupFlagOf(o *runOptions, err error) string {
	var oe *lease.OptionError
	if !errors.As(err, &oe) {
		return ""
	}
	switch {
	case oe.Field == "MaxPerWorker" && o.holders > 0:
		return "--holders: the group is one of --shards (no cap on an instance's shards), not of --holders: "
	case oe.Field == "MaxPerWorker":
		return "--shards: the group is one of --holders (a slot per instance), not of --shards: "
	case oe.Field == "Shards" && o.holders > 0:
		return "--holders: "
	}
	return optionFlag(err)
}

// shardVars are the variables that tell the command of sh which it is:
// LEASEHOLD_SHARD and LEASEHOLD_SHARDS, or with --holders LEASEHOLD_SLOT and
// LEASEHOLD_SLOTS.
func shardVars(o *runOptions, sh shard.Shard) []string {
	name := "LEASEHOLD_SHARD"
	if o.holders > 0 {
		name = "LEASEHOLD_SLOT"
	}
	return []string{name + "=" + strconv.Itoa(sh.Index), name + "S=" + strconv.Itoa(o.shards)}
}

// endingShard is the start of a shard whose command ends the run (see
// runShard), with leasehold's exit.
type endingShard struct {
	shard shard.Shard
	err   *exitError
}

// shardEvent is the worker's OnEvent: it counts e, and ends the run with
// the exit of the shard whose command ends it (runShard) at that shard's
// end, reported as ended, or as revoked or lost when the worker stopped
// the shard as its command exited.
func (s *session) shardEvent(e shard.Event) {
	s.state.m.shardEvent(e)
	if end := s.ending.Load(); end != nil && e.Kind != shard.Assigned && e.Shard == end.shard {
		s.fatal.CompareAndSwap(nil, end.err)
		s.stopRun(end.err)
	}
}
