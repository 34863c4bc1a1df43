package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtrain/gtrain/dataset"
	"github.com/gtrain/gtrain/internal/refdoc"
	"github.com/gtrain/gtrain/jobspec"
)

// TestReferenceCommands holds the reference's gctl section to the command
// tree: a command or flag added without regenerating the document fails.
func TestReferenceCommands(t *testing.T) {
	root := newApp(io.Discard, io.Discard).rootCommand()
	refdoc.Check(t, "gctl-commands", refdoc.Commands(root, "###"))
}

// exitErrors are the values of the errors errors.go names, by the name it
// uses; the test reads the names from the source, so a cause added to
// exitCode without an entry here fails rather than going undocumented.
var exitErrors = map[string]error{
	"ErrUsage": ErrUsage, "ErrConfig": ErrConfig, "ErrJobNotSucceeded": ErrJobNotSucceeded,
	"ErrNotSupported": ErrNotSupported, "ErrBadDocument": ErrBadDocument, "ErrInterrupted": ErrInterrupted,
	"jobspec.ErrInvalidSpec": jobspec.ErrInvalidSpec, "jobspec.ErrInvalidName": jobspec.ErrInvalidName,
	"dataset.ErrBadOptions": dataset.ErrBadOptions, "dataset.ErrBadLine": dataset.ErrBadLine,
	"dataset.ErrBadIDX": dataset.ErrBadIDX, "dataset.ErrNoRecords": dataset.ErrNoRecords,
	"dataset.ErrBadGzip": dataset.ErrBadGzip, "dataset.ErrBadStats": dataset.ErrBadStats,
	"dataset.ErrStatsMismatch": dataset.ErrStatsMismatch, "dataset.ErrOtherSet": dataset.ErrOtherSet,
}

// TestReferenceExitCodes documents, from exitCode itself, the code of every
// error errors.go declares or maps and of every gRPC code it maps.
func TestReferenceExitCodes(t *testing.T) {
	names, grpcCodes := exitCauses(t)
	var b strings.Builder
	b.WriteString("| exit | cause | gctl says |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| %d | success | |\n", exitCode(nil))
	for _, name := range names {
		err, ok := exitErrors[name]
		if !ok {
			t.Fatalf("errors.go names %s: add it to exitErrors in reference_test.go", name)
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", exitCode(err), name, err)
	}
	for _, c := range grpcCodes {
		fmt.Fprintf(&b, "| %d | the agent answers gRPC `%s` | what the agent says |\n", exitCode(status.Error(c, "")), c)
	}
	fmt.Fprintf(&b, "| %d | any other error | what went wrong and what to do |\n", exitCode(errors.New("other")))
	refdoc.Check(t, "gctl-exit-codes", b.String())
}

// exitCauses reads errors.go: its package-level error variables, then the
// errors and gRPC codes that exitCode names, each once, in source order.
func exitCauses(t *testing.T) (names []string, grpcCodes []codes.Code) {
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name], names = true, append(names, name)
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if vs, ok := spec.(*ast.ValueSpec); ok && d.Tok == token.VAR {
					for _, id := range vs.Names {
						if strings.HasPrefix(id.Name, "Err") {
							add(id.Name)
						}
					}
				}
			}
		case *ast.FuncDecl:
			if d.Name.Name == "exitCode" {
				grpcCodes = exitCodeCauses(t, d.Body, add)
			}
		}
	}
	return names, grpcCodes
}

// exitCodeCauses walks exitCode's body: pkg.ErrX selectors go to add, the
// codes.X it names are returned.
func exitCodeCauses(t *testing.T, body *ast.BlockStmt, add func(string)) []codes.Code {
	var out []codes.Code
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			if strings.HasPrefix(n.Name, "Err") {
				add(n.Name)
			}
		case *ast.SelectorExpr:
			pkg, ok := n.X.(*ast.Ident)
			switch {
			case !ok:
			case pkg.Name == "codes":
				out = append(out, grpcCode(t, n.Sel.Name))
			case strings.HasPrefix(n.Sel.Name, "Err"):
				add(pkg.Name + "." + n.Sel.Name)
			}
			return false
		}
		return true
	})
	return out
}

func grpcCode(t *testing.T, name string) codes.Code {
	for c := range codes.Code(17) {
		if c.String() == name {
			return c
		}
	}
	t.Fatalf("errors.go names codes.%s, which is not a gRPC code", name)
	return 0
}
