//go:build unix

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealthCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusNoContent)
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/slow":
			<-r.Context().Done()
		default:
			http.Error(w, "database down", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name     string
		cmd, url string
		want     string // "" for healthy
	}{
		{"command succeeds", "true", "", ""},
		{"command fails", "echo out of disk >&2; exit 2", "", "out of disk"},
		{"command hangs", "sleep 30", "", "no answer in time"},
		{"URL answers 2xx", "", srv.URL + "/ok", ""},
		{"URL answers 503", "", srv.URL + "/sick", "503 Service Unavailable: database down"},
		{"URL redirects", "", srv.URL + "/moved", "302 Found"},
		{"URL hangs", "", srv.URL + "/slow", "context deadline exceeded"},
		{"both, URL fails", "true", srv.URL + "/sick", "503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			began := time.Now()
			err := healthCheck(tc.cmd, tc.url, nil)(ctx)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unhealthy: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Fatalf("the check took %v, past its timeout", took)
			}
		})
	}
	if healthCheck("", "", nil) != nil {
		t.Fatal("healthCheck without a command or URL is not nil")
	}
}
