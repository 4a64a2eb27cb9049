package main

// The CLI reference, docs/cli.md, is written from the flag definitions and
// the help texts (cliReference in clidoc_test.go); TestCLIReference fails
// when it is not what they make it now.
//go:generate go test -run TestCLIReference . -args -update-cli-reference
