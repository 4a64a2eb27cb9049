// Package doccheck holds the module's tests of its documentation: every
// exported identifier of the library packages (all but package main and
// tests) has a doc comment, the struct fields included, so that go doc of
// each package reads as a guide; and every relative link of the Markdown
// pages (the README, docs/) points at a file and a heading that exist,
// every docs/ page mentioned in the code exists, and every docs/ page is
// reachable from the README. It has no code of its own.
package doccheck
