package main

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/leasehold/leasehold/lease"
)

// Exit statuses. Once the command has run, leasehold exits with the
// command's own status; its own statuses are the sysexits.h codes a
// scheduler can tell apart from the usual 0, 1 and 2 (a command that itself
// exits with one of them is indistinguishable from leasehold, except in the
// log).
const (
	exitOK = 0
	// exitUsage: bad flags, environment variables or arguments (EX_USAGE).
	exitUsage = 64
	// exitUnavailable: the store could not be reached within
	// --start-timeout, or stayed unreachable while campaigning with --once
	// (EX_UNAVAILABLE).
	exitUnavailable = 69
	// exitSteppedDown: with --once, leadership ended before the command
	// finished (lease lost, renew deadline passed, unhealthy or stalled),
	// and the command was stopped (EX_SOFTWARE).
	exitSteppedDown = 70
	// exitNotElected: with --once, another instance holds the lease
	// (EX_TEMPFAIL: try again later).
	exitNotElected = 75
	// exitRefused: leasehold break did not break the lease of a holder
	// that is alive (without --force); EX_TEMPFAIL as for exitNotElected.
	exitRefused = 75
	// exitAlreadyRan: with --once --period or --every, the lease record
	// names this period or a later one: it ran, or is running, on some
	// instance, and the command was not run here.
	exitAlreadyRan = 76
	// exitConfig: the lease cannot be used without a person's help: an
	// unknown scheme or invalid URL, a missing bucket, missing or refused
	// credentials, an object at the key that is not a lease record, a
	// store that does not keep the contract (lease.ErrUnsafeStore), an
	// address --listen cannot bind (EX_CONFIG).
	exitConfig = 78
	// exitCannotRun and exitNotFound: the command could not be started,
	// or was not found, as in a shell.
	exitCannotRun = 126
	exitNotFound  = 127
	// exitSignal + N: leasehold was stopped by signal N with --once, or
	// the command was killed by signal N.
	exitSignal = 128
)

// exitError is an error that carries leasehold's exit status. Its message,
// if not empty, is printed as one line on stderr.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// childExit is the command's own end: its exit status, or 128+N when it
// was killed by signal N.
type childExit struct {
	code   int
	signal syscall.Signal // non-zero when killed by a signal
}

func (c *childExit) Error() string {
	if c.signal != 0 {
		return fmt.Sprintf("command killed by signal %d (%v)", int(c.signal), c.signal)
	}
	return fmt.Sprintf("command exited with status %d", c.code)
}

// childExitOf turns the command's wait status into a *childExit, or nil
// for success.
func childExitOf(ws syscall.WaitStatus) error {
	switch {
	case ws.Signaled():
		return &childExit{code: exitSignal + int(ws.Signal()), signal: ws.Signal()}
	case ws.Exited() && ws.ExitStatus() == 0:
		return nil
	case ws.Exited() && ws.ExitStatus() > 0:
		return &childExit{code: ws.ExitStatus()}
	}
	return &childExit{code: 1}
}

// storeExit is the exit status for an error reaching or using the store:
// exitConfig when it needs a person, exitUnavailable when it may pass.
func storeExit(err error) int {
	if lease.Retryable(err) {
		return exitUnavailable
	}
	return exitConfig
}

// exitCode is the status main exits with after err, and the line to print
// on stderr ("" for none).
func exitCode(err error) (int, string) {
	if err == nil {
		return exitOK, ""
	}
	var ce *childExit
	if errors.As(err, &ce) {
		return ce.code, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err == nil {
			return ee.code, ""
		}
		return ee.code, ee.err.Error()
	}
	return storeExit(err), err.Error()
}
