//go:build !race

package sim_test

// defaultSchedules is the CI budget: about 20 s on two cores.
const defaultSchedules = 10000
