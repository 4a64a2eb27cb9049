//go:build race

package sim_test

// defaultSchedules is the budget of a run under the race detector, which
// is six times slower: scripts/test runs the full budget without it.
const defaultSchedules = 1000
