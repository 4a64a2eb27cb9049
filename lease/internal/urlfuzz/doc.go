// Package urlfuzz has no code: its tests fuzz lease.Open with every
// backend's URL scheme registered (mem, s3, dynamodb, azblob, gs), and
// check every scheme's openers (lease.Open, shard.OpenStore) against a
// query they cannot parse, which no backend's own tests, nor package
// lease's, can do without changing the set of schemes their other tests
// see. See fuzz_test.go and query_test.go.
package urlfuzz
