//go:build chaos

package chaos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// toxiproxy is a client of toxiproxy's HTTP API (v2.5.0): just the calls
// the chaos test makes.
type toxiproxy struct {
	url string
	hc  *http.Client
}

func newToxiproxy(url string) *toxiproxy {
	return &toxiproxy{url: strings.TrimSuffix(url, "/"), hc: &http.Client{Timeout: 10 * time.Second}}
}

func (tp *toxiproxy) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, tp.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tp.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy: %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// proxy creates a proxy to upstream on a free loopback port and returns
// the address it listens on. It is deleted when the test ends. Proxies are
// global to the toxiproxy server: name must be unique.
func (tp *toxiproxy) proxy(t *testing.T, name, upstream string) string {
	t.Helper()
	var p struct {
		Listen string `json:"listen"`
	}
	if err := tp.do(http.MethodPost, "/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tp.do(http.MethodDelete, "/proxies/"+name, nil, nil) })
	return p.Listen
}

// enable turns a proxy on or off; off closes its connections and refuses
// new ones: the contender behind it is cut off from the store.
func (tp *toxiproxy) enable(name string, on bool) error {
	return tp.do(http.MethodPost, "/proxies/"+name, map[string]any{"enabled": on}, nil)
}

// toxic adds a toxic to a proxy.
func (tp *toxiproxy) toxic(proxy, name, typ, stream string, attributes map[string]int) error {
	return tp.do(http.MethodPost, "/proxies/"+proxy+"/toxics", map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attributes,
	}, nil)
}

func (tp *toxiproxy) removeToxic(proxy, name string) error {
	return tp.do(http.MethodDelete, "/proxies/"+proxy+"/toxics/"+name, nil, nil)
}
