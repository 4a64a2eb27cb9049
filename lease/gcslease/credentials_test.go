package gcslease

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/lease/driver"
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

// TestCredentialsNameTheEmulatorOpenUsed: leasehold check reports where a
// lease's credentials come from; with STORAGE_EMULATOR_HOST set at Open,
// the lease reaches that emulator without credentials whatever the
// variable says later, and Credentials says so, with the value Open used.
// It read the variable again and named whatever it held then, or, unset,
// went looking for Application Default Credentials the lease never uses.
func TestCredentialsNameTheEmulatorOpenUsed(t *testing.T) {
	t.Setenv(emulatorHostEnv, "127.0.0.1:4443")
	l, err := Open(t.Context(), Options{Bucket: "bucket", Object: "lease"}, lease.Options{Identity: "worker-1", TTL: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(emulatorHostEnv, "")
	source, err := l.(driver.CredentialSource).Credentials(t.Context())
	if err != nil || !strings.Contains(source, "STORAGE_EMULATOR_HOST=127.0.0.1:4443") {
		t.Errorf("Credentials after Open with STORAGE_EMULATOR_HOST=127.0.0.1:4443, the variable since unset: %q, %v; want the emulator Open used", source, err)
	}
}
