// Package mixed has no code: its tests run the conformance suite
// (lease/leasetest), unchanged, on quorums whose members are the local test
// stack's emulators of different clouds (MinIO + dynalite +
// fake-gcs-server, and Azurite + MinIO + moto), built with quorumlease.New
// and opened from a "quorum:" URL with lease.Open. They live apart from
// package quorumlease's own tests, which must not link every cloud's SDK
// nor see every backend's URL scheme registered. See conformance_test.go.
package mixed
