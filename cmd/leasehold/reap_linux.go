//go:build linux && !leasehold_portable

package main

// Linux's refinement of the supervision path (see child). Built with -tags
// leasehold_portable, leasehold supervises its command on Linux as it does
// on the other Unix systems (macOS, the BSDs), without waitid's WNOWAIT:
// scripts/test runs the supervision tests so, so that the path the other
// platforms ship is tested in CI.
func init() { exitedUnreaped, exitedNow = waitExited, hasExited }
