package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
)

// countingProxy is a reverse proxy on loopback in front of a store that
// counts the requests it carries, by label. One contender's requests go
// through one proxy, so its counts are that contender's. It keeps the
// request's Host header, which AWS signatures cover. It also shields the
// store from requests cut off mid-body (a client killed while sending,
// such as the peer's node processes): it reads each request whole before
// forwarding it, and then forwards it to the end. dynalite 4.0.0 dies of
// such a request (an unhandled "aborted" error).
type countingProxy struct {
	url   string
	srv   *http.Server
	label func(*http.Request) string

	mu sync.Mutex
	n  map[string]int
}

// newCountingProxy starts a proxy to target, whose requests label names.
func newCountingProxy(target string, label func(*http.Request) string) (*countingProxy, error) {
	to, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{url: "http://" + ln.Addr().String(), label: label, n: map[string]int{}}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(to)
			r.Out.Host = r.In.Host
		},
		ErrorLog: discardLog,
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return // cut off mid-body: the store never hears of it
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		p.mu.Lock()
		p.n[p.label(r)]++
		p.mu.Unlock()
		rp.ServeHTTP(w, r.WithContext(context.WithoutCancel(r.Context())))
	})}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return p, nil
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
