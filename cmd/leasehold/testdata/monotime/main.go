//go:build linux

// Command monotime prints CLOCK_MONOTONIC in nanoseconds: the one clock
// all processes on a machine share, for the end-to-end tests' journal.
package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func main() {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		fmt.Fprintln(os.Stderr, "monotime:", err)
		os.Exit(1)
	}
	fmt.Println(ts.Nano())
}
