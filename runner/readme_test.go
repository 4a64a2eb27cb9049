package runner_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The README's first Go block is a whole program; Example_leader is that
// program's main as a compiled example, and runner's package doc shows the
// program too. A change to one of them that the others do not follow
// fails here.
func TestREADMEFirstProgram(t *testing.T) {
	readme := readFile(t, "../README.md")
	_, block, ok := strings.Cut(readme, "```go\n")
	if !ok {
		t.Fatal("README.md has no ```go block")
	}
	block, _, _ = strings.Cut(block, "```\n")
	program := parse(t, "README.md's first Go block", block)
	example := parse(t, "example_leader_test.go", readFile(t, "example_leader_test.go"))

	if got, want := imports(program.file), imports(example.file); !slices.Equal(got, want) {
		t.Errorf("README.md's first program imports %q, Example_leader's file %q", got, want)
	}
	if got, want := program.body(t, "main"), example.body(t, "Example_leader"); got != want {
		t.Errorf("README.md's first program's main differs from Example_leader:\n%s\nwant:\n%s", got, want)
	}

	var doc strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(block, "\n"), "\n") {
		if line == "\n" {
			doc.WriteString("//\n")
		} else {
			doc.WriteString("//\t" + line)
		}
	}
	if !strings.Contains(readFile(t, "doc.go"), doc.String()) {
		t.Errorf("runner's package doc (doc.go) does not show README.md's first program; want it to hold:\n%s", doc.String())
	}
}

type source struct {
	fset *token.FileSet
	file *ast.File
	src  string
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parse(t *testing.T, name, src string) source {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return source{fset, f, src}
}

func imports(f *ast.File) []string {
	var paths []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// body returns the source text of the body of the function named name.
func (s source) body(t *testing.T, name string) string {
	t.Helper()
	for _, d := range s.file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			return s.src[s.fset.Position(fn.Body.Lbrace).Offset:s.fset.Position(fn.Body.Rbrace).Offset]
		}
	}
	t.Fatalf("%s has no func %s", s.fset.File(s.file.Pos()).Name(), name)
	return ""
}
