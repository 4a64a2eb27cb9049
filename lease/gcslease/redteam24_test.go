package gcslease

import (
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestRedTeam24EmulatorHostWithEmptyPortOrQueryRefused (emulatorEndpoint's
// doc: STORAGE_EMULATOR_HOST is "host:port, ... or a URL with its scheme
// (http or https) and nothing after its host but "/" ... Anything else is
// refused here, naming the variable: ... a path or query, a port out of
// range"; rule 8: bad input gets a clear error). A value cut short or
// pasted with a stray character is accepted instead: "localhost:" (the
// port left empty; the client then dials port 80, not the emulator), and
// a trailing "?" (an empty query), which emulatorEndpoint keeps in the
// endpoint it builds (".../storage/v1/?").
func TestRedTeam24EmulatorHostWithEmptyPortOrQueryRefused(t *testing.T) {
	for _, host := range []string{"localhost:", "http://localhost:", "127.0.0.1:4443?", "http://127.0.0.1:4443/?"} {
		got, err := emulatorEndpoint(host)
		if !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("emulatorEndpoint(%q) = %q, %v; want lease.ErrInvalid naming STORAGE_EMULATOR_HOST and its value", host, got, err)
		}
	}
}
