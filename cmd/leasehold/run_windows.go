package main

import "context"

// cmdRun is not available on Windows: leasehold run stops its command by
// signalling the command's process group, which Windows does not have.
// status, break and version work there, for operators.
func cmdRun(context.Context, <-chan struct{}, []string, *environment) error {
	return exitf(exitUsage, "run: not available on Windows (it stops the command through a Unix process group); status, break and version are")
}
