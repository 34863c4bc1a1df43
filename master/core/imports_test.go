package core

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// coreMayImport is what the pure core may import besides the standard
// library: record and message types and pure helpers, no client, no IO.
var coreMayImport = map[string]bool{
	"github.com/gtrain/gtrain/api":          true, // message types
	"github.com/gtrain/gtrain/coord/schema": true, // record types (schema.ProgressRecord), no client
	"github.com/gtrain/gtrain/dataset":      true, // dataset.RecordOrder
	"github.com/gtrain/gtrain/jobspec":      true, // defaults and names
}

// TestCoreImportsNoIO: the package's own files import nothing but the
// standard library's pure parts and coreMayImport: an etcd or gRPC client,
// a socket or a file here would end the core's testing without IO.
func TestCoreImportsNoIO(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"net", "os", "os/exec", "io/fs", "syscall", "go.etcd.io/", "google.golang.org/grpc"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, ".") && !coreMayImport[path] {
				t.Errorf("%s imports %s: only the standard library and %v may be imported here", f, path, coreMayImport)
			}
			for _, b := range banned {
				if path == strings.TrimSuffix(b, "/") || strings.HasPrefix(path, strings.TrimSuffix(b, "/")+"/") {
					t.Errorf("%s imports %s: the core does no IO (move it to package master)", f, path)
				}
			}
		}
	}
}
