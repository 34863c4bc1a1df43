package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/gtrain/gtrain/daemon"
	"github.com/gtrain/gtrain/internal/refdoc"
)

// TestReferenceCommands holds the reference's gtraind section to the
// command tree: a command or flag added without regenerating the document
// fails.
func TestReferenceCommands(t *testing.T) {
	refdoc.Check(t, "gtraind-commands", refdoc.Commands(newRoot(), "###"))
}

// exitCauses are the errors exitCode tests for, by the name main.go uses,
// with an example and what it means to an operator; the test reads the
// names from the source, so a cause added without an entry here fails.
var exitCauses = map[string]struct {
	err     error
	meaning string
}{
	"errUsage":                {fmt.Errorf("%w: bad flag", errUsage), "a rejected command line"},
	"daemon.ErrNodeNameTaken": {daemon.ErrNodeNameTaken, "`--node-name` is held by a live agent"},
	"daemon.ErrDataDirInUse":  {daemon.ErrDataDirInUse, "`--data-dir` is locked by another agent"},
	"lostContactError":        {lostContactError{errors.New("lost etcd")}, "a role lost etcd, its lease or its master; its agent restarts it without counting a crash"},
}

// TestReferenceExitCodes documents, from exitCode itself, the status of
// every cause main.go's exitCode names.
func TestReferenceExitCodes(t *testing.T) {
	var b strings.Builder
	b.WriteString("| exit | when |\n|---|---|\n")
	fmt.Fprintf(&b, "| %d | success (an agent stopped by SIGINT or SIGTERM too) |\n", exitCode(nil))
	for _, name := range exitCodeCauses(t) {
		c, ok := exitCauses[name]
		if !ok {
			t.Fatalf("main.go's exitCode tests for %s: add it to exitCauses in reference_test.go", name)
		}
		fmt.Fprintf(&b, "| %d | %s |\n", exitCode(c.err), c.meaning)
	}
	fmt.Fprintf(&b, "| %d | any other failure |\n", exitCode(errors.New("other")))
	refdoc.Check(t, "gtraind-exit-codes", b.String())
}

// exitCodeCauses reads main.go's exitCode: the second argument of each
// errors.Is and the type of each errors.As target, in source order.
func exitCodeCauses(t *testing.T) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "exitCode" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if sel, isSel := fnSelector(call); ok && isSel && len(call.Args) == 2 && (sel == "errors.Is" || sel == "errors.As") {
				names = append(names, exprName(call.Args[1]))
			}
			return true
		})
	}
	if len(names) == 0 {
		t.Fatal("main.go: no exitCode that tests errors")
	}
	return names
}

func fnSelector(call *ast.CallExpr) (string, bool) {
	if call == nil {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	return exprName(sel), true
}

// exprName spells an identifier, a pkg.Name selector or new(T) as written.
func exprName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprName(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		if len(e.Args) == 1 {
			return exprName(e.Args[0])
		}
	}
	return fmt.Sprintf("%T", e)
}
