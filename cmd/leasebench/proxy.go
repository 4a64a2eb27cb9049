package main

import (
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// countingProxy is a reverse proxy on loopback in front of a store that
// counts the requests it carries, by label. One contender's requests go
// through one proxy, so its counts are that contender's.
type countingProxy struct {
	url   string
	srv   *http.Server
	label func(*http.Request) string

	mu sync.Mutex
	n  map[string]int
}

// proxyTransport carries every proxy's requests to its store. It keeps up
// to proxyIdlePerHost idle connections to a store, where http's default
// keeps 2 for all the proxies together: a fleet's bursts of parallel
// requests (the KCL-style baseline's scans) would otherwise open a new
// connection for nearly every request and, over a long steady run, use up
// the loopback's ephemeral ports in TIME_WAIT.
var proxyTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = proxyIdlePerHost
	return t
}()

// proxyIdlePerHost is how many idle connections proxyTransport keeps to
// one store.
const proxyIdlePerHost = 512

// newCountingProxy starts a proxy to target, whose requests label names.
func newCountingProxy(target string, label func(*http.Request) string) (*countingProxy, error) {
	p := &countingProxy{label: label, n: map[string]int{}}
	var err error
	p.url, p.srv, err = startProxy(target, func(r *http.Request) {
		p.mu.Lock()
		p.n[p.label(r)]++
		p.mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// startProxy starts a reverse proxy on loopback to target, which calls
// seen with each request before carrying it, and returns its URL. It keeps
// the request's Host header, which AWS signatures cover.
func startProxy(target string, seen func(*http.Request)) (string, *http.Server, error) {
	to, err := url.Parse(target)
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.Host = r.In.Host
		},
		ErrorLog:  discardLog,
		Transport: proxyTransport,
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen(r)
		rp.ServeHTTP(w, r)
	})}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return "http://" + ln.Addr().String(), srv, nil
}

// take returns the counts since the last take, and resets them.
func (p *countingProxy) take() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := maps.Clone(p.n)
	clear(p.n)
	return n
}

func (p *countingProxy) close() { _ = p.srv.Close() }
