//go:build chaos && race

package chaos_test

// raceEnabled: this test runs with the race detector, and so do the
// contenders it builds.
const raceEnabled = true
