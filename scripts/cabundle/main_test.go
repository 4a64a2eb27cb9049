package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// TestWrite checks that the PEM file holds every unconstrained root of
// the bundle, each once, in a form crypto/x509 loads as a root pool.
func TestWrite(t *testing.T) {
	var out bytes.Buffer
	if err := write(&out); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for root := range bundle.Roots() {
		if root.Constraint == nil {
			want[string(root.Certificate)] = true
		}
	}
	if len(want) < 100 {
		t.Fatalf("the bundle has %d unconstrained roots, want over 100", len(want))
	}
	got := map[string]bool{}
	for rest := out.Bytes(); ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if got[string(block.Bytes)] {
			t.Errorf("a root appears twice")
		}
		got[string(block.Bytes)] = true
		if !want[string(block.Bytes)] {
			t.Errorf("a root that is not an unconstrained one of the bundle")
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d roots written, want %d", len(got), len(want))
	}
	if !x509.NewCertPool().AppendCertsFromPEM(out.Bytes()) {
		t.Error("crypto/x509 loads no certificate from the file")
	}
}
