// Package doccheck holds one test: every exported identifier of the
// module's library packages (all but package main and tests) has a doc
// comment, the struct fields included, so that go doc of each package
// reads as a guide. It has no code of its own.
package doccheck
