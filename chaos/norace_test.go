//go:build chaos && !race

package chaos_test

// raceEnabled: this test runs without the race detector, and so do the
// contenders it builds.
const raceEnabled = false
