package refdoc

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// ConstValues lists the string constants of type typeName declared in the
// Go file at path (relative to the module root), in declaration order:
// the values a document can hold, read from the code that defines them.
func ConstValues(path, typeName string) ([]string, error) {
	specs, err := valueSpecs(path, token.CONST)
	if err != nil {
		return nil, err
	}
	var values []string
	for _, vs := range specs {
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typeName {
			continue
		}
		for _, v := range vs.Values {
			if s, ok := stringLit(v); ok {
				values = append(values, s)
			}
		}
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("%s: no string constants of type %s", path, typeName)
	}
	return values, nil
}

// ValueTable renders values and their meanings; every value must have a
// meaning and every meaning a value.
func ValueTable(values []string, meanings map[string]string) (string, error) {
	fields := make([]Field, len(values))
	for i, v := range values {
		fields[i] = Field{Path: v}
	}
	if err := coverage(fields, meanings); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| value | meaning |\n|---|---|\n")
	for _, v := range values {
		fmt.Fprintf(&b, "| `%s` | %s |\n", v, cell(meanings[v]))
	}
	return b.String(), nil
}

// PackageDocBlock returns the first indented block (a code block in Go doc
// comments) of the package comment in the Go file at path.
func PackageDocBlock(path string) (string, error) {
	f, err := parseFile(path, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err
	}
	if f.Doc == nil {
		return "", fmt.Errorf("%s: no package comment", path)
	}
	var block []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		switch {
		case strings.HasPrefix(line, "\t"):
			block = append(block, strings.TrimPrefix(line, "\t"))
		case len(block) > 0 && line == "":
			block = append(block, "")
		case len(block) > 0:
			return strings.TrimRight(strings.Join(block, "\n"), "\n") + "\n", nil
		}
	}
	if len(block) == 0 {
		return "", fmt.Errorf("%s: the package comment has no indented block", path)
	}
	return strings.TrimRight(strings.Join(block, "\n"), "\n") + "\n", nil
}

// valueSpecs lists the package-level const or var specs of a Go file.
func valueSpecs(path string, tok token.Token) ([]*ast.ValueSpec, error) {
	f, err := parseFile(path, 0)
	if err != nil {
		return nil, err
	}
	var out []*ast.ValueSpec
	for _, decl := range f.Decls {
		if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == tok {
			for _, spec := range gen.Specs {
				out = append(out, spec.(*ast.ValueSpec))
			}
		}
	}
	return out, nil
}

func parseFile(path string, mode parser.Mode) (*ast.File, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	return parser.ParseFile(token.NewFileSet(), filepath.Join(root, path), nil, mode)
}
