//go:build race

package sim_test

// defaultSchedules is the budget of a run under the race detector, which
// is six times slower: scripts/test runs the full budget without it.
const defaultSchedules = 1000

// defaultQuorumSchedules is the quorum simulation's budget under the race
// detector: scripts/test runs the full budget without it.
const defaultQuorumSchedules = 200
