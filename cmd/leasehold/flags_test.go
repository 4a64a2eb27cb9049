//go:build unix

package main

import "testing"

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"lease": "LEASEHOLD_LEASE", "health-url": "LEASEHOLD_HEALTH_URL", "progress-on-stdout": "LEASEHOLD_PROGRESS_ON_STDOUT",
	} {
		if got := envName(flag); got != want {
			t.Errorf("envName(%q) = %q, want %q", flag, got, want)
		}
	}
}
