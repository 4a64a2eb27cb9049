//go:build unix && !linux && !darwin

package main

// processTable is nil on the BSDs, which leasehold does not ship for: a
// command's processes are reached through its process group only.
func processTable() map[int]procInfo { return nil }
