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
	return FreePorts(t, 1)[0]
}

// FreePorts is n distinct loopback addresses whose ports were free a moment
// ago. Every port is held until all are chosen: taken one by one, each
// released before the next, the kernel may hand the same port out twice
// (seen: an agent's control API and its etcd given one port, "bind:
// address already in use").
func FreePorts(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
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
