//go:build unix

package main

import "testing"

func TestOneLine(t *testing.T) {
	msg := "azurelease: HEAD http://x/c/b\n--------\nRESPONSE 404: 404 Not Found\nERROR CODE: ContainerNotFound\n--------\n"
	if got, want := oneLine(msg), "azurelease: HEAD http://x/c/b | RESPONSE 404: 404 Not Found | ERROR CODE: ContainerNotFound"; got != want {
		t.Fatalf("oneLine = %q, want %q", got, want)
	}
}
