package e2erig

import (
	"net"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gtrain/gtrain/dataset"
)

// RepoRoot is the repository's root: three levels above this file.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// FreePort is a loopback address whose port was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Housing converts the bundled UCI housing data as the check does.
func Housing(t testing.TB, dir string) *dataset.ConvertResult {
	t.Helper()
	res, err := dataset.Convert(dataset.ConvertOptions{Format: "whitespace",
		Input:     filepath.Join(RepoRoot(), "examples/data/uci_housing/housing.data"),
		OutPrefix: filepath.Join(dir, "housing"), Shards: 4, TestFraction: 0.2, Seed: 1, Normalize: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
