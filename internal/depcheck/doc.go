// Package depcheck holds the module's test of what each library package
// links: lease, runner, shard and the backends that need no SDK link no
// cloud's SDK and no gRPC, and each cloud backend links its own cloud's SDK
// and no other's, so that a program that imports one backend pays for
// that cloud alone (the weight of every cloud is the CLI's, which links
// them all). No package, the CLI included, links a gRPC transport of
// Cloud Storage (the storage library, xDS, ALTS, OpenTelemetry's SDK):
// the Cloud Storage backend speaks the JSON API over HTTP. The CLI built
// with the release's build tags (scripts/release-tags) imports no
// golang.org/x/net/trace, whose reflect-driven templates keep every
// exported method of every type in the binary; and no package of the
// module allocates more than 4 KB in its init, which every process runs
// before its first request. It has no code of its own.
package depcheck
