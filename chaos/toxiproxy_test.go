//go:build chaos

package chaos_test

import (
	"testing"

	tpapi "github.com/leasehold/leasehold/internal/toxiproxy"
)

// toxiproxy is the client of toxiproxy's HTTP API (internal/toxiproxy),
// with the test's proxies deleted when it ends.
type toxiproxy struct{ *tpapi.Client }

func newToxiproxy(url string) *toxiproxy { return &toxiproxy{tpapi.New(url)} }

// proxy creates a proxy to upstream on a free loopback port and returns
// the address it listens on. It is deleted when the test ends. Proxies are
// global to the toxiproxy server: name must be unique.
func (tp *toxiproxy) proxy(t *testing.T, name, upstream string) string {
	t.Helper()
	listen, err := tp.Create(name, upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.Delete(name) })
	return listen
}

// enable turns a proxy on or off (Client.Enable).
func (tp *toxiproxy) enable(name string, on bool) error { return tp.Enable(name, on) }

// toxic adds a toxic to a proxy (Client.AddToxic).
func (tp *toxiproxy) toxic(proxy, name, typ, stream string, attributes map[string]int) error {
	return tp.AddToxic(proxy, name, typ, stream, attributes)
}

func (tp *toxiproxy) removeToxic(proxy, name string) error { return tp.RemoveToxic(proxy, name) }
