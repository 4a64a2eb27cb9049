// Command cabundle writes the Mozilla root certificates that
// golang.org/x/crypto/x509roots/fallback/bundle holds, at the version
// go.mod pins, as one PEM file on its standard output: the container
// image's /etc/ssl/certs/ca-certificates.crt, the first file Go's
// crypto/x509 reads on Linux (scripts/image and the Dockerfile run it).
//
//	go run ./scripts/cabundle >ca-certificates.crt
//
// Roots that Mozilla trusts only until a date (a constraint of the
// bundle, which a PEM file cannot carry) are left out, as Debian's
// ca-certificates leaves out the roots it no longer trusts for TLS. The
// same go.mod gives the same bytes.
package main

import (
	"bufio"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

func main() {
	if err := write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cabundle:", err)
		os.Exit(1)
	}
}

// write writes the bundle's unconstrained roots to w as PEM, each after
// a comment naming its subject.
func write(w io.Writer) error {
	b := bufio.NewWriter(w)
	for root := range bundle.Roots() {
		if root.Constraint != nil {
			continue
		}
		cert, err := x509.ParseCertificate(root.Certificate)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "# %s\n", cert.Subject)
		if err := pem.Encode(b, &pem.Block{Type: "CERTIFICATE", Bytes: root.Certificate}); err != nil {
			return err
		}
	}
	return b.Flush()
}
