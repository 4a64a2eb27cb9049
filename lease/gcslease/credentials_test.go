package gcslease

import (
	"errors"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestEmulatorEndpoint: STORAGE_EMULATOR_HOST is host:port, reached over
// plain HTTP, or a URL with its scheme, as the Cloud Storage client
// libraries read it; anything else is refused, naming the variable.
func TestEmulatorEndpoint(t *testing.T) {
	for host, want := range map[string]string{
		"127.0.0.1:4443":          "http://127.0.0.1:4443/storage/v1/",
		"http://127.0.0.1:4443":   "http://127.0.0.1:4443/storage/v1/",
		"https://gcs.example:443": "https://gcs.example:443/storage/v1/",
	} {
		if got, err := emulatorEndpoint(host); got != want || err != nil {
			t.Errorf("emulatorEndpoint(%q) = %q, %v; want %q", host, got, err, want)
		}
	}
	for _, host := range []string{"http://", "http://%zz:1"} {
		_, err := emulatorEndpoint(host)
		if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "STORAGE_EMULATOR_HOST ("+`"`+host+`"`+")") {
			t.Errorf("emulatorEndpoint(%q): %v, want lease.ErrInvalid naming STORAGE_EMULATOR_HOST and its value", host, err)
		}
	}
}
