//go:build !race

package sim_test

// defaultSchedules is the CI budget: about 20 s on two cores.
const defaultSchedules = 10000

// defaultQuorumSchedules is the quorum simulation's CI budget: about 3
// minutes on two idle cores (a schedule runs three to five stores).
const defaultQuorumSchedules = 10000
