// Package urlfuzz has no code: its test fuzzes lease.Open with every
// backend's URL scheme registered (mem, s3, dynamodb, azblob, gs), which no
// backend's own tests, nor package lease's, can do without changing the
// set of schemes their other tests see. See fuzz_test.go.
package urlfuzz
