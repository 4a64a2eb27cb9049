package gcslease

import (
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam25EmulatorHostWithBareFragmentRefused (emulatorEndpoint's
// doc since b926b74: STORAGE_EMULATOR_HOST is host:port or a URL "with
// ... nothing after its host but "/" ... Anything else is refused here,
// naming the variable: ... a path or query (even an empty one)"). b926b74
// refuses a bare '?' through url.URL.ForceQuery, but a bare '#' (an empty
// fragment) leaves url.URL.Fragment empty too and has no such flag: the
// value is accepted, and Credentials then names the emulator with the
// stray '#' in it. A value pasted with a stray '#' is the same mistake as
// one with a stray '?'.
func TestRedTeam25EmulatorHostWithBareFragmentRefused(t *testing.T) {
	for _, host := range []string{"127.0.0.1:4443#", "http://127.0.0.1:4443#", "http://127.0.0.1:4443/#"} {
		got, err := emulatorEndpoint(host)
		if !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("emulatorEndpoint(%q) = %q, %v; want lease.ErrInvalid naming STORAGE_EMULATOR_HOST and its value", host, got, err)
		}
	}
}
