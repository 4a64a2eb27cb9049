package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportedIdentifiersHaveDocComments walks the module from its root. A
// field counts as documented when a comment of its struct names it (fields
// documented as a group: "Period and PeriodDone are ...").
func TestExportedIdentifiersHaveDocComments(t *testing.T) {
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name != ".." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Name.Name != "main" {
			for _, miss := range undocumented(f) {
				t.Errorf("%s: exported %s has no doc comment", fset.Position(miss.Pos()), miss.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// undocumented returns the exported identifiers in f with no doc comment.
func undocumented(f *ast.File) []*ast.Ident {
	var miss []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && d.Doc == nil && exportedReceiver(d) {
				miss = append(miss, d.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if d.Doc == nil && s.Doc == nil {
						miss = append(miss, s.Name)
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						miss = append(miss, undocumentedFields(st)...)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
							miss = append(miss, n)
						}
					}
				}
			}
		}
	}
	return miss
}

func exportedReceiver(fn *ast.FuncDecl) bool {
	if fn.Recv == nil {
		return true
	}
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func undocumentedFields(st *ast.StructType) []*ast.Ident {
	var docs strings.Builder
	for _, fl := range st.Fields.List {
		for _, c := range []*ast.CommentGroup{fl.Doc, fl.Comment} {
			if c != nil {
				docs.WriteString(c.Text())
			}
		}
	}
	var miss []*ast.Ident
	for _, fl := range st.Fields.List {
		for _, n := range fl.Names {
			if n.IsExported() && fl.Doc == nil && fl.Comment == nil && !strings.Contains(docs.String(), n.Name) {
				miss = append(miss, n)
			}
		}
	}
	return miss
}
