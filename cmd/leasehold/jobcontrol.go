//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasehold/leasehold/runner"
)

// followJobControl makes a job-control stop (SIGTSTP from Ctrl-Z, SIGTTIN
// and SIGTTOU when leasehold runs in the background and its terminal
// stops it) stop the command's process group with leasehold, until the
// returned function is called. Without it the command, which runs in a
// process group of its own, would run on while leasehold stood still: no
// renewals, no step-down, no kill, and after the TTL another instance's
// command beside it. As process 1 (a container's entry point) leasehold
// is never stopped, as the kernel stops no init, and it ignores them: the
// command runs on under a lease that stays renewed.
func (s *supervisor) followJobControl() (stop func()) {
	stops, conts := make(chan os.Signal, 1), make(chan os.Signal, 1)
	signal.Notify(stops, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	signal.Notify(conts, syscall.SIGCONT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-stops:
				if os.Getpid() == 1 {
					s.log.Info("job control ignored: leasehold is process 1, which the kernel does not stop", "signal", sig.String())
					continue
				}
				s.suspend(sig.(syscall.Signal), func() { stopSelf(conts) })
			}
		}
	}()
	return func() {
		signal.Stop(stops)
		signal.Stop(conts)
		close(done)
	}
}

// stopSelf stops leasehold, as a job-control signal's default action
// would, and returns once it has been continued (fg, bg, SIGCONT): conts
// is told of SIGCONT. The SIGSTOP is sent to the process, which the kernel
// may stop a moment after kill returns (Linux stops the thread that takes
// the signal first, and the others after it): the SIGCONT that continues
// leasehold is what says it was stopped.
func stopSelf(conts <-chan os.Signal) {
	for len(conts) > 0 { // a SIGCONT from before this stop
		<-conts
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
	<-conts
}

// suspend stops the commands' process groups (SIGSTOP), then leasehold.
// Once leasehold is continued it judges each command's term as for any
// pause: a command is continued only if its term is still within its renew
// deadline (and the lease short of its kill deadline); otherwise it stays
// stopped, and the step-down that follows kills it (SIGKILL reaches a
// stopped process; a SIGTERM is followed by SIGCONT). A command never
// runs while leasehold is stopped, nor after it resumes past its term.
// (With --shards a command's deadlines are the earliest of the leases its
// shard rests on: the worker's liveness, and its assigner lease while it
// is the group's assigner; see runner.Joint.)
func (s *supervisor) suspend(sig syscall.Signal, stopSelf func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := range s.running { // every group stopped before any log line
		r.c.signal(syscall.SIGSTOP)
	}
	for r := range s.running {
		s.log.Warn("stopped by job control: the command's process group is stopped too", "signal", sig.String(), "pid", r.c.pid)
	}
	if len(s.running) == 0 {
		s.log.Info("stopped by job control", "signal", sig.String())
	}
	stoppedAt := time.Now()
	stopSelf()
	paused := time.Since(stoppedAt).Round(time.Millisecond)
	if len(s.running) == 0 {
		s.log.Info("continued", "stopped_for", paused)
		return
	}
	for r := range s.running {
		s.resume(r, paused)
	}
}

// resume continues r's command after a job-control stop of paused, if its
// term is still within its deadlines.
func (s *supervisor) resume(r *running, paused time.Duration) {
	until := runner.Deadline(r.ctx)
	if kill := runner.Expiry(r.ctx).Add(-s.margin); kill.Before(until) {
		until = kill
	}
	if !time.Now().Before(until) {
		s.log.Warn("continued past the term's deadline: the command stays stopped until it is killed",
			"stopped_for", paused, "pid", r.c.pid, "deadline_passed", time.Since(until).Round(time.Millisecond))
		return
	}
	r.c.signal(syscall.SIGCONT)
	s.log.Info("continued: the command too, its term still runs", "stopped_for", paused, "pid", r.c.pid,
		"deadline_in", time.Until(until).Round(time.Millisecond))
}
