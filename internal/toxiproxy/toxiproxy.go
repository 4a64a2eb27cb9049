// Package toxiproxy is a client of toxiproxy's HTTP API (v2.5.0), with
// just the calls leasehold makes: a proxy on loopback in front of a store,
// which a test or a benchmark disables (the store refuses connections),
// or to which it adds a toxic (requests hang, answers are delayed,
// connections are reset), and then heals. The chaos tests cut contenders
// off from a store with it, and leasebench a quorum's member.
package toxiproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls one toxiproxy server. Its proxies are global to the
// server: their names must be unique among everything that uses it.
type Client struct {
	url string
	hc  *http.Client
}

// New returns a client of the toxiproxy server whose API is at url
// (LEASEHOLD_TOXIPROXY_URL: http://127.0.0.1:8474).
func New(url string) *Client {
	return &Client{url: strings.TrimSuffix(url, "/"), hc: &http.Client{Timeout: 10 * time.Second}}
}

func (c *Client) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
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

// Create creates the proxy called name to upstream (HOST:PORT), enabled,
// on a free loopback port, and returns the address it listens on
// (127.0.0.1:PORT).
func (c *Client) Create(name, upstream string) (string, error) {
	var p struct {
		Listen string `json:"listen"`
	}
	if err := c.do(http.MethodPost, "/proxies", map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}, &p); err != nil {
		return "", err
	}
	return p.Listen, nil
}

// Delete deletes the proxy called name, closing its connections.
func (c *Client) Delete(name string) error {
	return c.do(http.MethodDelete, "/proxies/"+name, nil, nil)
}

// Enable turns a proxy on or off; off closes its connections and refuses
// new ones: whoever reaches the store through it is cut off.
func (c *Client) Enable(name string, on bool) error {
	return c.do(http.MethodPost, "/proxies/"+name, map[string]any{"enabled": on}, nil)
}

// AddToxic adds the toxic called name, of type typ ("timeout", "latency",
// "reset_peer") on stream ("upstream": requests; "downstream": answers),
// to a proxy, for every connection, with the type's attributes ("timeout"
// 0 holds the data until the toxic is removed).
func (c *Client) AddToxic(proxy, name, typ, stream string, attributes map[string]int) error {
	return c.do(http.MethodPost, "/proxies/"+proxy+"/toxics", map[string]any{
		"name": name, "type": typ, "stream": stream, "toxicity": 1.0, "attributes": attributes,
	}, nil)
}

// RemoveToxic removes the toxic called name from a proxy.
func (c *Client) RemoveToxic(proxy, name string) error {
	return c.do(http.MethodDelete, "/proxies/"+proxy+"/toxics/"+name, nil, nil)
}
