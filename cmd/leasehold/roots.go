package main

// The Mozilla root certificates, bundled into the binary and used only
// where the system has none (the container image, FROM scratch, has no
// /etc/ssl): leasehold reaches S3, DynamoDB, Cloud Storage and Azure over
// TLS anywhere.
import _ "golang.org/x/crypto/x509roots/fallback"
