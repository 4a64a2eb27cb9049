// Package sim is a seeded simulation of the lease engine, the runner and
// the schedule (see sim_test.go).
package sim
